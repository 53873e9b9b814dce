#include "adapters/varsource/vault/vaultvarsource.h"

#include "adapters/api/goduration.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::vault {

namespace {

constexpr qint64 DefaultTimeoutMs = 60'000;
constexpr qint64 LongestTimeoutMs = qint64{10} * 60'000;

QString text(const QJsonObject &config, const QString &key)
{
    const QJsonValue value = config.value(key);
    return value.isString() ? value.toString() : value.isDouble() ? QString::number(value.toDouble()) : QString();
}

Result<int> timeoutOf(const QJsonObject &config, const QString &key)
{
    const QString written = text(config, key);
    if (written.isEmpty())
        return int(DefaultTimeoutMs);
    const std::optional<qint64> ms = parseGoDurationMs(written, LongestTimeoutMs);
    if (!ms || *ms <= 0)
        return fail(ErrorCode::Invalid, u"%1 \"%2\" is not a duration of up to 10m"_s.arg(key, written), key);
    return int(*ms);
}

// What Vault said went wrong: its `errors` list, joined.
QString vaultErrors(const QByteArray &body)
{
    QStringList said;
    for (const QJsonValue e : QJsonDocument::fromJson(body).object().value(u"errors"_s).toArray())
        said << e.toString().left(300);
    return said.isEmpty() ? QString() : said.join(u"; "_s);
}

Error answerError(const QString &what, const httpkit::Exchange &answer)
{
    if (answer.cancelled)
        return Error{ErrorCode::Cancelled, what + u": cancelled"_s, {}, {}};
    if (answer.transportFailed)
        return Error{answer.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                     what + u": "_s + answer.error,
                     {},
                     u"check the var source's url, and that Vault is up and reachable from Pando"_s};
    const QString said = vaultErrors(answer.body);
    const QString hint = answer.status == 403 ? u"the token may have expired, or its policy does not allow reading "
                                                u"this path"_s
                         : answer.status == 503 ? u"Vault may be sealed"_s
                                                : QString();
    return Error{answer.status == 403 ? ErrorCode::Forbidden : ErrorCode::Unavailable,
                 u"%1: Vault answered HTTP %2%3"_s.arg(what)
                     .arg(answer.status)
                     .arg(said.isEmpty() ? QString() : u" ("_s + said + u")"_s),
                 {},
                 hint};
}

// A source's config, read.
struct Settings {
    httpkit::Endpoint endpoint;
    QString token; // client_token, or what a login gave
    QString authBackend;
    QJsonObject authParams;
    QString vaultNamespace;
    QString pathPrefix;
    QStringList templates;
    QString sharedPath;
    QString pipeline;
    int loginTimeoutMs = int(DefaultTimeoutMs);
    int queryTimeoutMs = int(DefaultTimeoutMs);
    std::unique_ptr<QTemporaryDir> pemDir; // ca_cert, client_cert and client_key as 0600 files
};

class VaultSource final : public VarSource {
public:
    explicit VaultSource(Settings settings) : m_s(std::move(settings)) {}

    Result<std::optional<QJsonValue>> read(const QString &path, const CancelToken &cancel) override
    {
        if (path.split(u'/').contains(u".."_s))
            return fail(ErrorCode::Invalid, u"a var's path may not hold \"..\": %1"_s.arg(path));
        if (m_s.token.isEmpty()) {
            if (auto in = login(cancel); !in)
                return std::unexpected(in.error());
        }
        const QStringList candidates =
            path.startsWith(u'/') ? QStringList{path}
                                  : lookupPaths(m_s.pathPrefix, m_s.templates, m_s.sharedPath, m_s.pipeline, path);
        for (const QString &candidate : candidates) {
            auto found = readSecret(candidate, cancel);
            if (!found)
                return std::unexpected(found.error());
            const std::optional<QJsonObject> &secret = *found;
            if (!secret)
                continue;
            const QJsonObject &data = *secret;
            // As Concourse: a secret's `value` field is the var; without one, all its fields are.
            if (data.contains(u"value"_s))
                return std::optional<QJsonValue>(data.value(u"value"_s));
            return std::optional<QJsonValue>(data);
        }
        return std::optional<QJsonValue>();
    }

private:
    httpkit::Request request(const QByteArray &method, const QString &apiPath, int timeoutMs) const
    {
        httpkit::Request r;
        r.method = method;
        r.path = u"/v1/"_s + apiPath;
        r.timeoutMs = timeoutMs;
        if (!m_s.token.isEmpty())
            r.headers.append({"X-Vault-Token", m_s.token.toUtf8()});
        if (!m_s.vaultNamespace.isEmpty())
            r.headers.append({"X-Vault-Namespace", m_s.vaultNamespace.toUtf8()});
        return r;
    }

