// The tree codec: a round trip keeps content, modes and symlinks and gives the same bytes for
// the same tree; malicious streams are refused with the entry named and nothing written
// outside the destination, not even a half-unpacked tree.

#include "core/pipelines/wire/treefs.h"
#include "core/pipelines/wire/wire.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace pando;
using namespace pando::core;
using namespace Qt::StringLiterals;

namespace {

struct TarEntry {
    QByteArray name;
    mode_t type = AE_IFREG;
    QByteArray data;     // file content
    QByteArray target;   // symlink target
    QByteArray hardlink; // hardlink target
    mode_t perm = 0644;
};

la_ssize_t appendTo(archive *, void *client, const void *buf, size_t n)
{
    static_cast<QByteArray *>(client)->append(static_cast<const char *>(buf), qsizetype(n));
    return la_ssize_t(n);
}

// Builds a tar with libarchive's writer, which writes whatever it is told: this is how an
// attacker's stream looks.
QByteArray buildTar(const QList<TarEntry> &entries)
{
    QByteArray out;
    archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_open(a, &out, nullptr, appendTo, nullptr);
    for (const TarEntry &t : entries) {
        archive_entry *e = archive_entry_new();
        archive_entry_copy_pathname(e, t.name.constData());
        archive_entry_set_filetype(e, t.type);
        archive_entry_set_perm(e, t.perm);
        if (!t.hardlink.isEmpty())
            archive_entry_copy_hardlink(e, t.hardlink.constData());
        if (t.type == AE_IFLNK)
            archive_entry_copy_symlink(e, t.target.constData());
        if (t.type == AE_IFCHR)
            archive_entry_set_rdev(e, makedev(1, 3));
        if (t.type == AE_IFREG)
            archive_entry_set_size(e, t.data.size());
        archive_write_header(a, e);
        if (t.type == AE_IFREG && !t.data.isEmpty())
            archive_write_data(a, t.data.constData(), size_t(t.data.size()));
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return out;
}

// A ustar header by hand, for what libarchive's writer would not produce (a size with no data).
QByteArray ustarHeader(const QByteArray &name, qint64 size, char type = '0')
{
    QByteArray h(512, '\0');
    auto put = [&h](int offset, const QByteArray &value) {
        std::memcpy(h.data() + offset, value.constData(), value.size());
    };
    put(0, name.left(100));
    put(100, "0000644");
    put(108, "0000000");
    put(116, "0000000");
    put(124, QByteArray::number(size, 8).rightJustified(11, '0'));
    put(136, "00000000000");
    h[156] = type;
    put(257, "ustar");
    put(263, "00");
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char c : h)
        sum += static_cast<unsigned char>(c);
    put(148, QByteArray::number(sum, 8).rightJustified(6, '0'));
    h[154] = '\0';
    return h;
}

void writeFile(const QString &path, const QByteArray &data, QFile::Permissions perms = {})
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
    f.close();
    if (perms)
        f.setPermissions(perms);
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// A listing of everything below dir, with contents, to compare before and after.
QStringList snapshot(const QString &dir)
{
    QStringList lines;
    auto entries = walkTree(dir);
    if (!entries)
        return {QStringLiteral("error: ") + entries.error().text()};
    for (const TreeEntry &e : *entries) {
        QString line = QString::fromUtf8(e.path) + u' ' + QString::number(int(e.type)) + u' ' +
                       QString::number(e.mode, 8) + u' ' + QString::fromUtf8(e.target);
        if (e.type == TreeEntry::Type::File)
            line += u' ' + QString::fromLatin1(readAll(dir + u'/' + QString::fromUtf8(e.path)).toHex());
        lines << line;
    }
    return lines;
}

Result<QByteArray> pack(const QString &dir)
{
    QByteArray out;
    QBuffer buf(&out);
    buf.open(QIODevice::WriteOnly);
    if (auto st = packTree(dir, &buf); !st)
        return std::unexpected(st.error());
    return out;
}

Result<UnpackStats> unpack(const QByteArray &tar, const QString &dest, const WireLimits &limits = {})
{
    QByteArray copy = tar;
    QBuffer buf(&copy);
    buf.open(QIODevice::ReadOnly);
    return unpackTree(&buf, dest, limits);
}

const QByteArray kOutsideAbsolute = "/etc/pando-wire-test-evil";

// The malicious rows point at a canary in this directory, so it is known when the rows are built.
QString testRoot()
{
    return QDir::tempPath() + QStringLiteral("/pando-wire-test-") + QString::number(::getpid());
}
QByteArray parentBytes()
{
    return QFile::encodeName(testRoot() + QStringLiteral("/parent"));
}

} // namespace

