// pando: the command-line client of a Pando install, over the same API as everyone else.

#include "args.h"
#include "cli.h"
#include "output.h"

#include "app/client/apiclient.h"

#include <QCoreApplication>
#include <QFile>
#include <QSocketNotifier>
#include <csignal>
#include <unistd.h>

#ifndef PANDO_VERSION
#define PANDO_VERSION "0.0.0"
#endif

using namespace pando;

namespace {

int signalPipe[2] = {-1, -1};

void onSignal(int)
{
    // Only async-signal-safe work here: the event loop picks the byte up.
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(signalPipe[1], &byte, 1);
}

void watchInterrupts(cli::Cli *cli)
{
    if (::pipe(signalPipe) != 0)
        return;
    auto *notifier = new QSocketNotifier(signalPipe[0], QSocketNotifier::Read, cli);
    QObject::connect(notifier, &QSocketNotifier::activated, cli, [cli]() {
        char byte = 0;
        [[maybe_unused]] const auto got = ::read(signalPipe[0], &byte, 1);
        cli->interrupt();
    });
    struct sigaction action = {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

int usageError(const Error &error, const QString &usage)
{
    cli::printError(error);
    cli::printErr(QString());
    cli::printErr(usage.trimmed());
    return cli::ExitUsage;
}

QString setting(const cli::Args &args, const QString &option, const char *env)
{
    if (args.has(option))
        return args.value(option);
    return qEnvironmentVariable(env);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("pando"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PANDO_VERSION));

    QString usage;
    auto args = cli::parseArgs(app.arguments().mid(1), usage);
    if (!args)
        return usageError(args.error(), usage);
    if (args->version) {
        cli::printOut(QStringLiteral("pando " PANDO_VERSION));
        return cli::ExitOk;
    }
    if (args->help) {
        cli::printOut(usage.trimmed());
        return cli::ExitOk;
    }
    const cli::Needs needs = args->command->needs;
    if (needs == cli::Needs::Nothing) {
        cli::Cli cli(*args, nullptr);
        cli.start();
        return app.exec();
    }

    const QString server = setting(*args, QStringLiteral("server"), "PANDO_SERVER");
    if (server.isEmpty()) {
        cli::printError(Error{ErrorCode::Invalid, QStringLiteral("no server given"), QStringLiteral("--server"),
                              QStringLiteral("pass --server URL or set PANDO_SERVER, e.g. http://127.0.0.1:7420")});
        return cli::ExitFailed;
    }
    auto url = client::ApiClient::parseServerUrl(server);
    if (!url) {
        cli::printError(url.error());
        return cli::ExitFailed;
    }
    // --token-file, --token, then PANDO_TOKEN, then the session `pando login` saved; login needs none.
    QString token;
    if (args->has(QStringLiteral("token-file"))) {
        QFile file(args->value(QStringLiteral("token-file")));
        if (!file.open(QIODevice::ReadOnly)) {
            cli::printError(Error{ErrorCode::Invalid,
                                  QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString()),
                                  QStringLiteral("--token-file")});
            return cli::ExitFailed;
        }
        token = QString::fromUtf8(file.read(4096)).trimmed();
    } else {
        if (args->has(QStringLiteral("token")))
            cli::printError(Error{ErrorCode::Invalid,
                                  QStringLiteral("warning: --token shows the token to every user of this machine "
                                                 "(ps, /proc); it will go away"),
                                  QStringLiteral("--token"),
                                  QStringLiteral("set PANDO_TOKEN, or put the token in a file only you can read and "
                                                 "pass --token-file FILE")});
        token = setting(*args, QStringLiteral("token"), "PANDO_TOKEN");
    }
    if (needs == cli::Needs::Server)
        token.clear();
    else if (token.isEmpty())
        token = cli::savedSession();
    if (token.isEmpty() && needs == cli::Needs::Token) {
        cli::printError(Error{ErrorCode::Unauthorized, QStringLiteral("no API token given"),
                              QStringLiteral("--token-file"),
                              QStringLiteral("run pando login, set PANDO_TOKEN or pass --token-file FILE (before "
                                             "the first login: the install's initial-admin-token file)")});
        return cli::ExitFailed;
    }

    client::ApiClient client(*url, token);
    cli::Cli cli(*args, &client);
    watchInterrupts(&cli);
    cli.start();
    return app.exec();
}
