#include "core/services/appservices.h"

#include "core/spec/specservices.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QString scheme(const QString &kind)
{
    if (kind == u"postgres")
        return u"postgres"_s;
    if (kind == u"redis")
        return u"redis"_s;
    return u"mysql"_s;
}

} // namespace

QMap<QString, QString> connectionEnv(const QString &slot, const AppSpec::Service &service, const QString &host,
                                     int port, const adapters::ServiceCredentials &c)
{
    const QString &kind = service.kind;
    // A part's variable: the name the spec gives it, else SLOT_PART.
    const auto name = [&](const QString &part) {
        return detail::serviceEnvName(slot, service, part);
    };
    // Redis 6+ calls the user requirepass sets "default".
    const QString user = kind == u"redis" ? u"default"_s : c.user;
    QUrl url;
    url.setScheme(scheme(kind));
    url.setUserName(user);
    url.setPassword(c.password);
    url.setHost(host);
    url.setPort(port);
    url.setPath(kind == u"redis" ? u"/0"_s : u'/' + c.database);
    QMap<QString, QString> env{{name(u"url"_s), url.toString(QUrl::FullyEncoded)},
                               {name(u"host"_s), host},
                               {name(u"port"_s), QString::number(port)},
                               {name(u"user"_s), user},
                               {name(u"password"_s), c.password}};
    if (kind != u"redis")
        env.insert(name(u"name"_s), c.database);
    return env;
}

QStringList connectionEnvNames(const QString &slot, const AppSpec::Service &service)
{
    QStringList names = detail::serviceEnvNames(slot, service);
    names.sort();
    return names;
}

QString ServiceView::status() const
{
    if (state == u"running")
        return u"running"_s;
    if (state.isEmpty() || state == u"absent")
        return u"missing"_s;
    return u"stopped"_s;
}

QJsonObject ServiceView::toJson() const
{
    return QJsonObject{{u"app"_s, app},
                       {u"slot"_s, slot},
                       {u"kind"_s, kind},
                       {u"version"_s, version},
                       {u"image"_s, image},
                       {u"state"_s, state},
                       {u"status"_s, status()},
                       {u"volume"_s, volume},
                       {u"user"_s, user},
                       {u"database"_s, database},
                       {u"created_ms"_s, createdMs},
                       {u"env"_s, QJsonArray::fromStringList(
                                      env.isEmpty() ? connectionEnvNames(slot, AppSpec::Service{.kind = kind}) : env)}};
}

Status AppServices::checkPlan(const AppSpec &spec, const QString &runtimeKind) const
{
    if (spec.services.isEmpty())
        return {};
    if (runtimeKind != m_provisioner.runtimeKind())
        return fail(
            ErrorCode::Invalid,
            u"services run on the %1 runtime only; this app runs on %2"_s.arg(m_provisioner.runtimeKind(), runtimeKind),
            u"services"_s,
            u"deploy the app to the %1 runtime, or remove its services"_s.arg(m_provisioner.runtimeKind()));
    // run.env may not set a slot's variables: the spec's own rules refuse that (validateAppSpec).
    return {};
}

Result<QByteArray> AppServices::readSeed(const QString &slot, const QString &seed, const QString &checkoutDir)
{
    const QString where = u"services.%1.seed"_s.arg(slot);
    // A missing file and one a link leads out of the repository get one answer: two would tell
    // whoever pushed the link whether a path exists on this host.
    const QString root = QFileInfo(checkoutDir).canonicalFilePath();
    const QFileInfo file(root + u'/' + QDir::cleanPath(seed));
    const QString real = file.exists() ? file.canonicalFilePath() : QString();
    if (root.isEmpty() || real.isEmpty() || !real.startsWith(root + u'/') || !QFileInfo(real).isFile())
        return fail(ErrorCode::Invalid,
                    u"%1 is not a file of the repository (it is missing, or a link that leads out of it)"_s.arg(seed),
                    where, u"commit the seed file, or change %1"_s.arg(where));
    if (QFileInfo(real).size() > MaxSeedBytes)
        return fail(ErrorCode::TooLarge, u"%1 is larger than %2 MiB"_s.arg(seed).arg(MaxSeedBytes / (1024LL * 1024)),
                    where, u"load a large data set from the app itself"_s);
    QFile in(real);
    if (!in.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Failed, u"%1 cannot be read: %2"_s.arg(seed, in.errorString()), where);
    return in.readAll();
}

