#include "tests/adapters/forge/forgestandin.h"

#include "adapters/kit/httpkit/httptransport.h"
#include "tests/support/component.h"

#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTest>

using namespace Qt::StringLiterals;

namespace pando::test {

ForgeStandIn::ForgeStandIn(QByteArray token, QString bitbucketUser)
    : m_token(std::move(token)), m_bitbucketUser(std::move(bitbucketUser))
{}

ForgeStandIn::~ForgeStandIn()
{
    stop();
}

namespace {

// Debian's python3, which has python3-jwt and python3-cryptography (the GitHub App's JWT is
// verified with them); a pyenv or venv python3 earlier on PATH may lack them.
const QString Python = u"/usr/bin/python3"_s;

} // namespace

bool ForgeStandIn::available()
{
    QProcess probe;
    probe.start(Python, {u"-c"_s, u"import jwt, cryptography"_s});
    return probe.waitForFinished(10000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
}

bool ForgeStandIn::start()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"FORGE_STANDIN_TOKEN"_s, QString::fromLatin1(m_token));
    env.insert(u"FORGE_STANDIN_USER"_s, m_bitbucketUser);
    m_process.setProcessEnvironment(env);
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process.start(Python, {sourceDir() + u"/tests/adapters/forge/forge_api_standin.py"_s});
    if (!m_process.waitForStarted(10000))
        return false;
    while (!m_process.canReadLine())
        if (!m_process.waitForReadyRead(10000))
            return false;
    const QByteArray line = m_process.readLine().trimmed();
    m_port = line.startsWith("port ") ? line.mid(5).toInt() : 0;
    return m_port > 0;
}

void ForgeStandIn::stop()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

QString ForgeStandIn::base() const
{
    return u"http://127.0.0.1:%1"_s.arg(m_port);
}

QJsonArray ForgeStandIn::statuses(const QString &forge) const
{
    return get(u"statuses"_s, forge).toArray();
}

QJsonObject ForgeStandIn::hooks(const QString &forge) const
{
    return get(u"hooks"_s, forge).toObject();
}

QJsonObject ForgeStandIn::hookEvents(const QString &forge) const
{
    return get(u"hook-events"_s, forge).toObject();
}

QJsonArray ForgeStandIn::comments(const QString &forge) const
{
    return get(u"comments"_s, forge).toArray();
}

void ForgeStandIn::deleteComment(const QString &forge, const QString &id) const
{
    control(u"/_standin/delete-comment"_s, {{"forge"_L1, forge}, {"id"_L1, id}});
}

QString ForgeStandIn::seedHook(const QString &forge, const QString &repo, const QString &url,
                               const QString &secret) const
{
    const QJsonObject answer = control(
        u"/_standin/seed-hook"_s, {{"forge"_L1, forge}, {"repo"_L1, repo}, {"url"_L1, url}, {"secret"_L1, secret}});
    const QJsonValue id = answer.value("id"_L1);
    return id.isDouble() ? QString::number(id.toInteger()) : id.toString();
}

QJsonArray ForgeStandIn::requests(const QString &forge) const
{
    return get(u"requests"_s, forge).toArray();
}

int ForgeStandIn::gets(const QString &forge, const QString &pathEnd) const
{
    int n = 0;
    for (const QJsonValue r : requests(forge))
        n += r["method"_L1].toString() == u"GET"_s && r["path"_L1].toString().endsWith(pathEnd);
    return n;
}

void ForgeStandIn::failFor(const QString &forge, const QString &repo, const QJsonValue &status) const
{
    control(u"/_standin/fail"_s, {{"forge"_L1, forge}, {"repo"_L1, repo}, {"status"_L1, status}});
}

void ForgeStandIn::reset() const
{
    control(u"/_standin/reset"_s, {});
}

void ForgeStandIn::nextPagesAt(const QString &host) const
{
    control(u"/_standin/next-host"_s, {{"host"_L1, host}});
}

void ForgeStandIn::gitHubApp(const QString &appId, const QByteArray &publicKey, const QJsonObject &installations,
                             const QByteArray &token, const QStringList &repositories) const
{
    control(u"/_standin/github-app"_s, {{"app_id"_L1, appId},
                                        {"public_key"_L1, QString::fromLatin1(publicKey)},
                                        {"installations"_L1, installations},
                                        {"token"_L1, QString::fromLatin1(token)},
                                        {"repositories"_L1, QJsonArray::fromStringList(repositories)}});
}

void ForgeStandIn::oauthApp(const QString &clientId, const QByteArray &clientSecret, int expiresIn, bool deny) const
{
    control(u"/_standin/oauth"_s, {{"client_id"_L1, clientId},
                                   {"client_secret"_L1, QString::fromLatin1(clientSecret)},
                                   {"expires_in"_L1, expiresIn},
                                   {"deny"_L1, deny}});
}

QString ForgeStandIn::authorizationRedirect(const QString &authorizeUrl)
{
    adapters::httpkit::Request request;
    request.timeoutMs = 10000;
    request.keepHeaders = true;
    const adapters::httpkit::Exchange exchange =
        adapters::httpkit::perform({.baseUrl = authorizeUrl.toUtf8()}, request);
    return exchange.status == 302 ? QString::fromUtf8(exchange.header("Location")) : QString();
}

void ForgeStandIn::revokeOAuth() const
{
    control(u"/_standin/oauth-revoke"_s, {});
}

RsaKeyPair rsaKeyPair()
{
    const auto openssl = [](const QStringList &args, const QByteArray &input) {
        QProcess process;
        process.start(u"openssl"_s, args);
        process.write(input);
        process.closeWriteChannel();
        return process.waitForFinished(30000) && process.exitCode() == 0 ? process.readAllStandardOutput()
                                                                         : QByteArray();
    };
    RsaKeyPair pair;
    pair.privatePem = openssl({u"genrsa"_s, u"-traditional"_s, u"2048"_s}, {});
    if (!pair.privatePem.isEmpty())
        pair.publicPem = openssl({u"rsa"_s, u"-pubout"_s}, pair.privatePem);
    return pair;
}

QJsonValue ForgeStandIn::get(const QString &what, const QString &forge) const
{
    adapters::httpkit::Request request;
    request.path = u"/_standin/"_s + what;
    request.query = {{u"forge"_s, forge}};
    request.timeoutMs = 10000;
    const QJsonDocument document =
        QJsonDocument::fromJson(adapters::httpkit::perform({.baseUrl = base().toUtf8()}, request).body);
    return document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object());
}

QJsonObject ForgeStandIn::control(const QString &path, const QJsonObject &body) const
{
    adapters::httpkit::Request request;
    request.method = "POST";
    request.path = path;
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    request.timeoutMs = 10000;
    const adapters::httpkit::Exchange exchange = adapters::httpkit::perform({.baseUrl = base().toUtf8()}, request);
    // QVERIFY2 returns void: a control route that fails is recorded, and its (empty) answer given.
    [&] {
        QVERIFY2(exchange.status == 200, exchange.body.constData());
    }();
    return QJsonDocument::fromJson(exchange.body).object();
}

} // namespace pando::test
