// What a restore reads through before it touches a volume (adapters/kit/dockerapi/archivecheck.h):
// archives as `docker cp` and Incus's volume backups write them pass; ones that would land
// outside their tree, or are no archive, are refused naming the entry.

#include "adapters/kit/dockerapi/archivecheck.h"
#include "tests/support/tarfiles.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;
using Type = TarEntry::Type;

class TestArchiveCheck : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void accepted_data();
    void accepted();
    void refused_data();
    void refused();
    void compressedByTar();
    void notAnArchive();

private:
    QString write(const QList<TarEntry> &entries)
    {
        const QString path = m_dir.filePath(u"a%1.tar"_s.arg(++m_count));
        return writeTar(path, entries) ? path : QString();
    }
    QTemporaryDir m_dir;
    int m_count = 0;
};

void TestArchiveCheck::accepted_data()
{
    QTest::addColumn<QList<TarEntry>>("entries");
    QTest::addColumn<QString>("top");
    QTest::addColumn<QString>("found");
    // What GET /containers/{id}/archive?path=/data writes.
    QTest::newRow("docker cp") << QList<TarEntry>{{"data/", Type::Directory},
                                                  {"data/boots", Type::File, "v1\n"},
                                                  {"data/sub/", Type::Directory},
                                                  {"data/sub/n", Type::File, "x"}}
                               << QString() << u"data"_s;
    QTest::newRow("./ prefix") << QList<TarEntry>{{"./", Type::Directory},
                                                  {"./todos/", Type::Directory},
                                                  {"./todos/a", Type::File, "a"}}
                               << QString() << u"todos"_s;
    // A symlink may point anywhere: it is data in the volume, read inside the app's container.
    QTest::newRow("links inside") << QList<TarEntry>{{"data/", Type::Directory},
                                                     {"data/a", Type::File, "a"},
                                                     {"data/abs", Type::Symlink, {}, "/etc/passwd"},
                                                     {"data/rel", Type::Symlink, {}, "a"},
                                                     {"data/hard", Type::Hardlink, {}, "data/a"}}
                                  << QString() << u"data"_s;
    // An Incus custom volume backup.
    QTest::newRow("incus backup") << QList<TarEntry>{{"backup/", Type::Directory},
                                                     {"backup/index.yaml", Type::File, "name: v\n"},
                                                     {"backup/volume/", Type::Directory},
                                                     {"backup/volume/boots", Type::File, "v1\n"}}
                                  << u"backup"_s << u"backup"_s;
}

void TestArchiveCheck::accepted()
{
    QFETCH(QList<TarEntry>, entries);
    QFETCH(QString, top);
    QFETCH(QString, found);
    const QString path = write(entries);
    QVERIFY(!path.isEmpty());
    auto checked = adapters::dockerapi::checkArchiveTree(path, top);
    QVERIFY2(checked, qPrintable(checked ? QString() : checked.error().text()));
    QCOMPARE(*checked, found);
}

void TestArchiveCheck::refused_data()
{
    QTest::addColumn<QList<TarEntry>>("entries");
    QTest::addColumn<QString>("top");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("message");
    QTest::newRow("climbs out") << QList<TarEntry>{{"data/", Type::Directory}, {"data/../../etc/x", Type::File, "x"}}
                                << QString() << u"archive entry data/../../etc/x"_s << u"climbs out"_s;
    QTest::newRow("absolute") << QList<TarEntry>{{"/etc/cron.d/x", Type::File, "x"}} << QString()
                              << u"archive entry /etc/cron.d/x"_s << u"absolute"_s;
    QTest::newRow("two tops") << QList<TarEntry>{{"data/", Type::Directory}, {"other/x", Type::File, "x"}} << QString()
                              << u"archive entry other/x"_s << u"not below data"_s;
    QTest::newRow("below a symlink") << QList<TarEntry>{{"data/", Type::Directory},
                                                        {"data/link", Type::Symlink, {}, "/etc"},
                                                        {"data/link/cron.d/x", Type::File, "x"}}
                                     << QString() << u"archive entry data/link/cron.d/x"_s
                                     << u"a symlink the archive made"_s;
    QTest::newRow("hard link out") << QList<TarEntry>{{"data/", Type::Directory},
                                                      {"data/h", Type::Hardlink, {}, "etc/shadow"}}
                                   << QString() << u"archive entry data/h"_s << u"outside the archive's tree"_s;
    QTest::newRow("device") << QList<TarEntry>{{"data/", Type::Directory}, {"data/tty", Type::CharDevice}} << QString()
                            << u"archive entry data/tty"_s << u"device node"_s;
    QTest::newRow("top is a file") << QList<TarEntry>{{"boots", Type::File, "v1\n"}} << QString()
                                   << u"archive entry boots"_s << u"not a directory"_s;
    QTest::newRow("docker's for incus") << QList<TarEntry>{{"data/", Type::Directory}, {"data/a", Type::File, "a"}}
                                        << u"backup"_s << u"archive entry data/"_s << u"not below backup"_s;
}

void TestArchiveCheck::refused()
{
    QFETCH(QList<TarEntry>, entries);
    QFETCH(QString, top);
    QFETCH(QString, where);
    QFETCH(QString, message);
    const QString path = write(entries);
    QVERIFY(!path.isEmpty());
    auto checked = adapters::dockerapi::checkArchiveTree(path, top);
    QVERIFY(!checked);
    QCOMPARE(checked.error().code, ErrorCode::Invalid);
    QCOMPARE(checked.error().where, where);
    QVERIFY2(checked.error().message.contains(message), qPrintable(checked.error().text()));
}

// What people hand over after `tar czf`: the real tar, compressed.
void TestArchiveCheck::compressedByTar()
{
    QVERIFY(QDir(m_dir.path()).mkpath(u"tree/data/sub"_s));
    QFile file(m_dir.filePath(u"tree/data/sub/n"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("n\n");
    file.close();
    const QString path = m_dir.filePath(u"data.tar.gz"_s);
    QProcess tar;
    tar.start(u"tar"_s, {u"-C"_s, m_dir.filePath(u"tree"_s), u"-czf"_s, path, u"data"_s});
    QVERIFY(tar.waitForFinished(30000));
    QCOMPARE(tar.exitCode(), 0);
    auto checked = adapters::dockerapi::checkArchiveTree(path);
    QVERIFY2(checked, qPrintable(checked ? QString() : checked.error().text()));
    QCOMPARE(*checked, u"data"_s);
}

void TestArchiveCheck::notAnArchive()
{
    const QString path = m_dir.filePath(u"notes.txt"_s);
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'x'));
    file.close();
    auto checked = adapters::dockerapi::checkArchiveTree(path);
    QVERIFY(!checked);
    QCOMPARE(checked.error().code, ErrorCode::Invalid);
    QCOMPARE(checked.error().where, path);
    QVERIFY2(checked.error().message.contains(u"not a tar archive"_s), qPrintable(checked.error().text()));

    // A real archive cut short.
    const QString whole = write({{"data/", Type::Directory}, {"data/big", Type::File, QByteArray(100000, 'b')}});
    QFile cut(whole);
    QVERIFY(cut.resize(30000));
    auto shortened = adapters::dockerapi::checkArchiveTree(whole);
    QVERIFY(!shortened);
    QVERIFY2(shortened.error().message.contains(u"cut short"_s), qPrintable(shortened.error().text()));

    auto missing = adapters::dockerapi::checkArchiveTree(m_dir.filePath(u"nothing.tar"_s));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Invalid);
}

QTEST_GUILESS_MAIN(TestArchiveCheck)
#include "tst_archivecheck.moc"
