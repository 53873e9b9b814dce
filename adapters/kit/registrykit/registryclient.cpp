#include "registryclient.h"

#include "adapters/api/repoaddress.h"
#include "adapters/kit/httpkit/devicesink.h"

#include <QCryptographicHash>
#include <QFile>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUrl>
#include <QUrlQuery>

namespace pando::adapters::registrykit {

using namespace Qt::StringLiterals;

namespace {

constexpr int MaxRedirects = 5;
constexpr int BlobStallMs = 120000;
constexpr qsizetype MaxManifestBytes = qsizetype{4} * 1024 * 1024; // as the Distribution registry caps them

bool isLoopbackHost(const QString &host)
{
    if (host == u"localhost"_s)
        return true;
    const QHostAddress address(host.startsWith(u'[') ? host.mid(1, host.size() - 2) : host);
    return !address.isNull() && address.isLoopback();
}

// The parameters of a WWW-Authenticate challenge: realm="…",service="…".
QHash<QString, QString> challengeParameters(const QByteArray &challenge)
{
    static const QRegularExpression pair(uR"re(([A-Za-z_]+)\s*=\s*"([^"]*)")re"_s);
    QHash<QString, QString> out;
    for (const auto &match : pair.globalMatch(QString::fromUtf8(challenge)))
        out.insert(match.captured(1).toLower(), match.captured(2));
    return out;
}

QString registryErrors(const QByteArray &body)
{
    QStringList words;
    for (const auto &e : QJsonDocument::fromJson(body).object().value("errors"_L1).toArray()) {
        const QJsonObject o = e.toObject();
        words.append(o.value("message"_L1).toString().isEmpty()
                         ? o.value("code"_L1).toString()
                         : u"%1 (%2)"_s.arg(o.value("message"_L1).toString(), o.value("code"_L1).toString()));
    }
    return words.join(u"; "_s);
}

bool isRedirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

QByteArray acceptedManifests()
{
    return QByteArray(OciIndex.data()) + ", " + DockerList.data() + ", " + OciManifest.data() + ", " +
           DockerManifest.data();
}

} // namespace

QString sha256Digest(QByteArrayView data)
{
    return u"sha256:"_s + QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

Result<ImageName> parseImageName(const QString &repository, const QString &where)
{
    static const QRegularExpression component(u"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$"_s);
    const QString name = repository.trimmed();
    if (name.isEmpty())
        return fail(ErrorCode::Invalid, u"no repository is given"_s, where, u"e.g. ghcr.io/acme/api or busybox"_s);
    const QString last = name.section(u'/', -1);
    if (name.contains(u'@') || last.contains(u':'))
        return fail(ErrorCode::Invalid, u"\"%1\" names a tag or digest; the repository is the name alone"_s.arg(name),
                    where, u"put the tag in source.tag"_s);
    auto address = parseImageAddress(name);
    if (!address)
        return fail(ErrorCode::Invalid, address.error().message, where, address.error().hint);
    for (const QString &part : std::as_const(address->path))
        if (!component.match(part).hasMatch())
            return fail(
                ErrorCode::Invalid,
                u"\"%1\" is not a repository name: \"%2\" may hold lowercase letters, digits and . _ - only"_s.arg(
                    name, part),
                where);
    ImageName image;
    image.registry = address->port > 0 ? u"%1:%2"_s.arg(address->host).arg(address->port) : address->host;
    image.name = address->path.join(u'/');
    return image;
}

RegistryClient::RegistryClient(ImageName image, RegistryLogin login)
    : m_image(std::move(image)), m_login(std::move(login))
{
    const QString host = QUrl(u"//"_s + m_image.registry).host();
    const bool plain = isLoopbackHost(host);
    const QString authority = m_image.registry == u"docker.io"_s ? u"registry-1.docker.io"_s : m_image.registry;
    m_endpoint.baseUrl = ((plain ? u"http://"_s : u"https://"_s) + authority).toUtf8();
    m_endpoint.caFile = m_login.caFile;
    m_endpoint.insecure = m_login.insecure;
    m_endpoint.refuseLinkLocal = true;
}

Result<RegistryClient::Target> RegistryClient::targetOf(const QString &location, const QString &what) const
{
    const QUrl base(QString::fromUtf8(m_endpoint.baseUrl) + u'/');
    const QUrl url = base.resolved(QUrl(location));
    if (!url.isValid() || (url.scheme() != u"https"_s && url.scheme() != u"http"_s) || url.host().isEmpty())
        return fail(ErrorCode::Failed,
                    u"%1: the registry sent us to \"%2\", which is no web address"_s.arg(what, location));
    if (url.scheme() == u"http"_s && base.scheme() == u"https"_s && !m_login.insecure)
        return fail(ErrorCode::Failed,
                    u"%1: the registry sent us from HTTPS to plain HTTP (%2), which Pando does not follow"_s.arg(
                        what, url.host()));
    Target target;
    target.endpoint = m_endpoint;
    target.endpoint.baseUrl = url.toString(QUrl::RemovePath | QUrl::RemoveQuery | QUrl::RemoveFragment).toUtf8();
    target.request.path = url.path(QUrl::FullyEncoded);
    target.request.pathIsEncoded = true;
    for (const auto &[key, value] : QUrlQuery(url).queryItems(QUrl::FullyDecoded))
        target.request.query.append({key, value});
    return target;
}

httpkit::Exchange RegistryClient::send(httpkit::Request request, const CancelToken &cancel,
                                       const std::function<bool(QByteArrayView)> &onChunk)
{
    request.keepHeaders = true;
    if (request.timeoutMs == 0 && request.stallMs == 0)
        request.timeoutMs = m_login.timeoutMs;
    auto attempt = [&](const httpkit::Request &r) {
        httpkit::Request withAuth = r;
        if (!m_authorization.isEmpty())
            withAuth.headers.append({"Authorization", m_authorization});
        // A redirect's answer goes nowhere but to be read: its body is the registry's words.
        return httpkit::perform(m_endpoint, withAuth, &cancel, onChunk);
    };
    httpkit::Exchange exchange = attempt(request);
    if (exchange.transportFailed && m_login.insecure && m_endpoint.baseUrl.startsWith("https://")) {
        // An insecure registry may speak plain HTTP only, as Docker tries it.
        const httpkit::Endpoint before = m_endpoint;
        m_endpoint.baseUrl.replace(0, 8, "http://");
        if (httpkit::Exchange plain = attempt(request); !plain.transportFailed)
            exchange = std::move(plain);
        else
            m_endpoint = before;
    }
    if (exchange.status == 401 && !exchange.transportFailed) {
        if (auto in = logIn(exchange.header("WWW-Authenticate"), cancel); !in) {
            exchange.body = in.error().message.toUtf8();
            exchange.status = in.error().code == ErrorCode::Unauthorized ? 401 : 0;
            exchange.transportFailed = exchange.status == 0;
            exchange.error = in.error().message;
            return exchange;
        }
        exchange = attempt(request);
    }
    // Blobs are often served elsewhere (a CDN, a bucket): followed without the registry's login.
    for (int hop = 0; hop < MaxRedirects && !exchange.transportFailed && isRedirect(exchange.status); ++hop) {
        auto target = targetOf(QString::fromUtf8(exchange.header("Location")), request.path);
        if (!target) {
            exchange.transportFailed = true;
            exchange.error = target.error().message;
            return exchange;
        }
        target->request.method = "GET";
        target->request.timeoutMs = request.timeoutMs;
        target->request.stallMs = request.stallMs;
        target->request.keepHeaders = true;
        exchange = httpkit::perform(target->endpoint, target->request, &cancel, onChunk);
    }
    return exchange;
}

Status RegistryClient::logIn(const QByteArray &challenge, const CancelToken &cancel)
{
    const bool hadLogin = !m_authorization.isEmpty();
    const QString scheme = QString::fromLatin1(challenge).trimmed().section(u' ', 0, 0).toLower();
    const bool hasUser = !m_login.username.isEmpty();
    const QByteArray basic =
        "Basic " + (m_login.username + u':' + m_login.password).toUtf8().toBase64(); // never logged
    if (scheme == u"basic"_s) {
        if (!hasUser || hadLogin)
            return fail(ErrorCode::Unauthorized,
                        hasUser ? u"%1 refused the username and password"_s.arg(m_image.registry)
                                : u"%1 wants a login"_s.arg(m_image.registry),
                        u"source.username"_s, u"give source.username and source.password"_s);
        m_authorization = basic;
        return {};
    }
    if (scheme != u"bearer"_s)
        return fail(ErrorCode::Unauthorized,
                    u"%1 wants a login Pando does not speak (\"%2\")"_s.arg(m_image.registry, scheme),
                    u"source.repository"_s);
    const QHash<QString, QString> parameters = challengeParameters(challenge);
    auto realm = targetOf(parameters.value(u"realm"_s), u"the registry's token service"_s);
    if (!realm)
        return std::unexpected(realm.error());
    if (parameters.contains(u"service"_s))
        realm->request.query.append({u"service"_s, parameters.value(u"service"_s)});
    realm->request.query.append(
        {u"scope"_s, u"repository:%1:%2"_s.arg(m_image.name, m_push ? u"pull,push"_s : u"pull"_s)});
    realm->request.timeoutMs = m_login.timeoutMs;
    if (hasUser)
        realm->request.headers.append({"Authorization", basic});
    const httpkit::Exchange answer = httpkit::perform(realm->endpoint, realm->request, &cancel);
    if (answer.transportFailed)
        return fail(answer.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                    u"%1's token service did not answer: %2"_s.arg(m_image.registry, answer.error));
    if (answer.status == 401 || answer.status == 403)
        return fail(ErrorCode::Unauthorized,
                    hasUser ? u"%1 refused the username and password"_s.arg(m_image.registry)
                            : u"%1 wants a login"_s.arg(m_image.registry),
                    u"source.username"_s, u"give source.username and source.password"_s);
    const QJsonObject o = QJsonDocument::fromJson(answer.body).object();
    const QString token = o.value("token"_L1).toString().isEmpty() ? o.value("access_token"_L1).toString()
                                                                   : o.value("token"_L1).toString();
    if (answer.status != 200 || token.isEmpty())
        return fail(ErrorCode::Failed,
                    u"%1's token service answered %2 without a token"_s.arg(m_image.registry).arg(answer.status));
    const QByteArray next = "Bearer " + token.toUtf8();
    if (hadLogin && next == m_authorization)
        return fail(ErrorCode::Unauthorized, u"%1 refused its own token for %2"_s.arg(m_image.registry, m_image.name),
                    u"source.username"_s, u"check that this login may pull (and push) %1"_s.arg(m_image.name));
    m_authorization = next;
    return {};
}

Error RegistryClient::answerError(const httpkit::Exchange &exchange, const QString &what) const
{
    const QString where = u"source.repository"_s;
    if (exchange.cancelled)
        return Error{ErrorCode::Cancelled, u"%1: cancelled"_s.arg(what), where};
    if (exchange.transportFailed)
        return Error{exchange.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                     u"%1: %2 did not answer: %3"_s.arg(what, m_image.registry, exchange.error), where,
                     exchange.error.contains(u"SSL"_s) || exchange.error.contains(u"certificate"_s)
                         ? u"give the registry's CA in source.ca_certs, or set source.insecure"_s
                         : QString()};
    const QString words = registryErrors(exchange.body);
    const QString said = words.isEmpty() ? QString() : u": "_s + words;
    switch (exchange.status) {
    case 401:
        return Error{ErrorCode::Unauthorized, u"%1: %2 refused the login%3"_s.arg(what, m_image.registry, said),
                     u"source.username"_s,
                     u"give source.username and source.password that may use %1"_s.arg(m_image.name)};
    case 403:
        return Error{ErrorCode::Forbidden, u"%1: %2 does not allow it%3"_s.arg(what, m_image.registry, said), where};
    case 404:
        return Error{ErrorCode::NotFound, u"%1: %2 has no such thing%3"_s.arg(what, m_image.text(), said), where};
    default:
        return Error{ErrorCode::Failed,
                     u"%1: %2 answered %3%4"_s.arg(what, m_image.registry).arg(exchange.status).arg(said), where};
    }
}

Result<Manifest> RegistryClient::manifest(const QString &reference, const CancelToken &cancel)
{
    httpkit::Request r;
    r.path = path(u"/manifests/"_s + reference);
    r.headers.append({"Accept", acceptedManifests()});
    const QString what = u"the manifest of %1:%2"_s.arg(m_image.text(), reference);
    const httpkit::Exchange answer = send(r, cancel);
    if (answer.transportFailed || answer.status != 200)
        return std::unexpected(answerError(answer, what));
    if (answer.body.size() > MaxManifestBytes)
        return fail(ErrorCode::TooLarge, u"%1 is larger than 4 MiB"_s.arg(what));
    Manifest m;
    m.body = answer.body;
    m.mediaType = QString::fromLatin1(answer.header("Content-Type")).section(u';', 0, 0).trimmed();
    const QString declared = QJsonDocument::fromJson(m.body).object().value("mediaType"_L1).toString();
    if (!declared.isEmpty())
        m.mediaType = declared;
    m.digest = sha256Digest(m.body);
    if (reference.startsWith(u"sha256:"_s) && reference != m.digest)
        return fail(ErrorCode::Invalid, u"%1: the registry answered with other content (%2)"_s.arg(what, m.digest));
    if (m.mediaType != OciIndex && m.mediaType != DockerList && m.mediaType != OciManifest &&
        m.mediaType != DockerManifest)
        return fail(ErrorCode::Invalid, u"%1 is of a kind Pando does not read (%2)"_s.arg(what, m.mediaType),
                    u"source.repository"_s, u"push the image as an OCI or Docker v2 (schema 2) manifest"_s);
    return m;
}

Result<QStringList> RegistryClient::tags(const QString &where, const CancelToken &cancel)
{
    QStringList out;
    httpkit::Request r;
    r.path = path(u"/tags/list"_s);
    for (int page = 0; page < 1000; ++page) {
        const httpkit::Exchange answer = send(r, cancel);
        if (answer.transportFailed || answer.status != 200) {
            Error error = answerError(answer, u"the tags of %1"_s.arg(m_image.text()));
            error.where = where;
            return std::unexpected(error);
        }
        for (const auto &tag : QJsonDocument::fromJson(answer.body).object().value("tags"_L1).toArray())
            out.append(tag.toString());
        // The next page is named in a Link header: </v2/NAME/tags/list?n=…&last=…>; rel="next".
        const QByteArray link = answer.header("Link");
        const qsizetype open = link.indexOf('<');
        const qsizetype close = link.indexOf('>');
        if (open < 0 || close < open || !link.contains("rel=\"next\""))
            return out;
        auto next = targetOf(QString::fromUtf8(link.mid(open + 1, close - open - 1)), u"the tags"_s);
        if (!next)
            return std::unexpected(next.error());
        r = next->request;
    }
    return out;
}

Result<QByteArray> RegistryClient::blob(const QString &digest, const CancelToken &cancel)
{
    httpkit::Request r;
    r.path = path(u"/blobs/"_s + digest);
    const httpkit::Exchange answer = send(r, cancel);
    const QString what = u"blob %1 of %2"_s.arg(digest, m_image.text());
    if (answer.transportFailed || answer.status != 200)
        return std::unexpected(answerError(answer, what));
    if (sha256Digest(answer.body) != digest)
        return fail(ErrorCode::Invalid, u"%1 does not have the content its digest names"_s.arg(what));
    return answer.body;
}

Status RegistryClient::blobToFile(const QString &digest, const QString &file, const CancelToken &cancel)
{
    const QString what = u"layer %1 of %2"_s.arg(digest, m_image.text());
    QFile out(file);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        !out.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner))
        return fail(ErrorCode::Internal, u"%1: cannot write %2: %3"_s.arg(what, file, out.errorString()));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    httpkit::DeviceSink sink{out};
    httpkit::Request r;
    r.path = path(u"/blobs/"_s + digest);
    r.stallMs = BlobStallMs;
    const httpkit::Exchange answer = send(r, cancel, [&](QByteArrayView chunk) {
        hash.addData(chunk);
        return sink(chunk);
    });
    out.close();
    if (sink.failed)
        return fail(ErrorCode::Internal, u"%1: cannot write %2: %3"_s.arg(what, file, out.errorString()));
    if (answer.transportFailed || answer.status != 200)
        return std::unexpected(answerError(answer, what));
    if (u"sha256:"_s + QString::fromLatin1(hash.result().toHex()) != digest)
        return fail(ErrorCode::Invalid, u"%1 does not have the content its digest names"_s.arg(what));
    return {};
}

Result<bool> RegistryClient::hasBlob(const QString &digest, const CancelToken &cancel)
{
    // A GET stopped at its first byte: curl would wait for a HEAD's announced body.
    httpkit::Request r;
    r.path = path(u"/blobs/"_s + digest);
    r.stallMs = BlobStallMs;
    const httpkit::Exchange answer = send(r, cancel, [](QByteArrayView) { return false; });
    if (answer.stoppedByConsumer || answer.status == 200)
        return true;
    if (answer.status == 404 && !answer.transportFailed)
        return false;
    return std::unexpected(answerError(answer, u"blob %1 of %2"_s.arg(digest, m_image.text())));
}

Status RegistryClient::pushBlob(const QString &file, const QString &digest, const CancelToken &cancel)
{
    m_push = true;
    auto has = hasBlob(digest, cancel);
    if (!has)
        return std::unexpected(has.error());
    if (*has)
        return {};
    const QString what = u"uploading %1 to %2"_s.arg(digest, m_image.text());
    httpkit::Request start;
    start.method = "POST";
    start.path = path(u"/blobs/uploads/"_s);
    const httpkit::Exchange started = send(start, cancel);
    if (started.transportFailed || started.status != 202)
        return std::unexpected(answerError(started, what));
    auto target = targetOf(QString::fromUtf8(started.header("Location")), what);
    if (!target)
        return std::unexpected(target.error());
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Internal, u"%1: cannot read %2: %3"_s.arg(what, file, in.errorString()));
    httpkit::Request put = target->request;
    put.method = "PUT";
    put.addQuery(u"digest"_s, digest);
    put.bodyDevice = &in;
    put.contentType = "application/octet-stream";
    put.stallMs = BlobStallMs;
    put.keepHeaders = true;
    if (!m_authorization.isEmpty() && target->endpoint.baseUrl == m_endpoint.baseUrl)
        put.headers.append({"Authorization", m_authorization});
    const httpkit::Exchange done = httpkit::perform(target->endpoint, put, &cancel);
    if (done.transportFailed || done.status != 201)
        return std::unexpected(answerError(done, what));
    return {};
}

Result<QString> RegistryClient::pushManifest(const QString &reference, const QByteArray &body, const QString &mediaType,
                                             const CancelToken &cancel)
{
    m_push = true;
    httpkit::Request r;
    r.method = "PUT";
    r.path = path(u"/manifests/"_s + reference);
    r.body = body;
    r.contentType = mediaType.toLatin1();
    const httpkit::Exchange answer = send(r, cancel);
    if (answer.transportFailed || answer.status != 201)
        return std::unexpected(answerError(answer, u"pushing %1:%2"_s.arg(m_image.text(), reference)));
    return sha256Digest(body);
}

} // namespace pando::adapters::registrykit
