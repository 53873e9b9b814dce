#pragma once
// A throwaway PostgreSQL server for tests: initdb into a temporary directory, postgres on a free
// loopback port, one fresh database per test. Tests that need PostgreSQL start one of these and,
// when it cannot start, PANDO_REQUIRE_COMPONENT(false, harness.error()).
//
// Not thread-safe: create, start and stop it from one thread (the test's main thread). The URLs
// it hands out may be used from any thread.

#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

class PostgresHarness {
public:
    PostgresHarness();
    ~PostgresHarness(); // stops the server (fast shutdown, then SIGKILL) and deletes its files
    PostgresHarness(const PostgresHarness &) = delete;
    PostgresHarness &operator=(const PostgresHarness &) = delete;

    // Finds the binaries, runs initdb, starts the server and waits (up to 20 s) until it
    // accepts connections. False with error() saying why.
    bool start();
    void stop();
    bool isRunning() const;
    QString error() const { return m_error; }

    int port() const { return m_port; }
    QString binDir() const { return m_binDir; }
    QString dataDir() const;
    // postgres://pando@127.0.0.1:PORT/pando — the database made at start.
    QString url() const { return urlFor(QStringLiteral("pando")); }
    QString urlFor(const QString &database) const;
    // Creates a new, uniquely named, empty database and returns its URL; empty with error() set
    // when that failed.
    QString freshDatabase();
    // Runs one statement on the given database as the superuser; false with error() on failure.
    bool execute(const QString &database, const QString &sql);

    // Where initdb and postgres are: $PANDO_PG_BINDIR when set, else $PATH, else the highest
    // /usr/lib/postgresql/*/bin. Empty when none was found. The cluster's files go under
    // $PANDO_PG_TMPDIR, else /dev/shm (a tmpfs: much faster), else the temp directory.
    static QString findBinDir();

private:
    bool fail(const QString &why);
    bool runTool(const QString &tool, const QStringList &args, int timeoutMs);
    QStringList wrapArgv(const QString &program, const QStringList &args, QString *runAs) const;
    bool waitUntilReady(int timeoutMs);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_server;
    QString m_binDir;
    QString m_error;
    QString m_serverLog;
    int m_port = 0;
    int m_nextDatabase = 1;
    bool m_asPostgresUser = false;
};

} // namespace pando::test
