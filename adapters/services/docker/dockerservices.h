#pragma once
// Package services/docker provisions an app's backing services (PostgreSQL, MariaDB/MySQL,
// Redis) as Docker containers, each with a named volume for its data, on a network of the
// app's own that only the app and its services join (internal: it routes nowhere else). It
// talks to the Docker Engine API through dockerapi and runs the services' own client tools
// (psql, mysql, redis-cli, pg_dump, ...) inside their containers through the exec API.
//
// Threading: as ServiceProvisioner; the object holds only the socket path and the image table.

#include "adapters/api/services.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <QMap>

namespace pando::adapters::docker {

class DockerServiceProvisioner : public ServiceProvisioner {
public:
    // images: what a kind runs instead of Pando's own image, by "kind" or "kind:version"
    // ("postgres" → "postgres:15"; pandod --service-image).
    explicit DockerServiceProvisioner(QString socketPath = {}, QMap<QString, QString> images = {});

    QString runtimeKind() const override { return QStringLiteral("docker"); }
    QString defaultImage(const QString &kind, const QString &version) const override;
    Result<ServiceEndpoint> provision(const ServiceRequest &request, const CancelToken &cancel,
                                      const std::function<void(const QString &line)> &progress) override;
    Result<QList<ServiceInfo>> list(const QString &installId, const QString &app) override;
    Result<qint64> backup(const ServiceRequest &request, QIODevice &out, const CancelToken &cancel,
                          const std::function<void(const BackupProgress &)> &progress) override;
    Status seed(const ServiceRequest &request, const QByteArray &seed, const CancelToken &cancel) override;
    Status remove(const QString &installId, const QString &app, const QString &slot, bool deleteData) override;

    // Docker object names; the install's part is a digest, so names stay short and valid.
    static QString networkName(const QString &installId, const QString &app);
    static QString containerName(const QString &installId, const QString &app, const QString &slot);
    static QString volumeName(const QString &installId, const QString &app, const QString &slot);
    // Pando's own image for a kind: "pando/postgres:15", "pando/mariadb:10.11", "pando/redis:7".
    static QString pandoImage(const QString &kind, const QString &version);

private:
    Result<QString> ensureNetwork(const QString &installId, const QString &app);
    void releaseNetwork(const QString &installId, const QString &app);
    Status waitReady(const ServiceRequest &request, const QString &container, const CancelToken &cancel,
                     const std::function<void(const QString &line)> &progress);
    QString lastLogLines(const QString &container, int lines);

    dockerapi::DockerClient m_client;
    QMap<QString, QString> m_images;
};

} // namespace pando::adapters::docker
