// The data directory is its user's alone: made 0700, and one found open to others made private
// (its own entries 0600 / 0700), or refused when another user owns it. The SQLite database is
// made 0600 before SQLite creates it, and so are its -wal and -shm files, whatever the umask.

#include "core/state/database.h"
#include "core/state/datadir.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <unistd.h>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

mode_t modeOf(const QString &path)
{
    struct stat st {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return mode_t(-1);
    return st.st_mode & 07777;
}

void touch(const QString &path, mode_t mode)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("x");
    file.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode), 0);
}

// Restores the umask a test widened.
struct UmaskGuard {
    mode_t old;
    explicit UmaskGuard(mode_t mask) : old(::umask(mask)) {}
    ~UmaskGuard() { ::umask(old); }
};

} // namespace

class TestDataDir : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aNewDirectoryIsPrivateWhateverTheUmask()
    {
        UmaskGuard open(022);
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(u"parent/data"_s);
        QStringList fixed;
        QVERIFY(core::makePrivateDirectory(dir, &fixed));
        QCOMPARE(modeOf(dir), mode_t(0700));
        QVERIFY(fixed.isEmpty());
    }

    void anOpenDirectoryAndItsEntriesAreMadePrivate()
    {
        UmaskGuard open(022);
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(u"data"_s);
        QVERIFY(QDir().mkpath(dir + u"/blobs/ab"_s));
        QCOMPARE(::chmod(QFile::encodeName(dir).constData(), 0755), 0);
        QCOMPARE(::chmod(QFile::encodeName(dir + u"/blobs"_s).constData(), 0775), 0);
        touch(dir + u"/pando.db"_s, 0644);
        touch(dir + u"/token.key"_s, 0600);
        // A link is neither followed nor changed: what it names is not Pando's.
        touch(tmp.filePath(u"elsewhere"_s), 0644);
        QVERIFY(QFile::link(tmp.filePath(u"elsewhere"_s), dir + u"/link"_s));

        QStringList fixed;
        QVERIFY(core::makePrivateDirectory(dir, &fixed));
        QCOMPARE(modeOf(dir), mode_t(0700));
        QCOMPARE(modeOf(dir + u"/blobs"_s), mode_t(0700));
        QCOMPARE(modeOf(dir + u"/pando.db"_s), mode_t(0600));
        QCOMPARE(modeOf(dir + u"/token.key"_s), mode_t(0600));
        QCOMPARE(modeOf(tmp.filePath(u"elsewhere"_s)), mode_t(0644));
        fixed.sort();
        QCOMPARE(fixed, (QStringList{dir, dir + u"/blobs"_s, dir + u"/pando.db"_s}));
        // Once private, nothing more to fix.
        fixed.clear();
        QVERIFY(core::makePrivateDirectory(dir, &fixed));
        QVERIFY(fixed.isEmpty());
    }

    void aDirectoryOfAnotherUserIsRefused()
    {
        QTemporaryDir tmp;
        QString dir = tmp.filePath(u"theirs"_s);
        if (::geteuid() == 0) {
            QVERIFY(QDir().mkpath(dir));
            QCOMPARE(::chown(QFile::encodeName(dir).constData(), 65534, 65534), 0);
        } else {
            dir = u"/"_s; // root's: never this user's
        }
        auto refused = core::makePrivateDirectory(dir);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Forbidden);
        QVERIFY2(refused.error().message.contains(u"belongs to another user"_s), qPrintable(refused.error().text()));
        QVERIFY(!refused.error().hint.isEmpty());
    }

    void theDatabaseAndItsWalArePrivate()
    {
        UmaskGuard open(022);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(u"pando.db"_s);
        {
            core::Database db(core::DatabaseConfig::fromUrl(u"sqlite://"_s + path).value());
            QVERIFY(db.open());
            QCOMPARE(modeOf(path), mode_t(0600));
            QCOMPARE(modeOf(path + u"-wal"_s), mode_t(0600));
            QCOMPARE(modeOf(path + u"-shm"_s), mode_t(0600));
        }
        // One an older Pando left readable is made private when it is opened.
        QCOMPARE(::chmod(QFile::encodeName(path).constData(), 0644), 0);
        core::Database db(core::DatabaseConfig::fromUrl(u"sqlite://"_s + path).value());
        QVERIFY(db.open());
        QCOMPARE(modeOf(path), mode_t(0600));
    }
};

QTEST_GUILESS_MAIN(TestDataDir)
#include "tst_datadir.moc"
