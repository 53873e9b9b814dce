// The local blob store: ids are content hashes, puts are atomic, reads verify, gc keeps only
// what it is told to; step trees go in and out as zstd-compressed wire tars, bombs refused.
// Set PANDO_BENCH=1 for the throughput measurement (pack+compress of 100 MB, restore of 1000 files).

#include "core/pipelines/blobstore/blobstore.h"
#include "core/pipelines/compress/compress.h"
#include "core/pipelines/treedigest/treedigest.h"
#include "core/pipelines/wire/treefs.h"
#include "core/pipelines/wire/wire.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

using namespace pando;
using namespace pando::core;
using namespace Qt::StringLiterals;

namespace {

void put(const QString &path, const QByteArray &data, mode_t mode = 0644)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
    f.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode), 0);
}

QString sha(const QByteArray &data)
{
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

QStringList listing(const QString &dir)
{
    QStringList out;
    if (auto entries = walkTree(dir)) {
        for (const TreeEntry &e : *entries)
            out << QString::fromUtf8(e.path);
    }
    return out;
}

} // namespace

class TestBlobStore : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void putGetHasRemove();
    void badIdsAreRefused();
    void putIsAtomic();
    void corruptionIsFoundOnRead();
    void gcKeepsOnlyTheKeepSet();
    void storeAndRestoreTree();
    void restoreRefusesBombs();
    void benchmark();
};

void TestBlobStore::putGetHasRemove()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.filePath(u"store"_s));
    const QByteArray data = "some content\n";
    auto id = store.put(data);
    QVERIFY(id);
    QCOMPARE(*id, sha(data));
    QVERIFY(store.has(*id));
    QCOMPARE(*store.read(*id), data);
    QCOMPARE(*store.size(*id), qint64(data.size()));
    QCOMPARE(*store.put(data), *id); // same content, same blob
    auto id2 = store.put(QByteArray("other"));
    QVERIFY(id2);
    QCOMPARE(*store.totalSize(), qint64(data.size() + 5));
    QVERIFY(store.remove(*id));
    QVERIFY(!store.has(*id));
    QCOMPARE(store.read(*id).error().code, ErrorCode::NotFound);
    QCOMPARE(store.remove(*id).error().code, ErrorCode::NotFound);
    QVERIFY(store.has(*id2));

    QFile f(tmp.filePath(u"input"_s));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(1'000'000, 'q'));
    f.close();
    QVERIFY(f.open(QIODevice::ReadOnly));
    auto id3 = store.put(&f);
    QVERIFY(id3);
    QCOMPARE(*id3, sha(QByteArray(1'000'000, 'q')));
}

void TestBlobStore::badIdsAreRefused()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.path());
    for (const QString &bad :
         QStringList{u"../../etc/passwd"_s, QString(64, u'A'), QString(63, u'a'), u""_s, QString(62, u'a') + u"/x"_s}) {
        QVERIFY(!store.has(bad));
        QCOMPARE(store.open(bad).error().code, ErrorCode::Invalid);
        QCOMPARE(store.remove(bad).error().code, ErrorCode::Invalid);
    }
}

void TestBlobStore::putIsAtomic()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.path());
    const QByteArray data(300'000, 'x');
    const QString id = sha(data);
    {
        auto w = store.writer();
        QVERIFY(w);
        (*w)->write(data.left(1000));
        // Half-written: nothing under the id, nothing in the blob tree.
        QVERIFY(!store.has(id));
        QVERIFY(listing(tmp.filePath(u"blobs"_s)).isEmpty());
        (*w)->write(data.mid(1000));
        QVERIFY(!store.has(id));
        auto committed = (*w)->commit();
        QVERIFY(committed);
        QCOMPARE(*committed, id);
    }
    QVERIFY(store.has(id));
    QCOMPARE(*store.read(id), data);
    {
        auto w = store.writer();
        (*w)->write("abandoned");
    }
    // A writer dropped without commit leaves no temp file and no blob.
    QCOMPARE(QDir(tmp.filePath(u"tmp"_s)).entryList(QDir::Files | QDir::Hidden), QStringList());
    QVERIFY(!store.has(sha("abandoned")));
}

