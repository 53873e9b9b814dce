// pandod's data directory as a user finds it: every file and directory under it its user's
// alone after a first start with an open umask; one left open by an older Pando made private
// (and said so); the first user an administrator; and pandod --reset-admin, offline, recovering
// an install nobody can administer.

#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/ports.h"

#include <QDirIterator>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/stat.h>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs a program to its end, with stdinData on its standard input.
Run run(const QString &program, const QStringList &args, const QByteArray &stdinData = {},
        const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    p.waitForStarted();
    p.write(stdinData);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000))
        p.kill();
    p.waitForFinished();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

// Every path under dir (dir too) whose group or others may use it, with its mode.
QStringList openToOthers(const QString &dir)
{
    QStringList open;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    QStringList paths{dir};
    while (it.hasNext())
        paths << it.next();
    for (const QString &path : std::as_const(paths)) {
        struct stat st {};
        if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || S_ISLNK(st.st_mode) || S_ISSOCK(st.st_mode))
            continue;
        if (st.st_mode & 077)
            open << u"%1 %2"_s.arg(path).arg(st.st_mode & 0777, 3, 8, QLatin1Char('0'));
    }
    return open;
}

} // namespace

class TestPandodData : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void everythingUnderTheDataDirectoryIsPrivate();
    void anOpenDataDirectoryIsMadePrivateAtStart();
    void theFirstUserMustBeAnAdministrator();
    void resetAdminRecoversOffline();

private:
    bool start(QByteArray *said = nullptr);
    void stop();
    int login(const QString &user, const QString &password, QJsonObject *answer = nullptr);
    QString pandod() const { return binaryDir() + u"/app/daemon/pandod"_s; }

    QTemporaryDir m_tmp;
    QString m_dataDir;
    int m_port = 0;
    std::unique_ptr<QProcess> m_daemon;
};

void TestPandodData::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    m_dataDir = m_tmp.path() + u"/data"_s;
    m_port = unusedPort();
}

void TestPandodData::cleanup()
{
    stop();
}

bool TestPandodData::start(QByteArray *said)
{
    m_daemon = std::make_unique<QProcess>();
    m_daemon->setProcessChannelMode(QProcess::MergedChannels);
    // pandod narrows its own umask; the one it inherits here is the usual open one.
    const mode_t old = ::umask(022);
    m_daemon->start(pandod(), {u"--data-dir"_s, m_dataDir, u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_port),
                               u"--install-id"_s, u"datadir-test"_s});
    ::umask(old);
    if (!m_daemon->waitForStarted(5000))
        return false;
    for (int i = 0; i < 300; ++i) {
        if (httpGet(QUrl(u"http://127.0.0.1:%1/api/v1/health"_s.arg(m_port)), 500).status == 200) {
            if (said)
                *said = m_daemon->readAll();
            return true;
        }
        if (m_daemon->state() != QProcess::Running) {
            qWarning().noquote() << "pandod ended:" << m_daemon->readAll();
            return false;
        }
        QTest::qWait(50);
    }
    return false;
}

void TestPandodData::stop()
{
    if (!m_daemon || m_daemon->state() != QProcess::Running)
        return;
    ::kill(pid_t(m_daemon->processId()), SIGTERM);
    m_daemon->waitForFinished(30000);
}

int TestPandodData::login(const QString &user, const QString &password, QJsonObject *answer)
{
    QNetworkAccessManager net;
    QNetworkRequest request(QUrl(u"http://127.0.0.1:%1/api/v1/sessions"_s.arg(m_port)));
    request.setHeader(QNetworkRequest::ContentTypeHeader, u"application/json"_s);
    QNetworkReply *reply =
        net.post(request, QJsonDocument(QJsonObject{{u"username"_s, user}, {u"password"_s, password}}).toJson());
    QSignalSpy done(reply, &QNetworkReply::finished);
    if (!done.wait(10000))
        return 0;
    if (answer)
        *answer = QJsonDocument::fromJson(reply->readAll()).object();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply->deleteLater();
    return status;
}

