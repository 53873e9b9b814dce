#include "pgharness.h"
#include "tests/support/ports.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QThread>
#include <QVersionNumber>

#include <cerrno>
#include <cstring>
#include <pwd.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

const QString kUser = u"pando"_s;
const QString kSystemUser = u"postgres"_s; // created by Debian's postgresql package

bool hasTools(const QString &dir)
{
    for (const char *tool : {"initdb", "postgres"}) {
        if (!QFileInfo(dir + u'/' + QLatin1String(tool)).isExecutable())
            return false;
    }
    return true;
}

QString tail(const QString &text, int lines = 15)
{
    QStringList all = text.split(u'\n', Qt::SkipEmptyParts);
    if (all.size() > lines)
        all = all.mid(all.size() - lines);
    return all.join(u'\n');
}

// Opens a superuser connection, runs fn, and removes the connection again.
template<class F> bool withConnection(int port, const QString &database, QString *error, F &&fn)
{
    static std::atomic<int> counter{0};
    const QString name = u"pando-pgharness-"_s + QString::number(counter.fetch_add(1));
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QPSQL"_s, name);
        db.setHostName(u"127.0.0.1"_s);
        db.setPort(port);
        db.setUserName(kUser);
        db.setDatabaseName(database);
        db.setConnectOptions(u"connect_timeout=2"_s);
        if (!db.open()) {
            *error = db.lastError().text();
        } else {
            ok = fn(db, error);
            db.close();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return ok;
}

// Where the cluster goes. A tmpfs makes CREATE DATABASE (some 300 files) several times faster
// than a disk, and one database per test makes that count. PANDO_PG_TMPDIR overrides.
QString scratchBase(bool asPostgresUser)
{
    const QString wanted = qEnvironmentVariable("PANDO_PG_TMPDIR");
    if (!wanted.isEmpty())
        return wanted;
    struct statvfs fs {};
    if (::statvfs("/dev/shm", &fs) == 0 && quint64(fs.f_bavail) * fs.f_frsize >= 512ull * 1024 * 1024 &&
        QFileInfo(u"/dev/shm"_s).isWritable())
        return u"/dev/shm"_s;
    // As root, the postgres user must be able to reach the directory: $TMPDIR may be under /root.
    return asPostgresUser ? u"/tmp"_s : QDir::tempPath();
}

} // namespace

PostgresHarness::PostgresHarness() = default;

PostgresHarness::~PostgresHarness()
{
    stop();
}

QString PostgresHarness::findBinDir()
{
    // An explicit choice wins, even a wrong one: start() then says what is missing there.
    if (qEnvironmentVariableIsSet("PANDO_PG_BINDIR")) {
        const QString dir = qEnvironmentVariable("PANDO_PG_BINDIR");
        return hasTools(dir) ? dir : QString();
    }
    const QString inPath = QStandardPaths::findExecutable(u"initdb"_s);
    if (!inPath.isEmpty()) {
        const QString dir = QFileInfo(inPath).canonicalPath();
        if (hasTools(dir))
            return dir;
    }
    // Debian keeps the server binaries out of $PATH, one folder per major version.
    const QDir root(u"/usr/lib/postgresql"_s);
    QString best;
    QVersionNumber bestVersion;
    for (const QString &entry : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QVersionNumber version = QVersionNumber::fromString(entry);
        const QString dir = root.filePath(entry) + u"/bin"_s;
        if (!version.isNull() && hasTools(dir) && version > bestVersion) {
            bestVersion = version;
            best = dir;
        }
    }
    return best;
}

bool PostgresHarness::fail(const QString &why)
{
    m_error = u"PostgreSQL test server: "_s + why;
    return false;
}

QString PostgresHarness::dataDir() const
{
    return m_dir ? m_dir->path() + u"/data"_s : QString();
}

QString PostgresHarness::urlFor(const QString &database) const
{
    return u"postgres://"_s + kUser + u"@127.0.0.1:"_s + QString::number(m_port) + u'/' + database;
}