class TestWire : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTripKeepsEverything();
    void identicalTreesGiveIdenticalBytes();
    void packRefusesSpecialFiles();
    void packDoesNotFollowSymlinkedRoot();
    void unpackIntoEmptyDirectory();
    void unpackRefusesNonEmptyDestination();
    void maliciousStreamsAreRefused_data();
    void maliciousStreamsAreRefused();
    void setuidBitsAreStripped();
    void truncatedStreamIsRefused();
};

static void makeSampleTree(const QString &root)
{
    writeFile(root + QStringLiteral("/README"), "hello\n");
    writeFile(root + QStringLiteral("/bin/run.sh"), "#!/bin/sh\necho hi\n",
              QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup |
                  QFile::ReadOther | QFile::ExeOther);
    writeFile(root + QStringLiteral("/secret/key"), "private", QFile::ReadOwner | QFile::WriteOwner);
    writeFile(root + QStringLiteral("/with space/file name.txt"), "spaces");
    writeFile(root + QStringLiteral("/unicodé/ñ.txt"), "utf8");
    writeFile(root + QStringLiteral("/empty-file"), "");
    QByteArray big(3 * 1024 * 1024 + 17, '\0');
    for (qsizetype i = 0; i < big.size(); ++i)
        big[i] = char((i * 7919) % 251);
    writeFile(root + QStringLiteral("/data/big.bin"), big);
    const QString longDir = root + u'/' + QString(120, u'd') + u'/' + QString(150, u'e');
    writeFile(longDir + u'/' + QString(200, u'f'), "long names");
    QDir().mkpath(root + QStringLiteral("/empty/dir"));
    QVERIFY(QFile::link(QStringLiteral("../README"), root + QStringLiteral("/bin/readme-link")));
    QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), root + QStringLiteral("/abs-link")));
    QVERIFY(::symlink("dangling/target", QFile::encodeName(root + QStringLiteral("/dangling")).constData()) == 0);
    QVERIFY(::link(QFile::encodeName(root + QStringLiteral("/README")).constData(),
                   QFile::encodeName(root + QStringLiteral("/hardlinked")).constData()) == 0);
    QDir().mkpath(root + QStringLiteral("/ro"));
    writeFile(root + QStringLiteral("/ro/inside"), "in a read-only dir");
    QVERIFY(::chmod(QFile::encodeName(root + QStringLiteral("/ro")).constData(), 0555) == 0);
}

void TestWire::roundTripKeepsEverything()
{
    QTemporaryDir tmp;
    const QString src = tmp.filePath(QStringLiteral("src"));
    makeSampleTree(src);
    auto tar = pack(src);
    QVERIFY2(tar, qPrintable(tar ? QString() : tar.error().text()));
    const QString dest = tmp.filePath(QStringLiteral("dest"));
    auto stats = unpack(*tar, dest);
    QVERIFY2(stats, qPrintable(stats ? QString() : stats.error().text()));
    QCOMPARE(snapshot(dest), snapshot(src));
    QFileInfo link(dest + QStringLiteral("/abs-link"));
    QVERIFY(link.isSymLink());
    QCOMPARE(link.symLinkTarget(), QStringLiteral("/etc/passwd"));
    struct stat st {};
    QCOMPARE(::lstat(QFile::encodeName(dest + QStringLiteral("/hardlinked")).constData(), &st), 0);
    QCOMPARE(int(st.st_nlink), 1); // stored as its own file
    QCOMPARE(st.st_mode & 0777, mode_t(0644));
    QCOMPARE(::lstat(QFile::encodeName(dest + QStringLiteral("/bin/run.sh")).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0755));
    QCOMPARE(::lstat(QFile::encodeName(dest + QStringLiteral("/ro")).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0555));
    QVERIFY(removeTree(tmp.path()));
}

void TestWire::identicalTreesGiveIdenticalBytes()
{
    QTemporaryDir tmp;
    makeSampleTree(tmp.filePath(QStringLiteral("one")));
    QTest::qSleep(1100); // different mtimes; they must not show
    makeSampleTree(tmp.filePath(QStringLiteral("two")));
    auto a = pack(tmp.filePath(QStringLiteral("one")));
    auto b = pack(tmp.filePath(QStringLiteral("two")));
    auto c = pack(tmp.filePath(QStringLiteral("one")));
    QVERIFY(a && b && c);
    QCOMPARE(a->size(), b->size());
    QVERIFY(*a == *b);
    QVERIFY(*a == *c);
    QVERIFY(!a->contains("root")); // no owner names
    QVERIFY(removeTree(tmp.path()));
}

