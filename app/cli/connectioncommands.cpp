// `pando connections`: the install's source connections, the forges and credentials that read
// private repositories (docs/user-guide.md, "Private repositories"), and the registry logins that
// pull private images ("Private images"). A token is read like a
// secret (standard input, a prompt without echo, or --from-file), a deploy key from its file;
// neither ever comes back.

#include "app/client/oauthloopback.h"
#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>

namespace pando::cli {
namespace {

QString checked(const QJsonObject &c)
{
    return num(c, "checked_ms") == 0 ? QStringLiteral("never tested") : str(c, "check_result");
}

void listConnections(Cli &cli)
{
    cli.api().sourceConnections(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue v : r.json.value(QStringLiteral("connections")).toArray()) {
            const QJsonObject c = v.toObject();
            rows << QStringList{str(c, "name"),          str(c, "kind"), str(c, "url"),
                                orDash(str(c, "owner")), str(c, "auth"), checked(c)};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("no source connections you may use; an administrator adds one with "
                                    "pando connections add"));
        else
            printOut(table({QStringLiteral("NAME"), QStringLiteral("KIND"), QStringLiteral("URL"),
                            QStringLiteral("OWNER"), QStringLiteral("AUTH"), QStringLiteral("LAST TEST")},
                           rows));
        cli.finish(ExitOk);
    }));
}

void showConnection(Cli &cli)
{
    cli.api().sourceConnection(cli.args().arguments.value(0), cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject &c = r.json;
        QStringList apps;
        for (const QJsonValue v : c.value(QStringLiteral("apps")).toArray())
            apps << v.toString();
        QList<std::pair<QString, QString>> pairs{
            {QStringLiteral("name"), str(c, "name")}, {QStringLiteral("kind"), str(c, "kind")},
            {QStringLiteral("url"), str(c, "url")},   {QStringLiteral("owner"), orDash(str(c, "owner"))},
            {QStringLiteral("auth"), str(c, "auth")}, {QStringLiteral("user"), orDash(str(c, "username"))},
        };
        if (str(c, "auth") == QLatin1String("ssh-key"))
            pairs << std::pair{QStringLiteral("key"), orDash(str(c, "fingerprint"))};
        if (str(c, "auth") == QLatin1String("github-app"))
            pairs << std::pair{QStringLiteral("app"), str(c, "app_id")}
                  << std::pair{QStringLiteral("installation"), str(c, "installation_id")};
        if (str(c, "auth") == QLatin1String("oauth"))
            pairs << std::pair{QStringLiteral("client id"), str(c, "client_id")};
        pairs
            << std::pair{QStringLiteral("added"),
                         QStringLiteral("%1 by %2").arg(timestamp(num(c, "created_ms")), orDash(str(c, "created_by")))}
            << std::pair{QStringLiteral("last test"), checked(c)}
            << std::pair{QStringLiteral("apps"),
                         apps.isEmpty() ? QStringLiteral("-") : apps.join(QStringLiteral(", "))};
        printOut(keyValues(pairs));
        if (str(c, "auth") == QLatin1String("ssh-key"))
            printOut(QStringLiteral("host keys:\n") + str(c, "known_hosts").trimmed());
        cli.finish(ExitOk);
    }));
}