void TestBlobStore::corruptionIsFoundOnRead()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.path());
    auto id = store.put(QByteArray("original content"));
    QVERIFY(id);
    const QString path = *store.path(*id);
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    put(path, "tampered content");
    auto r = store.read(*id);
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(u"corrupt"_s), qPrintable(r.error().text()));
}

void TestBlobStore::gcKeepsOnlyTheKeepSet()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.path());
    const QString a = *store.put(QByteArray("a"));
    const QString b = *store.put(QByteArray("bb"));
    const QString c = *store.put(QByteArray("ccc"));
    // An abandoned temp file from a crashed put, and a fresh one of a put in progress.
    put(tmp.filePath(u"tmp/put-old"_s), "old");
    struct utimbuf old {
        1'000'000, 1'000'000
    };
    QCOMPARE(::utime(QFile::encodeName(tmp.filePath(u"tmp/put-old"_s)).constData(), &old), 0);
    auto w = store.writer();
    (*w)->write("in progress");
    auto stats = store.gc({b});
    QVERIFY(stats);
    QCOMPARE(stats->removed, qint64(2));
    QCOMPARE(stats->removedBytes, qint64(4));
    QCOMPARE(stats->kept, qint64(1));
    QVERIFY(!store.has(a));
    QVERIFY(store.has(b));
    QVERIFY(!store.has(c));
    QVERIFY(!QFileInfo::exists(tmp.filePath(u"tmp/put-old"_s)));
    QCOMPARE(*(*w)->commit(), sha("in progress"));
}

void TestBlobStore::storeAndRestoreTree()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.filePath(u"store"_s));
    const QString src = tmp.filePath(u"src"_s);
    put(src + u"/bin/tool"_s, "#!/bin/sh\n", 0755);
    put(src + u"/data/a file.txt"_s, QByteArray("text ").repeated(10000));
    QDir().mkpath(src + u"/empty"_s);
    QVERIFY(QFile::link(u"/etc/passwd"_s, src + u"/passwd-link"_s));
    auto id = store.storeTree(src);
    QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
    QCOMPARE(*store.storeTree(src), *id); // deterministic
    const QString dest = tmp.filePath(u"restored"_s);
    auto stats = store.restoreTree(*id, dest);
    QVERIFY2(stats, qPrintable(stats ? QString() : stats.error().text()));
    QCOMPARE(*treeDigest(dest), *treeDigest(src));
    QVERIFY(QFileInfo(dest + u"/passwd-link"_s).isSymLink());
    // A second restore onto the populated tree is refused and leaves it alone.
    auto again = store.restoreTree(*id, dest);
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Conflict);
    QCOMPARE(*treeDigest(dest), *treeDigest(src));
}

void TestBlobStore::restoreRefusesBombs()
{
    QTemporaryDir tmp;
    BlobStore store(tmp.filePath(u"store"_s));
    const QString parent = tmp.filePath(u"parent"_s);
    put(parent + u"/canary"_s, "canary");

    // 1 GiB of zeros as one zstd frame: not a tar, and far more than a tar's trailer.
    auto w = store.writer();
    {
        ZstdCompressDevice zstd(w->get(), 1);
        const QByteArray zeros(4 * 1024 * 1024, '\0');
        for (int i = 0; i < 256; ++i)
            zstd.write(zeros);
        QVERIFY(zstd.finish());
    }
    const QString zerosId = *(*w)->commit();
    QElapsedTimer timer;
    timer.start();
    auto r = store.restoreTree(zerosId, parent + u"/dest"_s);
    QVERIFY(!r);
    qInfo().noquote() << "zero bomb:" << r.error().text();
    QVERIFY(timer.elapsed() < 10'000);
    QCOMPARE(listing(parent), QStringList{u"canary"_s});

    // A real tar of a 256 MiB (sparse) file: its declared size is over the caller's limit.
    const QString src = tmp.filePath(u"src"_s);
    QDir().mkpath(src);
    {
        QFile f(src + u"/huge"_s);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QVERIFY(f.resize(256LL * 1024 * 1024));
    }
    auto hugeId = store.storeTree(src);
    QVERIFY(hugeId);
    QVERIFY(*store.size(*hugeId) < 1024 * 1024);
    WireLimits limits;
    limits.maxTotalBytes = 16 * 1024 * 1024;
    r = store.restoreTree(*hugeId, parent + u"/dest"_s, limits);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::TooLarge);
    QCOMPARE(r.error().where, u"huge"_s);
    QCOMPARE(listing(parent), QStringList{u"canary"_s});
    QVERIFY(store.restoreTree(*hugeId, parent + u"/dest"_s)); // within the default limits
}

