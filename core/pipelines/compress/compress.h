#pragma once
// Package compress is the one opinion about zstd this repo holds: which level (3), how a
// stream is framed (one zstd frame, checksummed), and how decompression is bounded (a maximum
// output size, so a small stream cannot expand into a disk- or memory-filling bomb).
//
// Threading: the devices and functions hold no shared state; one device per thread.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QIODevice>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace pando::core {

inline constexpr int kZstdDefaultLevel = 3;
// The default bound on what one stream may expand to.
inline constexpr qint64 kZstdDefaultMaxOutput = 64LL * 1024 * 1024 * 1024;

// A write-only sequential device: what is written to it is compressed into `sink`. finish()
// (or close()) ends the frame; bytes written after it are refused.
class ZstdCompressDevice : public QIODevice {
    Q_OBJECT
public:
    explicit ZstdCompressDevice(QIODevice *sink, int level = kZstdDefaultLevel, QObject *parent = nullptr);
    ~ZstdCompressDevice() override;

    bool isSequential() const override { return true; }
    void close() override;
    // Ends the zstd frame and writes its last bytes into the sink.
    Status finish();
    qint64 bytesIn() const { return m_in; }
    qint64 bytesOut() const { return m_out; }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 len) override;

private:
    bool drain(int mode, const char *data, qint64 len);

    QIODevice *m_sink;
    ZSTD_CCtx_s *m_ctx = nullptr;
    QByteArray m_outBuf;
    qint64 m_in = 0;
    qint64 m_out = 0;
    bool m_finished = false;
};

// A read-only sequential device that decompresses what it reads from `source`. read() gives
// 0 at the clean end of the stream and -1 with errorString() set on corrupt or truncated
// input or when the output would pass maxOutput.
class ZstdDecompressDevice : public QIODevice {
    Q_OBJECT
public:
    explicit ZstdDecompressDevice(QIODevice *source, qint64 maxOutput = kZstdDefaultMaxOutput,
                                  QObject *parent = nullptr);
    ~ZstdDecompressDevice() override;

    bool isSequential() const override { return true; }
    bool atEnd() const override { return m_ended && QIODevice::atEnd(); }
    qint64 bytesOut() const { return m_out; }

protected:
    qint64 readData(char *data, qint64 maxlen) override;
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    QIODevice *m_source;
    ZSTD_DCtx_s *m_ctx = nullptr;
    qint64 m_maxOutput;
    QByteArray m_inBuf;
    qint64 m_inPos = 0;
    qint64 m_inSize = 0;
    qint64 m_out = 0;
    bool m_sourceEnded = false;
    bool m_frameDone = true; // no frame started yet
    bool m_ended = false;
    bool m_failed = false;
};

Result<QByteArray> zstdCompress(QByteArrayView data, int level = kZstdDefaultLevel);
Result<QByteArray> zstdDecompress(QByteArrayView data, qint64 maxOutput = kZstdDefaultMaxOutput);

} // namespace pando::core