// A file's text for a field of the request; nullopt after failing the command.
std::optional<QString> readTextFile(Cli &cli, const QString &flag, const QString &what)
{
    const QString path = cli.args().value(flag);
    QFile file(path);
    QString problem;
    if (!file.open(QIODevice::ReadOnly))
        problem = QStringLiteral("cannot read %1: %2").arg(what, file.errorString());
    else if (file.size() > qint64(64) * 1024)
        problem = QStringLiteral("%1 is larger than 64 KiB").arg(what);
    if (!problem.isEmpty()) {
        cli.failWith(Error{ErrorCode::Invalid, problem, QStringLiteral("--%1 %2").arg(flag, path)});
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

void printAdded(Cli &cli, const QJsonObject &c, const QString &verb)
{
    if (cli.args().json)
        return printJson(c);
    const QString name = str(c, "name");
    printOut(QStringLiteral("%1 connection %2 (%3 at %4, %5)")
                 .arg(verb, name, str(c, "kind"), str(c, "url"), str(c, "auth")));
    if (!str(c, "fingerprint").isEmpty())
        printOut(QStringLiteral("its key is %1: add the public half to the repositories as a deploy key")
                     .arg(str(c, "fingerprint")));
    printOut(
        QStringLiteral("apps whose repository it covers now read through it; try it: pando connections test %1 REPO")
            .arg(name));
}

void sendConnection(Cli &cli, const QJsonObject &body)
{
    cli.api().addSourceConnection(body, cli.handle([&cli](const client::ApiResponse &r) {
        printAdded(cli, r.json, QStringLiteral("added"));
        cli.finish(ExitOk);
    }));
}

// The authorization-code flow of an OAuth connection from the terminal: listen on loopback,
// begin() the authorization with the redirect address there, open (or print) the forge's page,
// and hand the code the forge sends back to the server, which completes the connection.
void authorizeInBrowser(Cli &cli, const std::function<void(const QString &redirectUri, client::Api::Callback)> &begin,
                        const QString &verb)
{
    auto *loopback = new client::OAuthLoopback(&cli);
    const Args &args = cli.args();
    if (auto listening = loopback->listen(quint16(args.value(QStringLiteral("callback-port")).toUInt())); !listening)
        return cli.failWith(listening.error());
    begin(loopback->redirectUri(), cli.handle([&cli, loopback, verb](const client::ApiResponse &r) {
        const QString url = str(r.json, "authorize_url");
        loopback->expectState(str(r.json, "state"));
        const qint64 leftMs = std::max<qint64>(1000, num(r.json, "expires_ms") - QDateTime::currentMSecsSinceEpoch());
        auto *deadline = new QTimer(loopback);
        deadline->setSingleShot(true);
        QObject::connect(deadline, &QTimer::timeout, &cli, [&cli] {
            cli.failWith(Error{ErrorCode::Timeout, QStringLiteral("the forge did not send the browser back in time"),
                               QStringLiteral("authorization"),
                               QStringLiteral("run the command again and finish on the forge's page within ten "
                                              "minutes")});
        });
        deadline->start(int(std::min<qint64>(leftMs, std::numeric_limits<int>::max())));
        QObject::connect(loopback, &client::OAuthLoopback::refused, &cli,
                         [&cli](const Error &error) { cli.failWith(error); });
        QObject::connect(loopback, &client::OAuthLoopback::authorized, &cli,
                         [&cli, deadline, state = str(r.json, "state"), verb](const QString &code) {
                             deadline->stop();
                             printStatus(QStringLiteral("the forge answered; completing the connection…"));
                             cli.api().completeSourceAuthorization(
                                 state, code, cli.handle([&cli, verb](const client::ApiResponse &done) {
                                     printAdded(cli, done.json, verb);
                                     cli.finish(ExitOk);
                                 }));
                         });
        const QString opener = QStandardPaths::findExecutable(QStringLiteral("xdg-open"));
        const bool opened = !cli.args().has(QStringLiteral("no-browser")) && !opener.isEmpty() &&
                            QProcess::startDetached(opener, {url});
        // On standard error, whatever standard output is: the address is what the user needs, and
        // --json keeps standard output for the connection.
        printErr(opened
                     ? QStringLiteral("opened the forge's page in your browser; if it did not show, open:\n%1").arg(url)
                     : QStringLiteral("open this address in a browser and authorize Pando there:\n%1").arg(url));
        printErr(QStringLiteral("waiting for the forge to send the browser back to %1 (Ctrl+C to give up)…")
                     .arg(loopback->redirectUri()));
    }));
}

void addOAuthConnection(Cli &cli, QJsonObject body)
{
    if (!body.contains(QStringLiteral("kind")))
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("an OAuth connection needs the forge's --kind"),
                                  QStringLiteral("connections add"),
                                  QStringLiteral("--kind github, gitlab, gitea or bitbucket")});
    body.insert(QStringLiteral("client_id"), cli.args().value(QStringLiteral("oauth-client")));
    readSecretValue(cli, QStringLiteral("the OAuth application's client secret"),
                    [&cli, body](const QString &secret) mutable {
                        if (secret.isEmpty())
                            return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("the client secret is empty"),
                                                      QStringLiteral("stdin"),
                                                      QStringLiteral("pipe it in or give --from-file FILE")});
                        body.insert(QStringLiteral("client_secret"), secret);
                        authorizeInBrowser(
                            cli,
                            [&cli, body](const QString &redirectUri, client::Api::Callback done) mutable {
                                body.insert(QStringLiteral("redirect_uri"), redirectUri);
                                cli.api().beginSourceAuthorization(body, std::move(done));
                                body.remove(QStringLiteral("client_secret"));
                            },
                            QStringLiteral("added"));
                    });
}

