#include "clirun.h"

#include "tests/support/component.h"

#include <QProcess>
#include <QSignalSpy>

namespace pando::test {

QStringList CliRun::errLines() const
{
    return err.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

QString CliRun::all() const
{
    return out + QStringLiteral("\n--- stderr:\n") + err;
}

QString pandoBinary()
{
    return binaryDir() + QStringLiteral("/app/cli/pando");
}

QProcessEnvironment cliEnvironment(const QString &server, const QString &token, const QString &configDir)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("PANDO_SERVER"));
    env.remove(QStringLiteral("PANDO_TOKEN"));
    if (!server.isEmpty())
        env.insert(QStringLiteral("PANDO_SERVER"), server);
    if (!token.isEmpty())
        env.insert(QStringLiteral("PANDO_TOKEN"), token);
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), configDir);
    return env;
}

CliRun runCli(const QStringList &args, const QProcessEnvironment &env, const QByteArray &input, int timeoutMs)
{
    QProcess process;
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(pandoBinary(), args);
    if (!input.isEmpty())
        process.write(input);
    process.closeWriteChannel();
    CliRun run;
    if (!finished.wait(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        run.err = QStringLiteral("timed out after %1 ms").arg(timeoutMs);
        return run;
    }
    run.code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace pando::test