// postgres refuses to run as root, so as root every server tool runs as the postgres system
// user through runuser (argv, no shell).
QStringList PostgresHarness::wrapArgv(const QString &program, const QStringList &args, QString *runAs) const
{
    if (!m_asPostgresUser) {
        *runAs = program;
        return args;
    }
    QString runuser = QStandardPaths::findExecutable(u"runuser"_s);
    if (runuser.isEmpty())
        runuser = QStandardPaths::findExecutable(u"runuser"_s, {u"/usr/sbin"_s, u"/sbin"_s});
    *runAs = runuser;
    return QStringList{u"-u"_s, kSystemUser, u"--"_s, program} + args;
}

bool PostgresHarness::runTool(const QString &tool, const QStringList &args, int timeoutMs)
{
    QString program;
    const QStringList argv = wrapArgv(m_binDir + u'/' + tool, args, &program);
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.setWorkingDirectory(m_dir->path());
    process.start(program, argv);
    if (!process.waitForStarted(10000))
        return fail(tool + u" did not start: "_s + process.errorString());
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        return fail(tool + u" did not finish within "_s + QString::number(timeoutMs / 1000) + u" s"_s);
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
        return fail(tool + u" failed (exit "_s + QString::number(process.exitCode()) + u"): "_s +
                    tail(QString::fromLocal8Bit(process.readAll())));
    return true;
}

bool PostgresHarness::start()
{
    if (isRunning())
        return true;
    m_error.clear();
    if (!QSqlDatabase::isDriverAvailable(u"QPSQL"_s))
        return fail(u"the Qt Sql driver QPSQL is not installed (Debian: libqt6sql6-psql)"_s);
    m_binDir = findBinDir();
    if (m_binDir.isEmpty())
        return fail(qEnvironmentVariableIsSet("PANDO_PG_BINDIR")
                        ? u"PANDO_PG_BINDIR="_s + qEnvironmentVariable("PANDO_PG_BINDIR") +
                              u" holds no initdb and postgres"_s
                        : u"initdb and postgres were found neither in $PATH nor in /usr/lib/postgresql/*/bin"
                          " (Debian: apt-get install postgresql)"_s);

    m_asPostgresUser = ::geteuid() == 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (m_asPostgresUser) {
        const passwd *pw = ::getpwnam(kSystemUser.toLocal8Bit().constData());
        if (!pw)
            return fail(u"running as root, and postgres refuses root, but there is no '"_s + kSystemUser +
                        u"' system user to run it as (Debian's postgresql package creates it)"_s);
        uid = pw->pw_uid;
        gid = pw->pw_gid;
        QString program;
        wrapArgv(QString(), {}, &program);
        if (program.isEmpty())
            return fail(u"running as root and runuser (util-linux) was not found to switch to the postgres user"_s);
    }

    const QString base = scratchBase(m_asPostgresUser);
    m_dir = std::make_unique<QTemporaryDir>(base + u"/pando-pg-XXXXXX"_s);
    if (!m_dir->isValid())
        return fail(u"cannot create a temporary directory under "_s + base + u": "_s + m_dir->errorString());
    if (m_asPostgresUser && ::chown(QFile::encodeName(m_dir->path()).constData(), uid, gid) != 0)
        return fail(u"cannot hand "_s + m_dir->path() + u" to the postgres user: "_s +
                    QString::fromLocal8Bit(strerror(errno)));

    if (!runTool(u"initdb"_s,
                 {u"-D"_s, dataDir(), u"-U"_s, kUser, u"--auth=trust"_s, u"-E"_s, u"UTF8"_s, u"--locale=C"_s,
                  u"--no-sync"_s, u"--no-instructions"_s},
                 120000))
        return false;

    // A port picked now may be taken by the time postgres binds it: try a few.
    for (int attempt = 1; attempt <= 3; ++attempt) {
        m_port = unusedPort();
        if (m_port == 0)
            return fail(u"no free TCP port on 127.0.0.1"_s);
        const QString logPath = m_dir->path() + u"/server.log"_s;
        QFile::remove(logPath);
        QString program;
        const QStringList argv =
            wrapArgv(m_binDir + u"/postgres"_s,
                     {u"-D"_s, dataDir(), u"-p"_s, QString::number(m_port), u"-k"_s, m_dir->path(), u"-c"_s,
                      u"listen_addresses=127.0.0.1"_s, u"-c"_s, u"fsync=off"_s, u"-c"_s, u"synchronous_commit=off"_s,
                      u"-c"_s, u"full_page_writes=off"_s, u"-c"_s, u"max_connections=200"_s},
                     &program);
        m_server = std::make_unique<QProcess>();
        // Into a file, not a pipe: nobody reads a pipe while tests run, and a full pipe would
        // stall the server.
        m_server->setStandardOutputFile(logPath);
        m_server->setStandardErrorFile(logPath, QIODevice::Append);
        m_server->start(program, argv);
        if (!m_server->waitForStarted(10000))
            return fail(u"postgres did not start: "_s + m_server->errorString());
        if (waitUntilReady(20000))
            break;
        const bool exited = m_server->state() == QProcess::NotRunning;
        QFile log(logPath);
        m_serverLog = log.open(QIODevice::ReadOnly) ? QString::fromLocal8Bit(log.readAll()) : QString();
        stop();
        if (!exited || attempt == 3 || !m_serverLog.contains(u"could not bind"_s))
            return fail(u"postgres on port "_s + QString::number(m_port) +
                        (exited ? u" exited: "_s : u" did not accept connections within 20 s: "_s) + tail(m_serverLog) +
                        (m_error.isEmpty() ? QString() : u" (last error: "_s + m_error + u')'));
    }
    return execute(u"postgres"_s, u"CREATE DATABASE pando"_s);
}