void authorizeConnection(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    authorizeInBrowser(
        cli,
        [&cli, name](const QString &redirectUri, client::Api::Callback done) {
            cli.api().reauthorizeSourceConnection(name, redirectUri, std::move(done));
        },
        QStringLiteral("authorized"));
}

void addConnection(Cli &cli)
{
    const Args &args = cli.args();
    QJsonObject body{{QStringLiteral("name"), args.arguments.value(0)},
                     {QStringLiteral("url"), args.value(QStringLiteral("url"))}};
    for (const auto &[flag, field] : {std::pair{QStringLiteral("kind"), QStringLiteral("kind")},
                                      std::pair{QStringLiteral("owner"), QStringLiteral("owner")},
                                      std::pair{QStringLiteral("token-user"), QStringLiteral("username")}}) {
        if (args.has(flag))
            body.insert(field, args.value(flag));
    }
    const QStringList credentials = [&args] {
        QStringList given;
        for (const QString &flag : {QStringLiteral("ssh-key"), QStringLiteral("app-key"),
                                    QStringLiteral("oauth-client"), QStringLiteral("from-file")}) {
            // An OAuth application's secret is read like a token: --from-file goes with it.
            if (args.has(flag) && !(flag == QLatin1String("from-file") && args.has(QStringLiteral("oauth-client"))))
                given << QStringLiteral("--") + flag;
        }
        return given;
    }();
    if (credentials.size() > 1)
        return cli.failWith(Error{
            ErrorCode::Invalid,
            QStringLiteral("%1 each give the credential; pass one").arg(credentials.join(QStringLiteral(" and "))),
            QStringLiteral("connections add")});
    if (args.has(QStringLiteral("github-app")) || args.has(QStringLiteral("installation")) ||
        args.has(QStringLiteral("app-key"))) {
        for (const QString &flag :
             {QStringLiteral("github-app"), QStringLiteral("installation"), QStringLiteral("app-key")}) {
            if (!args.has(flag))
                return cli.failWith(Error{ErrorCode::Invalid,
                                          QStringLiteral("a GitHub App connection needs --github-app ID, "
                                                         "--installation ID and --app-key FILE; --%1 is missing")
                                              .arg(flag),
                                          QStringLiteral("connections add"),
                                          QStringLiteral("the app's settings page shows its App ID and makes its "
                                                         "private key; the installation's id ends the address of "
                                                         "its settings page")});
        }
        auto key = readTextFile(cli, QStringLiteral("app-key"), QStringLiteral("the app's private key"));
        if (!key)
            return;
        body.insert(QStringLiteral("app_id"), args.value(QStringLiteral("github-app")));
        body.insert(QStringLiteral("installation_id"), args.value(QStringLiteral("installation")));
        body.insert(QStringLiteral("private_key"), *key);
        key->fill(QChar(u'\0'));
        if (!body.contains(QStringLiteral("kind")))
            body.insert(QStringLiteral("kind"), QStringLiteral("github"));
        return sendConnection(cli, body);
    }
    if (args.has(QStringLiteral("oauth-client")))
        return addOAuthConnection(cli, body);
    if (args.has(QStringLiteral("ssh-key"))) {
        auto key = readTextFile(cli, QStringLiteral("ssh-key"), QStringLiteral("the key file"));
        if (!key)
            return;
        body.insert(QStringLiteral("ssh_key"), *key);
        key->fill(QChar(u'\0'));
        if (args.has(QStringLiteral("known-hosts"))) {
            auto hosts = readTextFile(cli, QStringLiteral("known-hosts"), QStringLiteral("the host keys file"));
            if (!hosts)
                return;
            body.insert(QStringLiteral("known_hosts"), *hosts);
        }
        return sendConnection(cli, body);
    }
    readSecretValue(cli, QStringLiteral("the token"), [&cli, body](const QString &token) mutable {
        if (token.isEmpty())
            return cli.failWith(
                Error{ErrorCode::Invalid, QStringLiteral("the token is empty"), QStringLiteral("stdin"),
                      QStringLiteral("pipe it in, give --from-file FILE, or --ssh-key for a deploy key")});
        body.insert(QStringLiteral("token"), token);
        sendConnection(cli, body);
    });
}

