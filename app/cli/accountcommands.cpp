// `pando login`, `pando users …` and `pando tokens …`. Passwords never come from argv (they
// would land in the shell's history and in ps): a no-echo prompt on a terminal, else stdin.
#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

#include <fcntl.h>
#include <unistd.h>

namespace pando::cli {

namespace {

// Writes data to path with mode 0600 from the first byte, through a temporary file renamed over
// the old one so a reader never sees half a secret.
Status writePrivate(const QString &path, const QByteArray &data)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(dir))
        return fail(ErrorCode::Failed, QStringLiteral("cannot create the directory %1").arg(dir), path);
    QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    const QByteArray temp = QFile::encodeName(path + QStringLiteral(".tmp"));
    const int fd = ::open(temp.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(strerror(errno))), path);
    const bool written = ::write(fd, data.constData(), size_t(data.size())) == data.size();
    const bool closed = ::close(fd) == 0;
    if (!written || !closed || ::rename(temp.constData(), QFile::encodeName(path).constData()) != 0) {
        ::unlink(temp.constData());
        return fail(ErrorCode::Failed, QStringLiteral("cannot write %1").arg(path), path);
    }
    return {};
}

} // namespace

QString sessionFilePath()
{
    QString base = qEnvironmentVariable("XDG_CONFIG_HOME");
    if (base.isEmpty())
        base = QDir::homePath() + QStringLiteral("/.config");
    return base + QStringLiteral("/pando/session");
}

QString savedSession()
{
    QFile file(sessionFilePath());
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readLine(1024)).trimmed();
}

namespace {

void sendLogin(Cli &cli, const QString &username, const QString &password);
void sendUser(Cli &cli, const QString &password);

void login(Cli &cli)
{
    const QString username = cli.args().value(QStringLiteral("username"));
    if (!username.isEmpty())
        return cli.readPassword(QStringLiteral("password for %1: ").arg(username),
                                [&cli, username](const QString &password) { sendLogin(cli, username, password); });
    if (!stdinIsTerminal())
        return cli.failWithCode(Error{ErrorCode::Invalid, QStringLiteral("no username given"),
                                      QStringLiteral("--username"),
                                      QStringLiteral("pass --username U; the password is then read from stdin")},
                                ExitUsage);
    cli.reader()->ask(QStringLiteral("username: "), false, [&cli](const std::optional<QString> &name) {
        if (cli.isFinished())
            return;
        const QString username = name.value_or(QString()).trimmed();
        cli.readPassword(QStringLiteral("password for %1: ").arg(username),
                         [&cli, username](const QString &password) { sendLogin(cli, username, password); });
    });
}

void sendLogin(Cli &cli, const QString &username, const QString &password)
{
    if (password.isEmpty())
        return cli.failWith(
            Error{ErrorCode::Invalid, QStringLiteral("the password is empty"), QStringLiteral("stdin")});
    cli.api().login(username, password, cli.handle([&cli](const client::ApiResponse &r) {
        const QString path = sessionFilePath();
        if (auto saved = writePrivate(path, str(r.json, "token").toUtf8() + '\n'); !saved)
            return cli.failWith(saved.error());
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject user = r.json.value(QStringLiteral("user")).toObject();
        printOut(QStringLiteral("logged in as %1 (%2) until %3; the session is saved in %4 "
                                "(PANDO_TOKEN, when set, still wins)")
                     .arg(str(user, "username"), str(user, "role"), timestamp(num(r.json, "expiresMs")), path));
        cli.finish(ExitOk);
    }));
}

void createUser(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.readPassword(QStringLiteral("password for %1: ").arg(name),
                     [&cli](const QString &password) { sendUser(cli, password); });
}

void sendUser(Cli &cli, const QString &password)
{
    const QString name = cli.args().arguments.value(0);
    if (password.isEmpty())
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("the password is empty"), QStringLiteral("stdin"),
                                  QStringLiteral("pipe it in: pando users create %1 --role R < file").arg(name)});
    cli.api().createUser(
        name, password, cli.args().value(QStringLiteral("role")), cli.handle([&cli](const client::ApiResponse &r) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("user %1 created (%2)").arg(str(r.json, "username"), str(r.json, "role")));
            cli.finish(ExitOk);
        }));
}

