#include "adapters/services/docker/dockerservices.h"

#include "adapters/kit/dockerapi/tarball.h"
#include "adapters/services/docker/dockerexec.h"
#include "adapters/services/docker/servicekinds.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

using namespace Qt::StringLiterals;

namespace pando::adapters::docker {

using dockerapi::Request;

namespace {

// A seed is a development data set: ten minutes is plenty, and a stuck one ends.
constexpr int SeedTimeoutMs = 10 * 60 * 1000;

QByteArray compact(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString installDigest(const QString &installId)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(installId.toUtf8(), QCryptographicHash::Sha256).toHex().left(10));
}

QJsonObject labelsJson(const Labels &labels)
{
    QJsonObject out;
    for (auto it = labels.cbegin(); it != labels.cend(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

Labels baseLabels(const QString &installId, const QString &app)
{
    return {{QLatin1String(LabelManaged), u"true"_s},
            {QLatin1String(LabelInstall), installId},
            {QLatin1String(LabelApp), app}};
}

// Whatever a service or its tools said, with the password taken out should one echo it.
QString scrub(QString text, const QString &password)
{
    if (password.size() >= 4)
        text.replace(password, u"***"_s);
    return text.simplified().right(600);
}

Status deleteObject(const dockerapi::DockerClient &client, const QString &path, bool force)
{
    Request r;
    r.method = "DELETE";
    r.path = path;
    if (force)
        r.addQuery(u"force"_s, u"1"_s);
    r.timeoutMs = 60000;
    auto done = client.call(r);
    if (!done && done.error().code != ErrorCode::NotFound)
        return std::unexpected(done.error());
    return {};
}

} // namespace

DockerServiceProvisioner::DockerServiceProvisioner(QString socketPath, QMap<QString, QString> images)
    : m_client(std::move(socketPath)), m_images(std::move(images))
{}

QString DockerServiceProvisioner::pandoImage(const QString &kind, const QString &version)
{
    const QString repo = kind == u"mysql" ? u"mariadb"_s : kind;
    return u"pando/%1:%2"_s.arg(repo, version);
}

QString DockerServiceProvisioner::defaultImage(const QString &kind, const QString &version) const
{
    if (QString exact = m_images.value(kind + u':' + version); !exact.isEmpty())
        return exact;
    if (QString any = m_images.value(kind); !any.isEmpty())
        return any;
    return pandoImage(kind, version);
}

QString DockerServiceProvisioner::networkName(const QString &installId, const QString &app)
{
    return u"pando-%1-services-%2"_s.arg(app, installDigest(installId));
}

QString DockerServiceProvisioner::containerName(const QString &installId, const QString &app, const QString &slot)
{
    return u"pando-%1-svc-%2-%3"_s.arg(app, slot, installDigest(installId));
}

QString DockerServiceProvisioner::volumeName(const QString &installId, const QString &app, const QString &slot)
{
    return u"pando-%1-svc-%2-%3"_s.arg(app, slot, installDigest(installId));
}

Result<QString> DockerServiceProvisioner::ensureNetwork(const QString &installId, const QString &app)
{
    const QString name = networkName(installId, app);
    if (auto found = m_client.get(u"/networks/"_s + name)) {
        const Labels labels = [&] {
            Labels l;
            const QJsonObject o = found->json().object().value(u"Labels"_s).toObject();
            for (auto it = o.begin(); it != o.end(); ++it)
                l.insert(it.key(), it.value().toString());
            return l;
        }();
        if (labels.value(QLatin1String(LabelInstall)) != installId)
            return fail(ErrorCode::Conflict, u"a network named %1 exists but is not Pando's"_s.arg(name),
                        u"docker network %1"_s.arg(name), u"remove it (docker network rm %1)"_s.arg(name));
        return name;
    } else if (found.error().code != ErrorCode::NotFound) {
        return std::unexpected(found.error());
    }
    const QJsonObject body{{u"Name"_s, name},
                           {u"Driver"_s, u"bridge"_s},
                           // Internal: the app reaches its services here and nothing else; the
                           // services themselves reach nothing off the host.
                           {u"Internal"_s, true},
                           {u"CheckDuplicate"_s, true},
                           {u"Labels"_s, labelsJson(baseLabels(installId, app))}};
    auto created = m_client.post(u"/networks/create"_s, {}, compact(body));
    if (!created && created.error().code != ErrorCode::Conflict)
        return std::unexpected(created.error());
    return name;
}

void DockerServiceProvisioner::releaseNetwork(const QString &installId, const QString &app)
{
    const QString name = networkName(installId, app);
    auto found = m_client.get(u"/networks/"_s + name);
    if (!found)
        return;
    // The app's own containers join it too; it goes only when nobody is on it.
    if (!found->json().object().value(u"Containers"_s).toObject().isEmpty())
        return;
    const QJsonObject filters{{u"network"_s, QJsonArray{name}}};
    auto users =
        m_client.get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, QString::fromUtf8(compact(filters))}});
    if (!users || !users->json().array().isEmpty())
        return;
    discardResult(deleteObject(m_client, u"/networks/"_s + name, false),
                  "an unused network is tried again next release");
}