void removeConnection(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().removeSourceConnection(name, cli.handle([&cli, name](const client::ApiResponse &) {
        if (cli.args().json)
            printJson(
                QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("status"), QStringLiteral("removed")}});
        else
            printOut(QStringLiteral("removed connection %1; its credential is gone").arg(name));
        cli.finish(ExitOk);
    }));
}

void testRegistry(Cli &cli, const QString &name, const QString &image)
{
    if (!cli.args().arguments.value(2).isEmpty())
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("an image's tag or digest goes in its reference"),
                                  cli.args().arguments.value(2),
                                  QStringLiteral("pando connections test %1 IMAGE:TAG").arg(name)});
    printStatus(image.isEmpty() ? QStringLiteral("logging in to the registry of %1…").arg(name)
                                : QStringLiteral("reading %1 through %2…").arg(image, name));
    cli.api().testRegistryConnection(name, image, cli.handle([&cli, name, image](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else if (image.isEmpty())
            printOut(QStringLiteral("connection %1: the registry accepts its login").arg(name));
        else
            printOut(QStringLiteral("connection %1 reads %2: %3").arg(name, image, str(r.json, "digest")));
        cli.finish(ExitOk);
    }));
}

void testConnection(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const QString target = cli.args().arguments.value(1);
    // A registry reads images, a forge repositories: the connection's kind says which was given.
    cli.api().sourceConnection(name, cli.handle([&cli, name, target](const client::ApiResponse &c) {
        if (str(c.json, "kind") == QLatin1String("registry"))
            return testRegistry(cli, name, target);
        if (target.isEmpty())
            return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("name the repository to read through it"),
                                      QStringLiteral("connections test"),
                                      QStringLiteral("pando connections test %1 REPO [REF]").arg(name)});
        const QString ref = cli.args().arguments.value(2);
        printStatus(QStringLiteral("reading %1 through %2…").arg(target, name));
        cli.api().testSourceConnection(name, target, ref,
                                       cli.handle([&cli, name, target](const client::ApiResponse &r) {
                                           if (cli.args().json)
                                               printJson(r.json);
                                           else
                                               printOut(QStringLiteral("connection %1 reads %2: %3")
                                                            .arg(name, target, shortCommit(str(r.json, "commit"))));
                                           cli.finish(ExitOk);
                                       }));
    }));
}

void listRepositories(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().sourceConnectionRepositories(name, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue v : r.json.value(QStringLiteral("repositories")).toArray()) {
            const QJsonObject repo = v.toObject();
            rows << QStringList{str(repo, "full_name"),
                                repo.value(QStringLiteral("private")).toBool() ? QStringLiteral("private")
                                                                               : QStringLiteral("public"),
                                orDash(str(repo, "default_branch")), str(repo, "clone_url")};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("connection %1's token sees no repositories").arg(name));
        else
            printOut(table({QStringLiteral("REPOSITORY"), QStringLiteral("VISIBILITY"),
                            QStringLiteral("DEFAULT BRANCH"), QStringLiteral("CLONE URL")},
                           rows));
        cli.finish(ExitOk);
    }));
}