void TestWire::packRefusesSpecialFiles()
{
    QTemporaryDir tmp;
    writeFile(tmp.filePath(QStringLiteral("ok")), "x");
    QCOMPARE(::mkfifo(QFile::encodeName(tmp.filePath(QStringLiteral("sub/a fifo"))).constData(), 0644), -1);
    QDir().mkpath(tmp.filePath(QStringLiteral("sub")));
    QCOMPARE(::mkfifo(QFile::encodeName(tmp.filePath(QStringLiteral("sub/a fifo"))).constData(), 0644), 0);
    auto tar = pack(tmp.path());
    QVERIFY(!tar);
    QVERIFY2(tar.error().where.endsWith(QStringLiteral("sub/a fifo")), qPrintable(tar.error().text()));
}

void TestWire::packDoesNotFollowSymlinkedRoot()
{
    // A symlink inside the tree that points at a directory is packed as a link, not a copy.
    QTemporaryDir tmp;
    writeFile(tmp.filePath(QStringLiteral("outside/secret")), "secret");
    const QString src = tmp.filePath(QStringLiteral("src"));
    QDir().mkpath(src);
    QVERIFY(QFile::link(tmp.filePath(QStringLiteral("outside")), src + QStringLiteral("/escape")));
    auto tar = pack(src);
    QVERIFY(tar);
    QVERIFY(!tar->contains("secret"));
}

void TestWire::unpackIntoEmptyDirectory()
{
    QTemporaryDir tmp;
    const QString dest = tmp.filePath(QStringLiteral("dest"));
    QDir().mkpath(dest);
    auto r = unpack(buildTar({{"a/b.txt", AE_IFREG, "b"}}), dest);
    QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
    QCOMPARE(readAll(dest + QStringLiteral("/a/b.txt")), QByteArray("b"));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList{QStringLiteral("dest")});
}

void TestWire::unpackRefusesNonEmptyDestination()
{
    QTemporaryDir tmp;
    const QString dest = tmp.filePath(QStringLiteral("dest"));
    writeFile(dest + QStringLiteral("/old"), "old");
    auto r = unpack(buildTar({{"a", AE_IFREG, "a"}}), dest);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Conflict);
    QCOMPARE(readAll(dest + QStringLiteral("/old")), QByteArray("old"));
}

void TestWire::maliciousStreamsAreRefused_data()
{
    QTest::addColumn<QByteArray>("tar");
    QTest::addColumn<QString>("named");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<qint64>("maxEntries");
    const TarEntry ok{"ok.txt", AE_IFREG, "fine"};
    const qint64 big = WireLimits{}.maxTotalBytes;
    const qint64 many = WireLimits{}.maxEntries;
    QTest::newRow("dotdot") << buildTar({ok, {"../evil", AE_IFREG, "x"}}) << u"../evil"_s << big << many;
    QTest::newRow("absolute canary") << buildTar({ok, {parentBytes() + "/canary", AE_IFREG, "overwritten"}})
                                     << u"/canary"_s << big << many;
    QTest::newRow("absolute etc") << buildTar({ok, {kOutsideAbsolute, AE_IFREG, "x"}})
                                  << QString::fromLatin1(kOutsideAbsolute) << big << many;
    QTest::newRow("nested dotdot") << buildTar({ok, {"a/../../evil", AE_IFREG, "x"}}) << u"a/../../evil"_s << big
                                   << many;
    QTest::newRow("symlink then through it")
        << buildTar({ok, {"link", AE_IFLNK, {}, parentBytes()}, {"link/evil", AE_IFREG, "x"}}) << u"link/evil"_s << big
        << many;
    QTest::newRow("symlink to /tmp then through it")
        << buildTar({{"link", AE_IFLNK, {}, "/tmp"}, {"link/pando-wire-evil", AE_IFREG, "x"}})
        << u"link/pando-wire-evil"_s << big << many;
    QTest::newRow("symlink to dotdot then through it")
        << buildTar({ok, {"up", AE_IFLNK, {}, ".."}, {"up/evil", AE_IFREG, "x"}}) << u"up/evil"_s << big << many;
    QTest::newRow("deep symlink then dir through it")
        << buildTar({{"d/up", AE_IFLNK, {}, "../.."}, {"d/up/evil/", AE_IFDIR}}) << u"d/up/evil"_s << big << many;
    QTest::newRow("symlink replaced by file")
        << buildTar({ok, {"s", AE_IFLNK, {}, parentBytes() + "/canary"}, {"s", AE_IFREG, "overwritten"}}) << u"s"_s
        << big << many;
    QTest::newRow("file replaced by file")
        << buildTar({ok, {"ok.txt", AE_IFREG, "again"}}) << u"ok.txt"_s << big << many;
    QTest::newRow("file then through it")
        << buildTar({ok, {"ok.txt/x", AE_IFREG, "x"}}) << u"ok.txt/x"_s << big << many;
    QTest::newRow("hardlink to passwd") << buildTar({ok, {"pw", AE_IFREG, {}, {}, "/etc/passwd"}}) << u"pw"_s << big
                                        << many;
    QTest::newRow("hardlink inside") << buildTar({ok, {"again", AE_IFREG, {}, {}, "ok.txt"}}) << u"again"_s << big
                                     << many;
    QTest::newRow("char device") << buildTar({ok, {"null", AE_IFCHR}}) << u"null"_s << big << many;
    QTest::newRow("fifo") << buildTar({ok, {"pipe", AE_IFIFO}}) << u"pipe"_s << big << many;
    QTest::newRow("huge declared size") << (ustarHeader("bomb", 8LL * 1024 * 1024 * 1024 - 1) + QByteArray(1024, '\0'))
                                        << u"bomb"_s << qint64(1024 * 1024) << many;
    QTest::newRow("total size") << buildTar({ok,
                                             {"a", AE_IFREG, QByteArray(600, 'a')},
                                             {"b", AE_IFREG, QByteArray(600, 'b')}})
                                << u"b"_s << qint64(1000) << many;
    QTest::newRow("entry count") << buildTar({ok, {"a", AE_IFREG, "a"}, {"b", AE_IFREG, "b"}, {"c", AE_IFREG, "c"}})
                                 << u"c"_s << big << qint64(3);
    QTest::newRow("garbage") << QByteArray(2048, 'z') << QString() << big << many;
}