bool PostgresHarness::waitUntilReady(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (m_server->state() == QProcess::NotRunning)
            return false;
        QString error;
        if (withConnection(m_port, u"postgres"_s, &error, [](QSqlDatabase &, QString *) { return true; }))
            return true;
        m_error = error;
        QThread::msleep(100);
    }
    return false;
}

bool PostgresHarness::isRunning() const
{
    return m_server && m_server->state() == QProcess::Running;
}

bool PostgresHarness::execute(const QString &database, const QString &sql)
{
    if (!isRunning())
        return fail(u"the server is not running"_s);
    QString error;
    const bool ok = withConnection(m_port, database, &error, [&](QSqlDatabase &db, QString *err) {
        QSqlQuery query(db);
        if (query.exec(sql))
            return true;
        *err = query.lastError().text();
        return false;
    });
    if (!ok)
        return fail(u"on database "_s + database + u": "_s + sql + u": "_s + error);
    return true;
}

QString PostgresHarness::freshDatabase()
{
    // The name is ours ([a-z0-9_]); identifiers cannot be bound as values.
    const QString name = u"test_"_s + QString::number(m_nextDatabase++);
    if (!execute(u"postgres"_s, u"CREATE DATABASE "_s + name))
        return {};
    return urlFor(name);
}

void PostgresHarness::stop()
{
    if (!m_server)
        return;
    if (m_server->state() != QProcess::NotRunning) {
        // Signal the postmaster itself (under runuser our child is runuser, not postgres).
        // SIGINT is "fast shutdown": it does not wait for clients to disconnect, as SIGTERM would.
        qint64 pid = 0;
        QFile pidFile(dataDir() + u"/postmaster.pid"_s);
        if (pidFile.open(QIODevice::ReadOnly))
            pid = pidFile.readLine().trimmed().toLongLong();
        if (pid <= 0)
            pid = m_server->processId();
        ::kill(static_cast<pid_t>(pid), SIGINT);
        if (!m_server->waitForFinished(15000)) {
            ::kill(static_cast<pid_t>(pid), SIGKILL);
            m_server->kill();
            m_server->waitForFinished(5000);
        }
    }
    m_server.reset();
}

} // namespace pando::test