Status AppServices::loadSeed(const adapters::ServiceRequest &service, const QString &seed, const QByteArray &data,
                             const CancelToken &cancel)
{
    if (auto loaded = m_provisioner.seed(service, data, cancel); !loaded) {
        Error e = loaded.error();
        e.message = u"loading %1 failed: %2"_s.arg(seed, e.message);
        e.where = u"services.%1.seed"_s.arg(service.slot);
        if (e.hint.isEmpty())
            e.hint = u"fix the file and push; the next deploy makes the service again and loads it"_s;
        return std::unexpected(e);
    }
    return {};
}

Result<QString> AppServices::seedFresh(const adapters::ServiceRequest &service, const AppSpec::Service &spec,
                                       bool fresh, const QString &checkoutDir, const CancelToken &cancel)
{
    if (spec.seed.isEmpty()) {
        // A seed the spec no longer names is not loaded into a service made again.
        if (auto forgot = m_store.keepSeed(service.app, service.slot, {}, {}); !forgot)
            return std::unexpected(forgot.error());
        return QString();
    }
    Result<QByteArray> data = checkoutDir.isEmpty() ? m_store.keptSeed(service.app, service.slot, spec.seed)
                                                    : readSeed(service.slot, spec.seed, checkoutDir);
    if (!checkoutDir.isEmpty() && data)
        if (auto kept = m_store.keepSeed(service.app, service.slot, spec.seed, *data); !kept)
            return std::unexpected(kept.error());
    if (!fresh)
        return QString(); // its data is there: a seed file the deploy cannot read is not its concern
    if (!data && checkoutDir.isEmpty() && data.error().code == ErrorCode::NotFound)
        return u", empty: no copy of %1 was kept (deploy again to load it)"_s.arg(spec.seed);
    if (!data)
        return std::unexpected(data.error());
    if (auto loaded = loadSeed(service, spec.seed, *data, cancel); !loaded)
        return std::unexpected(loaded.error());
    return checkoutDir.isEmpty() ? u", loaded from %1 as its app's last deploy read it"_s.arg(spec.seed)
                                 : u", loaded from %1"_s.arg(spec.seed);
}

adapters::ServiceRequest AppServices::request(const ServiceRecord &record) const
{
    adapters::ServiceRequest r;
    r.installId = m_installId;
    r.app = record.app;
    r.slot = record.slot;
    r.kind = record.kind;
    r.version = record.version;
    r.credentials = {record.user, record.password, record.database};
    return r;
}