void TestWire::maliciousStreamsAreRefused()
{
    QFETCH(QByteArray, tar);
    QFETCH(QString, named);
    QFETCH(qint64, maxBytes);
    QFETCH(qint64, maxEntries);
    const QString root = testRoot();
    QVERIFY(removeTree(root));
    const QString parent = root + QStringLiteral("/parent");
    writeFile(parent + QStringLiteral("/canary"), "canary");
    QDir().mkpath(parent + QStringLiteral("/neighbour"));
    const QStringList before = snapshot(root);
    const QStringList tmpListing = QDir(QStringLiteral("/tmp")).entryList({QStringLiteral("pando-wire-evil")});

    WireLimits limits;
    limits.maxTotalBytes = maxBytes;
    limits.maxEntries = maxEntries;
    auto r = unpack(tar, parent + QStringLiteral("/dest"), limits);
    QVERIFY2(!r, "the stream was accepted");
    QVERIFY2(named.isEmpty() || r.error().where.contains(named), qPrintable(r.error().text()));
    QCOMPARE(snapshot(root), before);
    QCOMPARE(readAll(parent + QStringLiteral("/canary")), QByteArray("canary"));
    QVERIFY(removeTree(root));
    QVERIFY(!QFileInfo::exists(QString::fromLatin1(kOutsideAbsolute)));
    QVERIFY(!QFileInfo::exists(QStringLiteral("/tmp/pando-wire-evil")) || !tmpListing.isEmpty());
}

void TestWire::setuidBitsAreStripped()
{
    QTemporaryDir tmp;
    TarEntry suid{"suid", AE_IFREG, "x"};
    suid.perm = 06755;
    TarEntry sticky{"sticky", AE_IFDIR};
    sticky.perm = 01777;
    const QString dest = tmp.filePath(QStringLiteral("dest"));
    auto r = unpack(buildTar({suid, sticky}), dest);
    QVERIFY(r);
    struct stat st {};
    QCOMPARE(::lstat(QFile::encodeName(dest + QStringLiteral("/suid")).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0755));
    QCOMPARE(::lstat(QFile::encodeName(dest + QStringLiteral("/sticky")).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0777));
}

void TestWire::truncatedStreamIsRefused()
{
    QTemporaryDir tmp;
    QByteArray tar = buildTar({{"a", AE_IFREG, QByteArray(5000, 'a')}});
    tar.truncate(1500);
    auto r = unpack(tar, tmp.filePath(QStringLiteral("dest")));
    QVERIFY(!r);
    QVERIFY(!QFileInfo::exists(tmp.filePath(QStringLiteral("dest"))));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());
}

QTEST_GUILESS_MAIN(TestWire)
#include "tst_wire.moc"