QString DockerServiceProvisioner::lastLogLines(const QString &container, int lines)
{
    Request r;
    r.path = u"/containers/%1/logs"_s.arg(container);
    r.addQuery(u"stdout"_s, u"1"_s).addQuery(u"stderr"_s, u"1"_s).addQuery(u"tail"_s, QString::number(lines));
    r.timeoutMs = 10000;
    auto response = m_client.call(r);
    if (!response)
        return {};
    // Frames: 8-byte headers before each piece; keep the text.
    const QByteArray &body = response->body;
    QByteArray text;
    for (qsizetype pos = 0; pos + 8 <= body.size();) {
        const quint32 size = (quint32(uchar(body[pos + 4])) << 24) | (quint32(uchar(body[pos + 5])) << 16) |
                             (quint32(uchar(body[pos + 6])) << 8) | quint32(uchar(body[pos + 7]));
        text.append(body.mid(pos + 8, size));
        pos += 8 + qsizetype(size);
    }
    QStringList out = QString::fromUtf8(text).split(u'\n', Qt::SkipEmptyParts);
    return out.join(u" | "_s);
}

Status DockerServiceProvisioner::waitReady(const ServiceRequest &request, const QString &container,
                                           const CancelToken &cancel,
                                           const std::function<void(const QString &line)> &progress)
{
    const detail::ServiceKind kind = detail::serviceKind(request.kind, request.credentials);
    QDeadlineTimer deadline(qMax(1000, request.readyTimeoutMs));
    QString lastSeen = u"no check finished"_s;
    int attempts = 0;
    auto notReady = [&](const QString &why) {
        const QString logs = scrub(lastLogLines(container, 5), request.credentials.password);
        return fail(ErrorCode::Failed,
                    u"the %1 service in slot %2 %3; last check: %4%5"_s.arg(
                        request.kind, request.slot, why, scrub(lastSeen, request.credentials.password),
                        logs.isEmpty() ? QString() : u"; its last output: "_s + logs),
                    u"services."_s + request.slot,
                    u"see `pando services list %1`; the image is %2"_s.arg(request.app, request.image));
    };
    while (true) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled,
                        u"cancelled while waiting for the %1 service in slot %2"_s.arg(request.kind, request.slot));
        auto inspected = m_client.get(u"/containers/%1/json"_s.arg(container));
        if (!inspected)
            return std::unexpected(inspected.error());
        const QJsonObject state = inspected->json().object().value(u"State"_s).toObject();
        const QString status = state.value(u"Status"_s).toString();
        const int restarts = inspected->json().object().value(u"RestartCount"_s).toInt();
        // A server that exits is restarted by its restart policy; twice is enough to know.
        if (status == u"exited" || status == u"dead" || restarts >= 2) {
            lastSeen =
                u"the server exited (code %1, %2 restart(s))"_s.arg(state.value(u"ExitCode"_s).toInt()).arg(restarts);
            return std::unexpected(notReady(u"stopped before it accepted connections"_s).error());
        }
        if (status == u"running") {
            ++attempts;
            auto checked = execIn(m_client, container, kind.readyCommand, kind.toolEnv, 15000, cancel);
            if (!checked) {
                lastSeen = checked.error().message;
            } else if (checked->exitCode == 0 &&
                       (kind.readyOutput.isEmpty() || QString::fromUtf8(checked->output).contains(kind.readyOutput))) {
                if (progress)
                    progress(u"%1 accepts connections after %2 check(s)"_s.arg(request.slot).arg(attempts));
                return {};
            } else {
                const QString said = QString::fromUtf8(checked->errorTail + ' ' + checked->output).trimmed();
                lastSeen = u"exit code %1%2"_s.arg(checked->exitCode).arg(said.isEmpty() ? QString() : u": "_s + said);
            }
        } else {
            lastSeen = u"the container is %1"_s.arg(status);
        }
        if (deadline.hasExpired())
            return std::unexpected(
                notReady(u"did not accept connections within %1s"_s.arg(request.readyTimeoutMs / 1000)).error());
        QThread::msleep(200);
    }
}