Result<ProvisionedServices> AppServices::provision(const QString &app, const AppSpec &spec, const CancelToken &cancel,
                                                   const std::function<void(const QString &line)> &progress,
                                                   const QString &checkoutDir)
{
    ProvisionedServices out;
    for (auto it = spec.services.cbegin(); it != spec.services.cend(); ++it) {
        auto record = m_store.obtain(app, it.key(), it->kind, it->version, {it->user, it->password, it->database});
        if (!record)
            return std::unexpected(record.error());
        adapters::ServiceRequest asked = request(*record);
        record->password.fill(u'\0');
        auto endpoint = m_provisioner.provision(asked, cancel, progress);
        // An image has no repository to read a seed from (AppSpec::Service::seed).
        auto seeded = endpoint && !spec.source.isImage() ? seedFresh(asked, *it, endpoint->fresh, checkoutDir, cancel)
                                                         : Result<QString>(QString());
        asked.credentials.password.fill(u'\0');
        if (!endpoint)
            return std::unexpected(endpoint.error());
        if (!seeded) {
            discardResult(m_provisioner.remove(m_installId, app, it.key(), true),
                          "the seed's error is the one to report; the next deploy makes the service again");
            return std::unexpected(seeded.error());
        }
        auto opened = m_store.find(app, it.key());
        if (!opened)
            return std::unexpected(opened.error());
        out.env.insert(connectionEnv(it.key(), *it, endpoint->host, endpoint->port,
                                     {opened->user, opened->password, opened->database}));
        if (!out.networks.contains(endpoint->network))
            out.networks.append(endpoint->network);
        const QString summary = u"%1: %2 %3 at %4:%5%6"_s.arg(it.key(), it->kind, it->version, endpoint->host)
                                    .arg(endpoint->port)
                                    .arg(*seeded);
        out.summary.append(summary);
        if (endpoint->fresh)
            out.made.append(summary);
    }
    return out;
}

Result<QList<ServiceView>> AppServices::list(const QString &app)
{
    auto records = m_store.list(app);
    if (!records)
        return std::unexpected(records.error());
    auto running = m_provisioner.list(m_installId, app);
    if (!running)
        return std::unexpected(running.error());
    QMap<QPair<QString, QString>, ServiceView> views;
    for (const ServiceRecord &r : std::as_const(*records)) {
        ServiceView &v = views[{r.app, r.slot}];
        v.app = r.app;
        v.slot = r.slot;
        v.kind = r.kind;
        v.version = r.version;
        v.user = r.user;
        v.database = r.database;
        v.createdMs = r.createdMs;
        v.state = u"absent"_s;
    }
    for (const adapters::ServiceInfo &i : std::as_const(*running)) {
        ServiceView &v = views[{i.app, i.slot}];
        v.app = i.app;
        v.slot = i.slot;
        if (v.kind.isEmpty())
            v.kind = i.kind;
        v.image = i.image;
        v.state = i.state;
        v.volume = i.volume;
    }
    return views.values();
}

Result<qint64> AppServices::backup(const QString &app, const QString &slot, QIODevice &out, const CancelToken &cancel,
                                   const std::function<void(qint64 bytes)> &progress)
{
    auto record = m_store.find(app, slot);
    if (!record)
        return std::unexpected(record.error());
    auto written = m_provisioner.backup(request(*record), out, cancel, [&](const adapters::BackupProgress &p) {
        if (progress)
            progress(p.bytes);
    });
    record->password.fill(u'\0');
    return written;
}

Status AppServices::remove(const QString &app, const QString &slot, bool deleteData)
{
    if (auto removed = m_provisioner.remove(m_installId, app, slot, deleteData); !removed)
        return removed;
    if (deleteData)
        return m_store.remove(app, slot);
    return {};
}

Status AppServices::removeAll(const QString &app, bool deleteData)
{
    QSet<QString> slots;
    if (auto records = m_store.list(app)) {
        for (const ServiceRecord &r : std::as_const(*records))
            slots.insert(r.slot);
    } else {
        return std::unexpected(records.error());
    }
    if (auto running = m_provisioner.list(m_installId, app)) {
        for (const adapters::ServiceInfo &i : std::as_const(*running))
            slots.insert(i.slot);
    } else {
        return std::unexpected(running.error());
    }
    for (const QString &slot : std::as_const(slots))
        if (auto removed = remove(app, slot, deleteData); !removed)
            return removed;
    return {};
}

Result<bool> AppServices::hasAny(const QString &app)
{
    auto records = m_store.list(app);
    if (!records)
        return std::unexpected(records.error());
    if (!records->isEmpty())
        return true;
    auto running = m_provisioner.list(m_installId, app);
    if (!running)
        return std::unexpected(running.error());
    return !running->isEmpty();
}

} // namespace pando::core
