// `pando login`, `pando users …` and `pando tokens …`. Passwords never come from argv (they
// would land in the shell's history and in ps): a no-echo prompt on a terminal, else stdin.
#include "cli.h"
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

QString readStdin()
{
    QFile input;
    if (!input.open(stdin, QIODevice::ReadOnly))
        return {};
    QByteArray bytes = input.readLine(4096);
    while (bytes.endsWith('\n') || bytes.endsWith('\r'))
        bytes.chop(1);
    const QString value = QString::fromUtf8(bytes);
    bytes.fill('\0');
    return value;
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

void Cli::readPassword(const QString &prompt, std::function<void(const QString &)> then)
{
    if (stdinIsTerminal()) {
        if (!m_reader)
            m_reader = new LineReader(this);
        m_reader->ask(prompt, true, [this, then](const std::optional<QString> &value) {
            if (!m_finished)
                then(value.value_or(QString()));
        });
        return;
    }
    then(readStdin());
}

void Cli::login()
{
    const QString username = m_args.value(QStringLiteral("username"));
    if (!username.isEmpty())
        return readPassword(QStringLiteral("password for %1: ").arg(username),
                            [this, username](const QString &password) { sendLogin(username, password); });
    if (!stdinIsTerminal())
        return failWithCode(Error{ErrorCode::Invalid, QStringLiteral("no username given"), QStringLiteral("--username"),
                                  QStringLiteral("pass --username U; the password is then read from stdin")},
                            ExitUsage);
    if (!m_reader)
        m_reader = new LineReader(this);
    m_reader->ask(QStringLiteral("username: "), false, [this](const std::optional<QString> &name) {
        if (m_finished)
            return;
        const QString username = name.value_or(QString()).trimmed();
        readPassword(QStringLiteral("password for %1: ").arg(username),
                     [this, username](const QString &password) { sendLogin(username, password); });
    });
}

void Cli::sendLogin(const QString &username, const QString &password)
{
    if (password.isEmpty())
        return failWith(Error{ErrorCode::Invalid, QStringLiteral("the password is empty"), QStringLiteral("stdin")});
    const QJsonObject body{{QStringLiteral("username"), username}, {QStringLiteral("password"), password}};
    m_client->postJson(
        QStringLiteral("/api/v1/sessions"), body, handle([this](const client::ApiResponse &r) {
            const QString path = sessionFilePath();
            if (auto saved = writePrivate(path, str(r.json, "token").toUtf8() + '\n'); !saved)
                return failWith(saved.error());
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
            }
            const QJsonObject user = r.json.value(QStringLiteral("user")).toObject();
            printOut(QStringLiteral("logged in as %1 (%2) until %3; the session is saved in %4 "
                                    "(PANDO_TOKEN, when set, still wins)")
                         .arg(str(user, "username"), str(user, "role"), timestamp(num(r.json, "expiresMs")), path));
            finish(ExitOk);
        }));
}

void Cli::createUser()
{
    const QString name = m_args.arguments.value(0);
    readPassword(QStringLiteral("password for %1: ").arg(name),
                 [this](const QString &password) { sendUser(password); });
}

void Cli::sendUser(const QString &password)
{
    const QString name = m_args.arguments.value(0);
    if (password.isEmpty())
        return failWith(Error{ErrorCode::Invalid, QStringLiteral("the password is empty"), QStringLiteral("stdin"),
                              QStringLiteral("pipe it in: pando users create %1 --role R < file").arg(name)});
    const QJsonObject body{{QStringLiteral("username"), name},
                           {QStringLiteral("password"), password},
                           {QStringLiteral("role"), m_args.value(QStringLiteral("role"))}};
    m_client->postJson(
        QStringLiteral("/api/v1/users"), body, handle([this](const client::ApiResponse &r) {
            if (m_args.json)
                printJson(r.json);
            else
                printOut(QStringLiteral("user %1 created (%2)").arg(str(r.json, "username"), str(r.json, "role")));
            finish(ExitOk);
        }));
}

void Cli::listUsers()
{
    m_client->get(QStringLiteral("/api/v1/users"), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : r.json.value(QStringLiteral("users")).toArray()) {
                          const QJsonObject user = value.toObject();
                          rows << QStringList{str(user, "username"), str(user, "role"),
                                              user.value(QStringLiteral("disabled")).toBool() ? QStringLiteral("yes")
                                                                                              : QStringLiteral("no"),
                                              timestamp(num(user, "createdMs"))};
                      }
                      printOut(table({QStringLiteral("USERNAME"), QStringLiteral("ROLE"), QStringLiteral("DISABLED"),
                                      QStringLiteral("CREATED")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::disableUser()
{
    const QString name = m_args.arguments.value(0);
    m_client->postJson(QStringLiteral("/api/v1/users/") + segment(name) + QStringLiteral("/disable"), {},
                       handle([this, name](const client::ApiResponse &r) {
                           if (m_args.json)
                               printJson(r.json);
                           else
                               printOut(QStringLiteral("user %1 disabled").arg(name));
                           finish(ExitOk);
                       }));
}

void Cli::createToken()
{
    QJsonObject body{{QStringLiteral("name"), m_args.arguments.value(0)}};
    if (m_args.has(QStringLiteral("scope")))
        body.insert(QStringLiteral("scopes"),
                    QJsonArray::fromStringList(
                        m_args.value(QStringLiteral("scope")).split(QLatin1Char(','), Qt::SkipEmptyParts)));
    if (m_args.has(QStringLiteral("expires")))
        body.insert(QStringLiteral("expiresIn"), m_args.value(QStringLiteral("expires")));
    m_client->postJson(QStringLiteral("/api/v1/tokens"), body, handle([this](const client::ApiResponse &r) {
                           if (m_args.json) {
                               printJson(r.json);
                               return finish(ExitOk);
                           }
                           printOut(QStringLiteral("token %1 (%2) created; its secret is shown only now:")
                                        .arg(str(r.json, "id"), str(r.json, "name")));
                           printOut(str(r.json, "secret"));
                           finish(ExitOk);
                       }));
}

void Cli::listTokens()
{
    m_client->get(QStringLiteral("/api/v1/tokens"), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : r.json.value(QStringLiteral("tokens")).toArray()) {
                          const QJsonObject token = value.toObject();
                          QStringList scopes;
                          for (const QJsonValue &scope : token.value(QStringLiteral("scopes")).toArray())
                              scopes << scope.toString();
                          const qint64 expires = num(token, "expiresMs");
                          const qint64 revoked = num(token, "revokedMs");
                          rows << QStringList{str(token, "id"), str(token, "name"),
                                              orDash(scopes.join(QLatin1Char(','))),
                                              expires == 0 ? QStringLiteral("never") : timestamp(expires),
                                              revoked == 0 ? QStringLiteral("-") : timestamp(revoked)};
                      }
                      printOut(table({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("SCOPES"),
                                      QStringLiteral("EXPIRES"), QStringLiteral("REVOKED")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::revokeToken()
{
    const QString id = m_args.arguments.value(0);
    m_client->remove(QStringLiteral("/api/v1/tokens/") + segment(id), handle([this, id](const client::ApiResponse &) {
                         if (!m_args.json)
                             printOut(QStringLiteral("token %1 revoked").arg(id));
                         finish(ExitOk);
                     }));
}

} // namespace pando::cli