    Status login(const CancelToken &cancel)
    {
        httpkit::Request r = request("POST", u"auth/%1/login"_s.arg(m_s.authBackend), m_s.loginTimeoutMs);
        r.body = QJsonDocument(m_s.authParams).toJson(QJsonDocument::Compact);
        const httpkit::Exchange answer = httpkit::perform(m_s.endpoint, r, &cancel);
        if (answer.transportFailed || answer.cancelled || answer.status != 200)
            return std::unexpected(
                answerError(u"logging in to Vault with auth method %1"_s.arg(m_s.authBackend), answer));
        m_s.token = QJsonDocument::fromJson(answer.body)
                        .object()
                        .value(u"auth"_s)
                        .toObject()
                        .value(u"client_token"_s)
                        .toString();
        if (m_s.token.isEmpty())
            return fail(
                ErrorCode::Unavailable,
                u"logging in to Vault with auth method %1: its answer holds no client token"_s.arg(m_s.authBackend));
        return {};
    }

    // The mount a path is under and whether it is a KV version 2 one, asked once per mount.
    struct Mount {
        QString path; // "secret/", or "" when Vault would not say
        bool v2 = false;
    };
    Result<Mount> mountOf(const QString &path, const CancelToken &cancel)
    {
        for (auto it = m_mounts.cbegin(); it != m_mounts.cend(); ++it)
            if (!it.key().isEmpty() && path.startsWith(it.key()))
                return *it;
        const httpkit::Exchange answer = httpkit::perform(
            m_s.endpoint, request("GET", u"sys/internal/ui/mounts/"_s + path, m_s.queryTimeoutMs), &cancel);
        if (answer.transportFailed || answer.cancelled)
            return std::unexpected(answerError(u"asking Vault which secrets engine holds %1"_s.arg(path), answer));
        // An older Vault, or a policy that does not allow the question: a KV version 1 read.
        if (answer.status != 200)
            return Mount{};
        const QJsonObject data = QJsonDocument::fromJson(answer.body).object().value(u"data"_s).toObject();
        Mount mount{data.value(u"path"_s).toString(),
                    data.value(u"options"_s).toObject().value(u"version"_s).toString() == u"2"};
        if (!mount.path.isEmpty() && !mount.path.endsWith(u'/'))
            mount.path += u'/';
        m_mounts.insert(mount.path, mount);
        return mount;
    }

    Result<std::optional<QJsonObject>> readSecret(const QString &absolute, const CancelToken &cancel)
    {
        QString path = absolute;
        while (path.startsWith(u'/'))
            path.remove(0, 1);
        auto mount = mountOf(path, cancel);
        if (!mount)
            return std::unexpected(mount.error());
        const bool v2 = mount->v2 && !mount->path.isEmpty() && path.startsWith(mount->path);
        const QString apiPath = v2 ? mount->path + u"data/"_s + path.mid(mount->path.size()) : path;
        const httpkit::Exchange answer =
            httpkit::perform(m_s.endpoint, request("GET", apiPath, m_s.queryTimeoutMs), &cancel);
        if (answer.status == 404 && !answer.transportFailed)
            return std::optional<QJsonObject>();
        if (answer.transportFailed || answer.cancelled || answer.status != 200)
            return std::unexpected(answerError(u"reading %1 from Vault"_s.arg(absolute), answer));
        QJsonObject data = QJsonDocument::fromJson(answer.body).object().value(u"data"_s).toObject();
        if (v2)
            data = data.value(u"data"_s).toObject(); // a deleted version's data is null: not found
        if (data.isEmpty())
            return std::optional<QJsonObject>();
        return std::optional<QJsonObject>(data);
    }

    Settings m_s;
    QHash<QString, Mount> m_mounts;
};

// Writes a PEM text to a 0600 file in dir, for curl to read.
Result<QString> pemFile(QTemporaryDir &dir, const QString &name, const QString &pem)
{
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(pem.toUtf8()) < 0)
        return fail(ErrorCode::Internal, u"could not keep the var source's %1 for the connection"_s.arg(name));
    return file.fileName();
}

} // namespace

