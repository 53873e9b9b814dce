#pragma once
// A client of the OCI Distribution API (Docker's registry HTTP API v2) for one repository: what
// the registry-image resource type needs to find an image's digest, fetch its manifest, config
// and layers, and push an image. It logs in as registries ask in their 401 answers: HTTP Basic,
// or a bearer token from the realm the registry names (Docker Hub, GHCR, Harbor, GitLab), reused
// until the registry refuses it. Loopback registries are spoken to over plain HTTP, as Docker
// does; any other only when the user says insecure. Blob downloads follow the registry's
// redirects (to a CDN or bucket) without its credentials, and are checked against their digest.
// Credentials never appear in errors or logs.
//
// Threading: a client is used by one thread at a time; separate clients may run concurrently.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace pando::adapters::registrykit {

// "HOST[:PORT]/NAME" as Docker reads it: the first component is the registry when it has a '.'
// or ':' or is "localhost", else Docker Hub (whose one-component names are "library/NAME").
struct ImageName {
    QString registry; // "ghcr.io", "127.0.0.1:5000", "docker.io"
    QString name;     // "acme/api", "library/busybox"
    QString text() const { return registry + u'/' + name; }
};
// Invalid (where `where`) when repository has a tag or digest, or names no repository.
Result<ImageName> parseImageName(const QString &repository, const QString &where);

struct RegistryLogin {
    QString username;
    QString password;
    bool insecure = false; // plain HTTP, or HTTPS without checking the certificate
    QString caFile;        // PEM roots for the registry's certificate; empty: the system's
    int timeoutMs = 60000; // for each request but a blob's body, which may take any time it progresses
};

// Media types a manifest may have.
inline constexpr QLatin1StringView OciIndex{"application/vnd.oci.image.index.v1+json"};
inline constexpr QLatin1StringView OciManifest{"application/vnd.oci.image.manifest.v1+json"};
inline constexpr QLatin1StringView DockerList{"application/vnd.docker.distribution.manifest.list.v2+json"};
inline constexpr QLatin1StringView DockerManifest{"application/vnd.docker.distribution.manifest.v2+json"};

struct Manifest {
    QByteArray body;
    QString mediaType;
    QString digest; // "sha256:…" of body
    bool isIndex() const { return mediaType == OciIndex || mediaType == DockerList; }
};

// "sha256:" and the hex SHA-256 of data.
QString sha256Digest(QByteArrayView data);

class RegistryClient {
public:
    RegistryClient(ImageName image, RegistryLogin login);

    // The manifest reference (a tag or a digest) names. NotFound when the registry has no such
    // tag; Unauthorized when it refuses the login; Invalid when it answers a digest's request
    // with other content.
    Result<Manifest> manifest(const QString &reference, const CancelToken &cancel);
    // The repository's tags, every page.
    Result<QStringList> tags(const QString &where, const CancelToken &cancel);
    // A small blob (a config) into memory, checked against its digest.
    Result<QByteArray> blob(const QString &digest, const CancelToken &cancel);
    // A blob into file (created 0600), checked against its digest; progress gets bytes so far.
    Status blobToFile(const QString &digest, const QString &file, const CancelToken &cancel);
    // Whether the repository has the blob already.
    Result<bool> hasBlob(const QString &digest, const CancelToken &cancel);
    // Uploads file as the blob digest (one request), unless the repository has it.
    Status pushBlob(const QString &file, const QString &digest, const CancelToken &cancel);
    // Puts a manifest under reference (a tag, or its digest); returns its digest.
    Result<QString> pushManifest(const QString &reference, const QByteArray &body, const QString &mediaType,
                                 const CancelToken &cancel);

private:
    struct Target {
        httpkit::Endpoint endpoint;
        httpkit::Request request;
    };
    // Sends request to the registry, logging in when it asks and following its redirects.
    httpkit::Exchange send(httpkit::Request request, const CancelToken &cancel,
                           const std::function<bool(QByteArrayView)> &onChunk = {});
    Status logIn(const QByteArray &challenge, const CancelToken &cancel);
    Error answerError(const httpkit::Exchange &exchange, const QString &what) const;
    Result<Target> targetOf(const QString &location, const QString &what) const;
    QString path(const QString &tail) const { return QStringLiteral("/v2/") + m_image.name + tail; }

    ImageName m_image;
    RegistryLogin m_login;
    httpkit::Endpoint m_endpoint;
    QByteArray m_authorization; // what the registry took last: "Basic …" or "Bearer …"
    bool m_push = false;        // whether a token must allow pushing
};

} // namespace pando::adapters::registrykit