Result<ServiceEndpoint> DockerServiceProvisioner::provision(const ServiceRequest &input, const CancelToken &cancel,
                                                            const std::function<void(const QString &line)> &progress)
{
    ServiceRequest request = input;
    const QString where = u"services."_s + request.slot;
    const detail::ServiceKind kind = detail::serviceKind(request.kind, request.credentials);
    if (kind.port == 0)
        return fail(ErrorCode::Invalid, u"unknown service kind \"%1\""_s.arg(request.kind), where);
    if (request.image.isEmpty())
        request.image = defaultImage(request.kind, request.version);
    if (auto image = m_client.get(u"/images/%1/json"_s.arg(request.image)); !image) {
        if (image.error().code != ErrorCode::NotFound)
            return std::unexpected(image.error());
        return fail(
            ErrorCode::Failed,
            u"there is no image %1 for the %2 service in slot %3"_s.arg(request.image, request.kind, request.slot),
            where,
            u"make Pando's images with scripts/lib.sh's ensure_service_images, or pull one and point "
            u"pandod at it with --service-image %1=IMAGE"_s.arg(request.kind));
    }
    auto network = ensureNetwork(request.installId, request.app);
    if (!network)
        return std::unexpected(network.error());

    const QString name = containerName(request.installId, request.app, request.slot);
    const QString volume = volumeName(request.installId, request.app, request.slot);
    ServiceEndpoint endpoint{request.slot, kind.port, *network, {}, volume, request.image};

    // A container from an earlier deploy: started if it stopped, replaced if its image changed
    // (the data stays in the volume).
    if (auto existing = m_client.get(u"/containers/%1/json"_s.arg(name))) {
        const QJsonObject o = existing->json().object();
        const QString id = o.value(u"Id"_s).toString();
        if (o.value(u"Config"_s).toObject().value(u"Image"_s).toString() == request.image) {
            if (!o.value(u"State"_s).toObject().value(u"Running"_s).toBool()) {
                if (auto started = m_client.post(u"/containers/%1/start"_s.arg(id)); !started)
                    return std::unexpected(started.error());
            }
            if (auto ready = waitReady(request, id, cancel, progress); !ready)
                return std::unexpected(ready.error());
            endpoint.containerId = id;
            return endpoint;
        }
        if (progress)
            progress(u"%1: the image changed to %2; replacing the container, keeping the data"_s.arg(request.slot,
                                                                                                     request.image));
        if (auto removed = deleteObject(m_client, u"/containers/"_s + id, true); !removed)
            return std::unexpected(removed.error());
    } else if (existing.error().code != ErrorCode::NotFound) {
        return std::unexpected(existing.error());
    }

    bool madeVolume = false;
    if (auto found = m_client.get(u"/volumes/"_s + volume); !found) {
        if (found.error().code != ErrorCode::NotFound)
            return std::unexpected(found.error());
        Labels labels = baseLabels(request.installId, request.app);
        labels.insert(QLatin1String(LabelService), request.slot);
        labels.insert(QLatin1String(LabelServiceKind), request.kind);
        auto created = m_client.post(u"/volumes/create"_s, {},
                                     compact(QJsonObject{{u"Name"_s, volume}, {u"Labels"_s, labelsJson(labels)}}));
        if (!created)
            return std::unexpected(created.error());
        madeVolume = true;
    }

    Labels labels = baseLabels(request.installId, request.app);
    labels.insert(QLatin1String(LabelService), request.slot);
    labels.insert(QLatin1String(LabelServiceKind), request.kind);
    QJsonArray env;
    for (auto it = kind.env.cbegin(); it != kind.env.cend(); ++it)
        env.append(QString(it.key() + u'=' + it.value()));
    QJsonObject body{{u"Image"_s, request.image}, {u"Env"_s, env}, {u"Labels"_s, labelsJson(labels)}};
    if (!kind.command.isEmpty())
        body.insert(u"Cmd"_s, QJsonArray::fromStringList(kind.command));
    body.insert(u"HostConfig"_s, QJsonObject{{u"Binds"_s, QJsonArray{QString(volume + u':' + kind.dataPath)}},
                                             {u"NetworkMode"_s, *network},
                                             // A server that crashes, or a Docker that restarts, brings it back.
                                             {u"RestartPolicy"_s, QJsonObject{{u"Name"_s, u"unless-stopped"_s}}},
                                             {u"Init"_s, true}});
    body.insert(u"NetworkingConfig"_s,
                QJsonObject{{u"EndpointsConfig"_s,
                             QJsonObject{{*network, QJsonObject{{u"Aliases"_s, QJsonArray{request.slot}}}}}}});

    auto cleanUp = [&](const QString &id) {
        if (!id.isEmpty())
            discardResult(deleteObject(m_client, u"/containers/"_s + id, true),
                          "the provisioning error is the one to report");
        // A volume made now holds nothing but a half-initialised first start: it goes, so the
        // next deploy starts clean. One that held earlier data stays.
        if (madeVolume)
            discardResult(deleteObject(m_client, u"/volumes/"_s + volume, true),
                          "the provisioning error is the one to report");
        releaseNetwork(request.installId, request.app);
    };
    if (progress)
        progress(u"%1: starting %2"_s.arg(request.slot, request.image));
    auto created = m_client.post(u"/containers/create"_s, {{u"name"_s, name}}, compact(body));
    if (!created) {
        cleanUp({});
        return std::unexpected(created.error());
    }
    const QString id = created->json().object().value(u"Id"_s).toString();
    if (auto started = m_client.post(u"/containers/%1/start"_s.arg(id)); !started) {
        cleanUp(id);
        return std::unexpected(started.error());
    }
    if (auto ready = waitReady(request, id, cancel, progress); !ready) {
        cleanUp(id);
        return std::unexpected(ready.error());
    }
    endpoint.containerId = id;
    endpoint.fresh = madeVolume;
    return endpoint;
}

