// The tree digest: treeDigest() and treedigest.sh run by busybox agree on every tree; the
// digest survives a wire round trip and changes with content, modes, names and link targets.

#include "core/pipelines/treedigest/treedigest.h"
#include "core/pipelines/wire/treefs.h"
#include "core/pipelines/wire/wire.h"
#include "tests/support/component.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <unistd.h>

using namespace pando;
using namespace pando::core;
using namespace Qt::StringLiterals;

namespace {

const QString kBusybox = u"/bin/busybox"_s;

void put(const QString &root, const QString &rel, const QByteArray &data, mode_t mode = 0644)
{
    const QString path = root + u'/' + rel;
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
    f.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode), 0);
}

void link(const QString &root, const QByteArray &target, const QString &rel)
{
    const QString path = root + u'/' + rel;
    QDir().mkpath(QFileInfo(path).absolutePath());
    QCOMPARE(::symlink(target.constData(), QFile::encodeName(path).constData()), 0);
}

// Runs the shell script with busybox's sh, the way a worker without Pando would.
QPair<int, QString> scriptDigest(const QString &dir)
{
    QProcess p;
    p.setProgram(kBusybox);
    // busybox finds its own applets: nothing from the host's PATH is used.
    QProcessEnvironment env;
    env.insert(u"PATH"_s, u"/nonexistent"_s);
    p.setProcessEnvironment(env);
    p.setArguments({u"sh"_s, test::sourceDir() + u"/core/pipelines/treedigest/treedigest.sh"_s, dir});
    p.start();
    p.waitForFinished(60'000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()).trimmed() +
                              QString::fromUtf8(p.readAllStandardError()).trimmed()};
}

} // namespace

class TestTreeDigest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void scriptAndCodeAgree_data();
    void scriptAndCodeAgree();
    void manifestFormat();
    void digestChangesWithEveryKeptProperty();
    void digestSurvivesWireRoundTrip();
    void newlinesAreRefused();
};

void TestTreeDigest::initTestCase()
{
    PANDO_REQUIRE_COMPONENT(QFileInfo(kBusybox).isExecutable(), u"busybox at /bin/busybox (busybox-static)"_s);
}

void TestTreeDigest::scriptAndCodeAgree_data()
{
    QTest::addColumn<int>("tree");
    QTest::newRow("empty") << 0;
    QTest::newRow("one file") << 1;
    QTest::newRow("spaces and odd names") << 2;
    QTest::newRow("symlinks") << 3;
    QTest::newRow("empty dirs and modes") << 4;
    QTest::newRow("sort order") << 5;
    QTest::newRow("bigger") << 6;
}

void TestTreeDigest::scriptAndCodeAgree()
{
    QFETCH(int, tree);
    QTemporaryDir tmp;
    const QString root = tmp.filePath(u"tree"_s);
    QDir().mkpath(root);
    switch (tree) {
    case 0:
        break;
    case 1:
        put(root, u"hello.txt"_s, "hello\n");
        break;
    case 2:
        put(root, u"with space/file name.txt"_s, "a");
        put(root, u"  leading and trailing  "_s, "b");
        put(root, u"back\\slash"_s, "c");
        put(root, u"-dash"_s, "d");
        put(root, u"tab\there"_s, "e");
        put(root, u"ünïcødé/名前"_s, "f");
        put(root, u"quote'\"$(x)`"_s, "g");
        put(root, u"star*?[x]"_s, "h");
        break;
    case 3:
        put(root, u"target"_s, "t");
        link(root, "target", u"rel"_s);
        link(root, "/etc/passwd", u"abs"_s);
        link(root, "../../outside", u"dir/up"_s);
        link(root, "does not exist", u"dangling link"_s);
        link(root, "dir", u"to-dir"_s);
        link(root, "trailing space ", u"ts"_s);
        break;
    case 4:
        QDir().mkpath(root + u"/empty/nested/deeper"_s);
        put(root, u"exec.sh"_s, "#!/bin/sh\n", 0755);
        put(root, u"private"_s, "k", 0600);
        put(root, u"odd"_s, "o", 0451);
        put(root, u"suid"_s, "s", 04755);
        QDir().mkpath(root + u"/ro"_s);
        put(root, u"ro/file"_s, "x", 0444);
        QCOMPARE(::chmod(QFile::encodeName(root + u"/ro"_s).constData(), 0555), 0);
        QDir().mkpath(root + u"/sticky"_s);
        QCOMPARE(::chmod(QFile::encodeName(root + u"/sticky"_s).constData(), 01777), 0);
        break;
    case 5:
        // '/' sorts after ' ', '-' and '.': byte order of whole paths, not per component.
        put(root, u"a/b"_s, "1");
        put(root, u"a b"_s, "2");
        put(root, u"a-b"_s, "3");
        put(root, u"a.b"_s, "4");
        put(root, u"A"_s, "5");
        put(root, u"a0"_s, "6");
        put(root, u"_"_s, "7");
        put(root, u"~"_s, "8");
        break;
    case 6:
        for (int i = 0; i < 200; ++i)
            put(root, u"d%1/f%2"_s.arg(i % 7).arg(i), QByteArray::number(i).repeated(i * 13), i % 3 ? 0644 : 0755);
        put(root, u"big"_s, QByteArray(5 * 1024 * 1024, 'z'));
        break;
    }
    auto code = treeDigest(root);
    QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
    const auto [exitCode, script] = scriptDigest(root);
    QCOMPARE(exitCode, 0);
    QCOMPARE(script, *code);
    QCOMPARE(code->size(), 64);
    QVERIFY(removeTree(tmp.path()));
}