void TestPandodData::everythingUnderTheDataDirectoryIsPrivate()
{
    QVERIFY(start());
    // The database, its WAL and SHM, the keys, the initial token, the caches: nobody else's.
    const QStringList open = openToOthers(m_dataDir);
    QVERIFY2(open.isEmpty(), qPrintable(open.join(u'\n')));
    QVERIFY(QFile::exists(m_dataDir + u"/pando.db-wal"_s));
    QVERIFY(QFile::exists(m_dataDir + u"/initial-admin-token"_s));
    stop();
}

void TestPandodData::anOpenDataDirectoryIsMadePrivateAtStart()
{
    // What an older Pando left: the directory and the database open to everyone.
    QCOMPARE(::chmod(QFile::encodeName(m_dataDir).constData(), 0755), 0);
    QCOMPARE(::chmod(QFile::encodeName(m_dataDir + u"/pando.db"_s).constData(), 0644), 0);
    QByteArray said;
    QVERIFY(start(&said));
    QVERIFY2(said.contains("private now"), said.constData());
    const QStringList open = openToOthers(m_dataDir);
    QVERIFY2(open.isEmpty(), qPrintable(open.join(u'\n')));
    stop();
}

void TestPandodData::theFirstUserMustBeAnAdministrator()
{
    QVERIFY(start());
    QFile file(m_dataDir + u"/initial-admin-token"_s);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"PANDO_SERVER"_s, u"http://127.0.0.1:%1"_s.arg(m_port));
    env.insert(u"PANDO_TOKEN"_s, QString::fromUtf8(file.readAll()).trimmed());
    const QString pando = binaryDir() + u"/app/cli/pando"_s;
    // A member first would spend the bootstrap on an install nobody can administer.
    Run r = run(pando, {u"users"_s, u"create"_s, u"bob"_s, u"--role"_s, u"member"_s}, "bob's long password\n", env);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("its first user must be one") && r.err.contains("--role admin"), r.err.constData());
    r = run(pando, {u"users"_s, u"create"_s, u"ada"_s, u"--role"_s, u"admin"_s}, "ada's long password\n", env);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    // Spent: the token file is gone, and the token no longer works.
    QVERIFY(!QFile::exists(file.fileName()));
    r = run(pando, {u"users"_s, u"create"_s, u"bob"_s, u"--role"_s, u"member"_s}, "bob's long password\n", env);
    QCOMPARE(r.exitCode, 1);
    QCOMPARE(login(u"ada"_s, u"ada's long password"_s), 201);
}

void TestPandodData::resetAdminRecoversOffline()
{
    QVERIFY(start());
    // Not while an engine holds the data directory.
    Run r = run(pandod(), {u"--data-dir"_s, m_dataDir, u"--reset-admin"_s, u"ada"_s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("another Pando engine"), r.err.constData());
    stop();

    // A password from standard input (never from argv).
    r = run(pandod(), {u"--data-dir"_s, m_dataDir, u"--reset-admin"_s, u"ada"_s, u"--password-file"_s, u"-"_s},
            "a brand new password\n");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("ada is an enabled administrator"), r.out.constData());
    // A missing user, with a one-time password in a file only the install's user may read.
    r = run(pandod(), {u"--data-dir"_s, m_dataDir, u"--reset-admin"_s, u"rescue"_s});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString oneTime = m_dataDir + u"/reset-admin-password"_s;
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(oneTime).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QFile file(oneTime);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString password = QString::fromUtf8(file.readAll()).trimmed();
    QVERIFY(password.size() >= 20);
    QVERIFY(!r.out.contains(password.toUtf8()) && !r.err.contains(password.toUtf8()));

    QVERIFY(start());
    QCOMPARE(login(u"ada"_s, u"ada's long password"_s), 401);
    QCOMPARE(login(u"ada"_s, u"a brand new password"_s), 201);
    QJsonObject answer;
    QCOMPARE(login(u"rescue"_s, password, &answer), 201);
    QCOMPARE(answer.value(u"user"_s).toObject().value(u"role"_s).toString(), u"admin"_s);
}

QTEST_GUILESS_MAIN(TestPandodData)
#include "tst_pandoddata.moc"