Result<QList<ServiceInfo>> DockerServiceProvisioner::list(const QString &installId, const QString &app)
{
    Labels filter{{QLatin1String(LabelManaged), u"true"_s}, {QLatin1String(LabelInstall), installId}};
    if (!app.isEmpty())
        filter.insert(QLatin1String(LabelApp), app);
    // Docker's label filter with a key alone matches any value.
    QJsonArray labels;
    for (auto it = filter.cbegin(); it != filter.cend(); ++it)
        labels.append(QString(it.key() + u'=' + it.value()));
    labels.append(QLatin1String(LabelService));
    const QString filters = QString::fromUtf8(compact(QJsonObject{{u"label"_s, labels}}));

    QMap<QPair<QString, QString>, ServiceInfo> found;
    auto containers = m_client.get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, filters}});
    if (!containers)
        return std::unexpected(containers.error());
    for (const QJsonValue v : containers->json().array()) {
        const QJsonObject o = v.toObject();
        const QJsonObject l = o.value(u"Labels"_s).toObject();
        ServiceInfo &info =
            found[{l.value(QLatin1String(LabelApp)).toString(), l.value(QLatin1String(LabelService)).toString()}];
        info.app = l.value(QLatin1String(LabelApp)).toString();
        info.slot = l.value(QLatin1String(LabelService)).toString();
        info.kind = l.value(QLatin1String(LabelServiceKind)).toString();
        info.image = o.value(u"Image"_s).toString();
        info.containerId = o.value(u"Id"_s).toString();
        info.state = o.value(u"State"_s).toString();
    }
    auto volumes = m_client.get(u"/volumes"_s, {{u"filters"_s, filters}});
    if (!volumes)
        return std::unexpected(volumes.error());
    for (const QJsonValue v : volumes->json().object().value(u"Volumes"_s).toArray()) {
        const QJsonObject o = v.toObject();
        const QJsonObject l = o.value(u"Labels"_s).toObject();
        ServiceInfo &info =
            found[{l.value(QLatin1String(LabelApp)).toString(), l.value(QLatin1String(LabelService)).toString()}];
        info.app = l.value(QLatin1String(LabelApp)).toString();
        info.slot = l.value(QLatin1String(LabelService)).toString();
        if (info.kind.isEmpty())
            info.kind = l.value(QLatin1String(LabelServiceKind)).toString();
        info.volume = o.value(u"Name"_s).toString();
    }
    QList<ServiceInfo> out;
    for (ServiceInfo info : std::as_const(found)) {
        if (info.state.isEmpty())
            info.state = u"absent"_s;
        out.append(info);
    }
    return out;
}