void TestBlobStore::benchmark()
{
    if (qEnvironmentVariableIsEmpty("PANDO_BENCH"))
        QSKIP("set PANDO_BENCH=1 to measure");
    QTemporaryDir tmp;
    BlobStore store(tmp.filePath(u"store"_s));
    // 100 MB of mixed files: source-like text, compressible binaries, incompressible noise.
    const QString big = tmp.filePath(u"big"_s);
    qint64 total = 0;
    quint64 x = 42;
    int n = 0;
    while (total < 100LL * 1000 * 1000) {
        qsizetype size = (n % 10 == 0) ? 2 * 1024 * 1024 : (n % 3 == 0 ? 200'000 : 8'000);
        QByteArray data(size, Qt::Uninitialized);
        for (qsizetype i = 0; i < size; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            data[i] = (n % 4 == 0) ? char(x >> 56) : char("the quick brown fox jumps\n"[(i + (x >> 60)) % 26]);
        }
        put(big + u"/d%1/f%2"_s.arg(n % 50).arg(n), data, n % 5 ? 0644 : 0755);
        total += size;
        ++n;
    }
    QElapsedTimer t;
    t.start();
    qint64 tarBytes = 0;
    QVERIFY(packTree(big, [&tarBytes](QByteArrayView d) -> Status {
        tarBytes += d.size();
        return {};
    }));
    qInfo().noquote() << QStringLiteral("pack alone: %1 MB/s").arg(total / 1e6 / (t.nsecsElapsed() / 1e9), 0, 'f', 1);
    t.restart();
    {
        QFile null(u"/dev/null"_s);
        QVERIFY(null.open(QIODevice::WriteOnly));
        ZstdCompressDevice zstd(&null);
        QVERIFY(packTree(big, &zstd));
        QVERIFY(zstd.finish());
    }
    qInfo().noquote()
        << QStringLiteral("pack+compress: %1 MB/s").arg(total / 1e6 / (t.nsecsElapsed() / 1e9), 0, 'f', 1);
    t.restart();
    auto id = store.storeTree(big);
    QVERIFY(id);
    const double secs = t.nsecsElapsed() / 1e9;
    qInfo().noquote() << QStringLiteral("pack+compress+put: %1 files, %2 MB in %3 s = %4 MB/s, blob %5 MB")
                             .arg(n)
                             .arg(total / 1e6, 0, 'f', 1)
                             .arg(secs, 0, 'f', 3)
                             .arg(total / 1e6 / secs, 0, 'f', 1)
                             .arg(*store.size(*id) / 1e6, 0, 'f', 1);
    t.restart();
    QVERIFY(store.restoreTree(*id, tmp.filePath(u"big-restored"_s)));
    qInfo().noquote() << QStringLiteral("restore 100 MB: %1 ms").arg(t.elapsed());

    const QString small = tmp.filePath(u"small"_s);
    for (int i = 0; i < 1000; ++i)
        put(small + u"/dir%1/file%2.txt"_s.arg(i % 20).arg(i), QByteArray("line of text\n").repeated(i % 100 + 1));
    auto smallId = store.storeTree(small);
    QVERIFY(smallId);
    t.restart();
    QVERIFY(store.restoreTree(*smallId, tmp.filePath(u"small-restored"_s)));
    qInfo().noquote() << QStringLiteral("restore 1000-file tree: %1 ms").arg(t.nsecsElapsed() / 1e6, 0, 'f', 1);
    t.restart();
    auto digest = treeDigest(small);
    QVERIFY(digest);
    qInfo().noquote()
        << QStringLiteral("tree digest of the 1000-file tree: %1 ms").arg(t.nsecsElapsed() / 1e6, 0, 'f', 1);
}

QTEST_GUILESS_MAIN(TestBlobStore)
#include "tst_blobstore.moc"