void listUsers(Cli &cli)
{
    cli.api().users(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("users")).toArray()) {
            const QJsonObject user = value.toObject();
            rows << QStringList{str(user, "username"), str(user, "role"),
                                user.value(QStringLiteral("disabled")).toBool() ? QStringLiteral("yes")
                                                                                : QStringLiteral("no"),
                                timestamp(num(user, "createdMs"))};
        }
        printOut(table(
            {QStringLiteral("USERNAME"), QStringLiteral("ROLE"), QStringLiteral("DISABLED"), QStringLiteral("CREATED")},
            rows));
        cli.finish(ExitOk);
    }));
}

void disableUser(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().disableUser(name, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("user %1 disabled").arg(name));
        cli.finish(ExitOk);
    }));
}

void createToken(Cli &cli)
{
    client::TokenRequest request{cli.args().arguments.value(0), {}, {}};
    if (cli.args().has(QStringLiteral("scope")))
        request.scopes = cli.args().value(QStringLiteral("scope")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    request.expiresIn = cli.args().value(QStringLiteral("expires"));
    cli.api().createToken(request, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        printOut(QStringLiteral("token %1 (%2) created; its secret is shown only now:")
                     .arg(str(r.json, "id"), str(r.json, "name")));
        printOut(str(r.json, "secret"));
        cli.finish(ExitOk);
    }));
}

void listTokens(Cli &cli)
{
    cli.api().tokens(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("tokens")).toArray()) {
            const QJsonObject token = value.toObject();
            QStringList scopes;
            for (const QJsonValue scope : token.value(QStringLiteral("scopes")).toArray())
                scopes << scope.toString();
            const qint64 expires = num(token, "expiresMs");
            const qint64 revoked = num(token, "revokedMs");
            rows << QStringList{str(token, "id"), str(token, "name"), orDash(scopes.join(QLatin1Char(','))),
                                expires == 0 ? QStringLiteral("never") : timestamp(expires),
                                revoked == 0 ? QStringLiteral("-") : timestamp(revoked)};
        }
        printOut(table({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("SCOPES"),
                        QStringLiteral("EXPIRES"), QStringLiteral("REVOKED")},
                       rows));
        cli.finish(ExitOk);
    }));
}

void revokeToken(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().revokeToken(id, cli.handle([&cli, id](const client::ApiResponse &) {
        if (!cli.args().json)
            printOut(QStringLiteral("token %1 revoked").arg(id));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef AccountTable[] = {
    {"",
     "login",
     "",
     0,
     0,
     {{{&flags::Username}}},
     "log in (password prompted, or read from stdin)",
     &login,
     Needs::Server,
     nullptr,
     "The session is saved to ~/.config/pando/session (0600); PANDO_TOKEN, when set, still wins."},
    {"users",
     "create",
     "NAME",
     1,
     1,
     {{{&flags::Role, 0, Required}}},
     "create a user (admin, operator, member, viewer)",
     &createUser,
     Needs::Token,
     nullptr,
     "The password is read from standard input (asked without echo on a terminal). The first user of an "
     "install must be an admin: create it with the initial token (PANDO_TOKEN from the data directory's "
     "initial-admin-token), which it spends. Locked out? pandod --reset-admin NAME (pandod stopped)."},
    {"users", "list", "", 0, 0, {}, "list the users", &listUsers},
    {"users", "disable", "NAME", 1, 1, {}, "disable a user: sessions end, tokens stop working", &disableUser},
    {"tokens",
     "create",
     "NAME",
     1,
     1,
     {{{&flags::Scope}, {&flags::Expires}}},
     "create an API token; its secret is printed once",
     &createToken,
     Needs::Token,
     nullptr,
     "--scope repeats (--scope apps.read --scope deploys.write): a token carries at least one."},
    {"tokens", "list", "", 0, 0, {}, "list API tokens (never their secrets)", &listTokens},
    {"tokens", "revoke", "ID", 1, 1, {}, "revoke a token; its WebSockets close", &revokeToken},
};
static_assert(isComplete(AccountTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> accountCommands()
{
    return AccountTable;
}

} // namespace pando::cli