Result<qint64> DockerServiceProvisioner::backup(const ServiceRequest &request, QIODevice &out,
                                                const CancelToken &cancel,
                                                const std::function<void(const BackupProgress &)> &progress)
{
    const QString where = u"services."_s + request.slot;
    const detail::ServiceKind kind = detail::serviceKind(request.kind, request.credentials);
    if (kind.port == 0)
        return fail(ErrorCode::Invalid, u"unknown service kind \"%1\""_s.arg(request.kind), where);
    const QString name = containerName(request.installId, request.app, request.slot);
    auto inspected = m_client.get(u"/containers/%1/json"_s.arg(name));
    if (!inspected) {
        if (inspected.error().code == ErrorCode::NotFound)
            return fail(ErrorCode::NotFound,
                        u"app %1 has no running service in slot %2"_s.arg(request.app, request.slot), where);
        return std::unexpected(inspected.error());
    }
    if (!inspected->json().object().value(u"State"_s).toObject().value(u"Running"_s).toBool())
        return fail(ErrorCode::Conflict,
                    u"the service in slot %1 of %2 is not running"_s.arg(request.slot, request.app), where,
                    u"deploy the app to start it"_s);
    qint64 written = 0;
    QString writeError;
    auto ran = execIn(m_client, name, kind.dumpCommand, kind.toolEnv, 0, cancel, [&](QByteArrayView data) {
        if (out.write(data.data(), data.size()) != data.size()) {
            writeError = out.errorString();
            return false;
        }
        written += data.size();
        if (progress)
            progress(BackupProgress{written});
        return true;
    });
    if (!ran)
        return std::unexpected(ran.error());
    if (!writeError.isEmpty())
        return fail(ErrorCode::Failed, u"writing the backup failed: %1"_s.arg(writeError), where);
    if (ran->exitCode != 0)
        return fail(ErrorCode::Failed,
                    u"the dump of slot %1 failed (exit code %2): %3"_s.arg(request.slot)
                        .arg(ran->exitCode)
                        .arg(scrub(QString::fromUtf8(ran->errorTail), request.credentials.password)),
                    where);
    return written;
}

Status DockerServiceProvisioner::seed(const ServiceRequest &request, const QByteArray &seed, const CancelToken &cancel)
{
    const QString where = u"services.%1.seed"_s.arg(request.slot);
    const detail::ServiceKind kind = detail::serviceKind(request.kind, request.credentials);
    if (kind.port == 0)
        return fail(ErrorCode::Invalid, u"unknown service kind \"%1\""_s.arg(request.kind), where);
    if (kind.seedCommand.isEmpty())
        return fail(ErrorCode::Invalid, u"a %1 service takes no seed file"_s.arg(request.kind), where);
    const QString name = containerName(request.installId, request.app, request.slot);
    // Beside the client, readable inside the service's own container only.
    auto tar = dockerapi::tarOfFiles({{QString(detail::SeedPath), ContainerFile{seed, 0644, 0, 0}}});
    if (!tar)
        return std::unexpected(tar.error());
    Request put;
    put.method = "PUT";
    put.path = u"/containers/%1/archive"_s.arg(name);
    put.addQuery(u"path"_s, u"/"_s);
    put.body = std::move(*tar);
    put.contentType = "application/x-tar";
    put.timeoutMs = 60000;
    if (auto written = m_client.call(put); !written)
        return std::unexpected(written.error());
    auto ran = execIn(m_client, name, kind.seedCommand, kind.toolEnv, SeedTimeoutMs, cancel);
    discardResult(execIn(m_client, name, {u"rm"_s, u"-f"_s, QString(detail::SeedPath)}, {}, 10000, cancel),
                  "the seed's outcome is the one to report; the file is in the service's own container");
    if (!ran)
        return std::unexpected(ran.error());
    if (ran->exitCode != 0)
        return fail(ErrorCode::Failed,
                    u"exit code %1: %2"_s.arg(ran->exitCode)
                        .arg(scrub(QString::fromUtf8(ran->errorTail + ran->output).trimmed().right(2000),
                                   request.credentials.password)),
                    where);
    return {};
}

Status DockerServiceProvisioner::remove(const QString &installId, const QString &app, const QString &slot,
                                        bool deleteData)
{
    if (auto removed = deleteObject(m_client, u"/containers/"_s + containerName(installId, app, slot), true); !removed)
        return removed;
    if (deleteData) {
        // Docker may take a moment to let go of a volume whose container was just removed.
        Status gone;
        for (int attempt = 0; attempt < 20; ++attempt) {
            gone = deleteObject(m_client, u"/volumes/"_s + volumeName(installId, app, slot), true);
            if (gone || gone.error().code != ErrorCode::Conflict)
                break;
            QThread::msleep(100);
        }
        if (!gone)
            return gone;
    }
    releaseNetwork(installId, app);
    return {};
}

} // namespace pando::adapters::docker