QStringList lookupPaths(const QString &pathPrefix, const QStringList &templates, const QString &sharedPath,
                        const QString &pipeline, const QString &var)
{
    QString prefix = pathPrefix;
    while (prefix.endsWith(u'/'))
        prefix.chop(1);
    QStringList paths;
    for (const QString &tmpl : templates) {
        if (tmpl.contains(u"{{.Pipeline}}") && pipeline.isEmpty())
            continue;
        QString filled = tmpl;
        filled.replace(u"{{.Team}}"_s, u"main"_s).replace(u"{{.Pipeline}}"_s, pipeline).replace(u"{{.Secret}}"_s, var);
        paths << prefix + (filled.startsWith(u'/') ? QString() : u"/"_s) + filled;
    }
    if (!sharedPath.isEmpty()) {
        QString shared = sharedPath;
        while (shared.startsWith(u'/'))
            shared.remove(0, 1);
        while (shared.endsWith(u'/'))
            shared.chop(1);
        paths << prefix + u'/' + shared + u'/' + var;
    }
    paths << prefix + u'/' + var;
    paths.removeDuplicates();
    return paths;
}

Result<std::unique_ptr<VarSource>> openVaultSource(const QJsonObject &config, const QString &pipeline)
{
    Settings source;
    const QUrl url(text(config, u"url"_s));
    if (!url.isValid() || (url.scheme() != u"https" && url.scheme() != u"http") || url.host().isEmpty())
        return fail(ErrorCode::Invalid, u"url \"%1\" is not an http:// or https:// URL"_s.arg(url.toDisplayString()),
                    u"url"_s);
    QString base = url.toString(QUrl::RemoveQuery | QUrl::RemoveFragment | QUrl::RemoveUserInfo);
    while (base.endsWith(u'/'))
        base.chop(1);
    source.endpoint.baseUrl = base.toUtf8();
    source.endpoint.refuseLinkLocal = true;
    source.endpoint.insecure =
        config.value(u"insecure_skip_verify"_s).toBool() || text(config, u"insecure_skip_verify"_s) == u"true";
    const QString ca = text(config, u"ca_cert"_s);
    const QString cert = text(config, u"client_cert"_s);
    const QString key = text(config, u"client_key"_s);
    if (cert.isEmpty() != key.isEmpty())
        return fail(ErrorCode::Invalid, u"client_cert and client_key go together"_s, u"client_key"_s);
    if (!ca.isEmpty() || !cert.isEmpty()) {
        source.pemDir = std::make_unique<QTemporaryDir>();
        if (!source.pemDir->isValid())
            return fail(ErrorCode::Internal, u"could not make a private directory for the var source's certificates"_s);
        if (!ca.isEmpty()) {
            auto file = pemFile(*source.pemDir, u"ca.pem"_s, ca);
            if (!file)
                return std::unexpected(file.error());
            source.endpoint.caFile = *file;
        }
        if (!cert.isEmpty()) {
            auto certFile = pemFile(*source.pemDir, u"client.pem"_s, cert);
            auto keyFile = pemFile(*source.pemDir, u"client.key"_s, key);
            if (!certFile || !keyFile)
                return std::unexpected(!certFile ? certFile.error() : keyFile.error());
            source.endpoint.clientCert = *certFile;
            source.endpoint.clientKey = *keyFile;
        }
    }
    source.token = text(config, u"client_token"_s);
    source.authBackend = text(config, u"auth_backend"_s);
    source.authParams = config.value(u"auth_params"_s).toObject();
    if (source.token.isEmpty() && source.authBackend.isEmpty())
        return fail(ErrorCode::Invalid, u"give client_token, or auth_backend and auth_params to log in"_s);
    if (!source.authBackend.isEmpty())
        source.token.clear(); // a login makes the token
    source.vaultNamespace = text(config, u"namespace"_s);
    source.pathPrefix = config.contains(u"path_prefix"_s) ? text(config, u"path_prefix"_s) : u"/concourse"_s;
    source.sharedPath = text(config, u"shared_path"_s);
    source.pipeline = pipeline;
    if (config.contains(u"lookup_templates"_s)) {
        for (const QJsonValue t : config.value(u"lookup_templates"_s).toArray())
            source.templates << t.toString();
    } else {
        source.templates = {u"/{{.Team}}/{{.Pipeline}}/{{.Secret}}"_s, u"/{{.Team}}/{{.Secret}}"_s};
    }
    auto login = timeoutOf(config, u"login_timeout"_s);
    auto query = timeoutOf(config, u"query_timeout"_s);
    if (!login || !query)
        return std::unexpected(!login ? login.error() : query.error());
    source.loginTimeoutMs = *login;
    source.queryTimeoutMs = *query;
    return std::unique_ptr<VarSource>(std::make_unique<VaultSource>(std::move(source)));
}

} // namespace pando::adapters::vault
