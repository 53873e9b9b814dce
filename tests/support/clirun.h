#pragma once
// Running the built `pando` binary from a test, as a user would: its own process, its exit code,
// standard output and error. The API server under test usually runs on the test's thread, so
// the wait spins the event loop rather than blocking it.

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace pando::test {

struct CliRun {
    int code = -1; // -1: it crashed or timed out
    QString out;
    QString err;
    QStringList errLines() const;
    QString all() const; // both streams, for failure messages
};

// The pando binary of this build tree.
QString pandoBinary();

// The environment a pando process gets: PANDO_SERVER and PANDO_TOKEN set when given and removed
// otherwise, XDG_CONFIG_HOME (where `pando login` keeps its session) set to configDir.
QProcessEnvironment cliEnvironment(const QString &server, const QString &token, const QString &configDir);

// Runs pando with args to its end, writing input to its standard input first.
CliRun runCli(const QStringList &args, const QProcessEnvironment &env, const QByteArray &input = {},
              int timeoutMs = 30000);

} // namespace pando::test