void listBranches(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const QString repo = cli.args().arguments.value(1);
    cli.api().sourceConnectionBranches(name, repo, cli.handle([&cli, repo](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue v : r.json.value(QStringLiteral("branches")).toArray()) {
            const QJsonObject branch = v.toObject();
            rows << QStringList{str(branch, "name"), orDash(str(branch, "commit").left(12))};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("%1 has no branches").arg(repo));
        else
            printOut(table({QStringLiteral("BRANCH"), QStringLiteral("COMMIT")}, rows));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef ConnectionTable[] = {
    {"connections", "list", "", 0, 0, {}, "list the source connections you may use", &listConnections},
    {"connections",
     "show",
     "NAME",
     1,
     1,
     {},
     "show a connection, its last test and the apps that read through it",
     &showConnection},
    {"connections",
     "add",
     "NAME",
     1,
     1,
     {{{&flags::Url, 0, Required},
       {&flags::Kind},
       {&flags::Owner},
       {&flags::TokenUser},
       {&flags::FromFile},
       {&flags::SshKey},
       {&flags::KnownHosts},
       {&flags::GitHubApp},
       {&flags::Installation},
       {&flags::AppKey},
       {&flags::OAuthClient},
       {&flags::CallbackPort},
       {&flags::NoBrowser}}},
     "add a connection: a forge and a token, deploy key, GitHub App or OAuth app that reads its private repositories, "
     "or an image registry's login",
     &addConnection,
     Needs::Token,
     nullptr,
     "A token is read from standard input (asked without echo on a terminal) or --from-file; a deploy key\n"
     "from --ssh-key with the server's host keys from --known-hosts; a GitHub App from --github-app,\n"
     "--installation and --app-key (its tokens are made as needed and last an hour); an OAuth application\n"
     "from --oauth-client with its client secret read like a token: the forge's page opens in a browser,\n"
     "and the forge sends it back to 127.0.0.1 (--callback-port), where this command waits for it.\n"
     "A registry (--kind registry --url https://ghcr.io) takes docker login's user as --token-user and\n"
     "its password or token like a token; apps whose source.image it covers are pulled with it.\n"
     "Administrators only.\n"
     "Apps whose repository it covers read through it from their next create or update\n"
     "(docs/user-guide.md)."},
    {"connections",
     "authorize",
     "NAME",
     1,
     1,
     {{{&flags::CallbackPort}, {&flags::NoBrowser}}},
     "authorize an OAuth connection again on its forge (its renewal was revoked or expired)",
     &authorizeConnection},
    {"connections",
     "test",
     "NAME [REPO [REF] | IMAGE]",
     1,
     3,
     {},
     "read REPO (a forge's connection) or IMAGE (a registry's) through the connection, as a deploy would",
     &testConnection,
     Needs::Token,
     nullptr,
     "A registry connection reads IMAGE's digest through the Docker engine without pulling it; with no\n"
     "IMAGE it asks the registry whether it takes the login."},
    {"connections",
     "repos",
     "NAME",
     1,
     1,
     {},
     "list the repositories the connection's token can see, through its forge's API",
     &listRepositories,
     Needs::Token,
     nullptr,
     "Token connections to GitHub, GitLab, Gitea, Bitbucket and Azure DevOps, and GitHub Apps (what the\n"
     "installation was given), only: a deploy key or a generic git host has no API. Create an app from\n"
     "one with its clone URL (docs/user-guide.md)."},
    {"connections",
     "branches",
     "NAME REPO",
     2,
     2,
     {},
     "list the branches of REPO (its address) through the connection's forge API",
     &listBranches},
    {"connections",
     "rm",
     "NAME",
     1,
     1,
     {},
     "remove a connection and its credential (refused while apps read through it)",
     &removeConnection},
};
static_assert(isComplete(ConnectionTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> connectionCommands()
{
    return ConnectionTable;
}

} // namespace pando::cli
