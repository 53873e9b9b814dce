#include "adapters/kit/dockerapi/dockerpull.h"

#include "adapters/kit/dockerapi/dockerimages.h"

#include <QJsonObject>

namespace pando::adapters::dockerapi {

namespace {

constexpr int CheckTimeoutMs = 60000;

bool isMissing(const QString &message)
{
    return message.contains(QLatin1String("manifest unknown"), Qt::CaseInsensitive) ||
           message.contains(QLatin1String("not found"), Qt::CaseInsensitive);
}

Error registryError(const QString &image, const QString &server, Error e)
{
    if (e.code == ErrorCode::Cancelled || e.code == ErrorCode::Unavailable || e.code == ErrorCode::Timeout)
        return e;
    e.where = image.isEmpty() ? server : image;
    if (wantsLogin(e.message)) {
        e.code = ErrorCode::Unauthorized;
        e.message = image.isEmpty()
                        ? QStringLiteral("the registry %1 refused the login: %2").arg(server, e.message)
                        : QStringLiteral("the registry refused the credential for %1: %2").arg(image, e.message);
    } else if (isMissing(e.message) || e.code == ErrorCode::NotFound) {
        e.code = ErrorCode::NotFound;
        e.message = QStringLiteral("the registry has no image %1: %2").arg(image, e.message);
    } else {
        e.code = ErrorCode::Failed;
        e.message = image.isEmpty() ? QStringLiteral("asking the registry %1 failed: %2").arg(server, e.message)
                                    : QStringLiteral("pulling %1 failed: %2").arg(image, e.message);
    }
    return e;
}

// A reference's repository and its tag or digest, as /images/create takes them.
std::pair<QString, QString> splitReference(const QString &image)
{
    if (const qsizetype at = image.indexOf(u'@'); at > 0)
        return {image.left(at), image.mid(at + 1)};
    const qsizetype colon = image.lastIndexOf(u':');
    if (colon > image.lastIndexOf(u'/'))
        return {image.left(colon), image.mid(colon + 1)};
    return {image, QStringLiteral("latest")};
}

} // namespace

bool wantsLogin(const QString &message)
{
    static const QLatin1String words[] = {
        QLatin1String("no basic auth credentials"),      QLatin1String("unauthorized"),
        QLatin1String("authentication required"),        QLatin1String("denied"),
        QLatin1String("incorrect username or password"), QLatin1String("no active sessions"),
    };
    return std::any_of(std::begin(words), std::end(words),
                       [&message](QLatin1String w) { return message.contains(w, Qt::CaseInsensitive); });
}

QByteArray registryAuthHeader(const RegistryCredential &credential)
{
    QByteArray json = compactJson(QJsonObject{{QStringLiteral("username"), credential.username},
                                              {QStringLiteral("password"), QString::fromUtf8(credential.secret)},
                                              {QStringLiteral("serveraddress"), credential.server}});
    QByteArray header = json.toBase64(QByteArray::Base64UrlEncoding);
    json.fill('\0');
    return header;
}

Status pullImage(const DockerClient &client, const QString &image, const RegistryCredential &credential,
                 const CancelToken &cancel, const std::function<void(const QString &line)> &progress, int stallMs)
{
    const auto [repository, tag] = splitReference(image);
    Request r;
    r.stallMs = stallMs;
    r.method = "POST";
    r.path = QStringLiteral("/images/create");
    r.addQuery(QStringLiteral("fromImage"), repository).addQuery(QStringLiteral("tag"), tag);
    r.headers.append({"X-Registry-Auth", registryAuthHeader(credential)});
    if (progress)
        progress(QStringLiteral("pulling %1 from %2 as %3").arg(image, credential.server, credential.username));
    QString error;
    JsonLines parser([&](const QJsonObject &o) {
        if (hasStreamError(o)) {
            error = streamError(o);
            return;
        }
        // Each layer's end and the outcome; not the ticks of its download and extraction.
        const QString status = o.value(QLatin1String("status")).toString();
        static const QLatin1String ticks[] = {QLatin1String("Downloading"), QLatin1String("Extracting"),
                                              QLatin1String("Waiting"), QLatin1String("Verifying Checksum"),
                                              QLatin1String("Pulling fs layer")};
        if (status.isEmpty() || !progress ||
            std::any_of(std::begin(ticks), std::end(ticks), [&status](QLatin1String t) { return status == t; }))
            return;
        const QString id = o.value(QLatin1String("id")).toString();
        progress(id.isEmpty() || status.startsWith(QLatin1String("Pulling from")) ? status
                                                                                  : id + QStringLiteral(": ") + status);
    });
    auto streamed = client.stream(r, cancel, [&parser](QByteArrayView chunk) {
        parser.feed(chunk);
        return true;
    });
    r.headers.clear();
    parser.finish();
    if (!streamed && streamed.error().code == ErrorCode::Timeout)
        return fail(ErrorCode::Timeout,
                    QStringLiteral("pulling %1 stalled: the engine reported no progress for %2 s")
                        .arg(image)
                        .arg(stallMs / 1000),
                    image,
                    QStringLiteral("the registry %1 may be unreachable or overloaded from the engine's host; deploy "
                                   "again later, or pull it there first (docker pull %2)")
                        .arg(credential.server, image));
    if (!streamed)
        return std::unexpected(registryError(image, credential.server, streamed.error()));
    if (!error.isEmpty())
        return std::unexpected(registryError(image, credential.server, Error{ErrorCode::Failed, error, image}));
    return {};
}

Result<QString> checkRegistry(const DockerClient &client, const QString &image, const RegistryCredential &credential)
{
    Request r;
    r.timeoutMs = CheckTimeoutMs;
    if (image.isEmpty()) {
        r.method = "POST";
        r.path = QStringLiteral("/auth");
        r.contentType = "application/json";
        r.body = compactJson(QJsonObject{{QStringLiteral("username"), credential.username},
                                         {QStringLiteral("password"), QString::fromUtf8(credential.secret)},
                                         {QStringLiteral("serveraddress"), credential.server}});
    } else {
        r.path = QStringLiteral("/distribution/") + image + QStringLiteral("/json");
        r.headers.append({"X-Registry-Auth", registryAuthHeader(credential)});
    }
    auto response = client.call(r);
    r.body.fill('\0');
    r.headers.clear();
    if (!response)
        return std::unexpected(registryError(image, credential.server, response.error()));
    if (image.isEmpty())
        return QStringLiteral("login accepted");
    const QString digest = response->json()
                               .object()
                               .value(QLatin1String("Descriptor"))
                               .toObject()
                               .value(QLatin1String("digest"))
                               .toString();
    if (digest.isEmpty())
        return fail(ErrorCode::Failed, QStringLiteral("the engine named no digest for %1").arg(image), image);
    return digest;
}

} // namespace pando::adapters::dockerapi
