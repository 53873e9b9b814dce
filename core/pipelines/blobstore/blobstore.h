#pragma once
// Package blobstore is the local content-addressed store for step outputs: a blob's id is the
// SHA-256 of its bytes, a put becomes visible under its id only once complete (written to a
// temp file, then renamed), and reads verify the content against the id. Step outputs are kept
// as zstd-compressed tars of the wire codec: storeTree() and restoreTree().
//
// Threading: a BlobStore holds only its root path; any number of instances and threads may use
// one root at once (puts of the same content race harmlessly to the same file).

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "core/pipelines/wire/wire.h"

#include <QCryptographicHash>
#include <QIODevice>
#include <QSet>
#include <QString>
#include <memory>

namespace pando::core {

// A put in progress: write the content, then commit() for its id. Destroyed without a
// commit, it leaves nothing behind.
class BlobWriter : public QIODevice {
    Q_OBJECT
public:
    ~BlobWriter() override;
    bool isSequential() const override { return true; }
    Result<QString> commit();
    qint64 bytesWritten() const { return m_size; }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 len) override;

private:
    friend class BlobStore;
    BlobWriter(QString storeRoot, int fd, QByteArray tmpPath);
    void discard();

    QString m_root;
    int m_fd = -1;
    QByteArray m_tmpPath;
    QCryptographicHash m_hash{QCryptographicHash::Sha256};
    qint64 m_size = 0;
};

struct BlobGcStats {
    qint64 removed = 0;
    qint64 removedBytes = 0;
    qint64 kept = 0;
    qint64 keptBytes = 0;
};

class BlobStore {
public:
    // root is created on first use.
    explicit BlobStore(QString root);

    const QString &root() const { return m_root; }
    static bool isValidId(const QString &id); // 64 lowercase hex digits

    Result<std::unique_ptr<BlobWriter>> writer() const;
    Result<QString> put(QIODevice *in, const CancelToken &cancel = {}) const;
    Result<QString> put(QByteArrayView data) const;

    bool has(const QString &id) const;
    // The blob's file, for callers that hand it to something else; do not write to it.
    Result<QString> path(const QString &id) const;
    // A read-only device over the blob that fails the read reaching the end if the content does
    // not hash to the id.
    Result<std::unique_ptr<QIODevice>> open(const QString &id) const;
    Result<QByteArray> read(const QString &id) const;
    Result<qint64> size(const QString &id) const;
    Status remove(const QString &id) const;

    // Bytes held by all blobs.
    Result<qint64> totalSize() const;
    // Removes every blob not in keep, and abandoned temp files older than tmpMaxAgeMs.
    Result<BlobGcStats> gc(const QSet<QString> &keep, qint64 tmpMaxAgeMs = 3'600'000) const;

    // Packs dir (wire), compresses it (zstd) and puts the result; returns the blob id.
    Result<QString> storeTree(const QString &dir, const CancelToken &cancel = {}) const;
    // Gets the blob, decompresses and unpacks it into dest under the wire codec's rules (dest
    // absent or empty; nothing left behind on error), limits against bombs.
    Result<UnpackStats> restoreTree(const QString &id, const QString &dest, const WireLimits &limits = {},
                                    const CancelToken &cancel = {}) const;

private:
    QString blobPath(const QString &id) const;
    Status ensureDirs() const;

    QString m_root;
};

} // namespace pando::core