void TestTreeDigest::manifestFormat()
{
    QTemporaryDir tmp;
    put(tmp.path(), u"d/f"_s, "hi\n", 0755);
    link(tmp.path(), "d/f", u"l"_s);
    QCOMPARE(::chmod(QFile::encodeName(tmp.filePath(u"d"_s)).constData(), 0750), 0);
    auto manifest = treeManifest(tmp.path());
    QVERIFY(manifest);
    const QByteArray sha = "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"; // "hi\n"
    const QByteArray linkSha = QCryptographicHash::hash("d/f", QCryptographicHash::Sha256).toHex();
    const QList<QByteArray> lines = manifest->split('\n');
    QCOMPARE(lines.value(0), QByteArray("treedigest v1"));
    QCOMPARE(lines.value(1), QByteArray("d 750 - d"));
    QCOMPARE(lines.value(2), QByteArray("f 755 " + sha + " d/f"));
    QCOMPARE(lines.value(3), QByteArray("l 777 " + linkSha + " l"));
    QCOMPARE(lines.size(), 5); // the last line ends in '\n'
}

void TestTreeDigest::digestChangesWithEveryKeptProperty()
{
    QTemporaryDir tmp;
    const QString root = tmp.path();
    put(root, u"f"_s, "content");
    link(root, "f", u"l"_s);
    QDir().mkpath(root + u"/d"_s);
    QSet<QString> seen;
    auto record = [&] {
        auto d = treeDigest(root);
        QVERIFY(d);
        QVERIFY2(!seen.contains(*d), "a change did not change the digest");
        seen.insert(*d);
    };
    record();
    put(root, u"f"_s, "Content");
    record();
    QCOMPARE(::chmod(QFile::encodeName(root + u"/f"_s).constData(), 0755), 0);
    record();
    QVERIFY(QFile::remove(root + u"/l"_s));
    link(root, "g", u"l"_s);
    record();
    QVERIFY(QDir(root).rename(u"d"_s, u"e"_s));
    record();
    QCOMPARE(::chmod(QFile::encodeName(root + u"/e"_s).constData(), 0700), 0);
    record();
    // Times are not part of it.
    const QString before = *treeDigest(root);
    QTest::qSleep(1100);
    put(root, u"f"_s, "Content", 0755);
    QCOMPARE(*treeDigest(root), before);
}

void TestTreeDigest::digestSurvivesWireRoundTrip()
{
    QTemporaryDir tmp;
    const QString src = tmp.filePath(u"src"_s);
    put(src, u"a/b c"_s, "x", 0700);
    put(src, u"run"_s, "y", 0755);
    link(src, "/nowhere", u"a/l"_s);
    QDir().mkpath(src + u"/empty"_s);
    QByteArray tar;
    QBuffer out(&tar);
    out.open(QIODevice::WriteOnly);
    QVERIFY(packTree(src, &out));
    QBuffer in(&tar);
    in.open(QIODevice::ReadOnly);
    QVERIFY(unpackTree(&in, tmp.filePath(u"dst"_s)));
    QCOMPARE(*treeDigest(tmp.filePath(u"dst"_s)), *treeDigest(src));
    QCOMPARE(scriptDigest(tmp.filePath(u"dst"_s)).second, *treeDigest(src));
}

void TestTreeDigest::newlinesAreRefused()
{
    QTemporaryDir tmp;
    put(tmp.path(), u"two\nlines"_s, "x");
    auto d = treeDigest(tmp.path());
    QVERIFY(!d);
    QVERIFY2(d.error().where.endsWith(u"two\nlines"_s), qPrintable(d.error().text()));
    QCOMPARE(scriptDigest(tmp.path()).first, 3);

    QTemporaryDir tmp2;
    link(tmp2.path(), "a\nb", u"l"_s);
    QVERIFY(!treeDigest(tmp2.path()));
    QCOMPARE(scriptDigest(tmp2.path()).first, 3);
}

QTEST_GUILESS_MAIN(TestTreeDigest)
#include "tst_treedigest.moc"
