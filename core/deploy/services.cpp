#include "services.h"

#include "core/deploy/connectionaccess.h"
#include "core/sourceconn/sourceconn.h"

namespace pando::core {

adapters::Labels Services::labels(const QString &app, const QString &deployId) const
{
    adapters::Labels l{{QLatin1String(adapters::LabelManaged), QStringLiteral("true")},
                       {QLatin1String(adapters::LabelInstall), installId}};
    if (!app.isEmpty())
        l.insert(QLatin1String(adapters::LabelApp), app);
    if (!deployId.isEmpty())
        l.insert(QLatin1String(adapters::LabelDeploy), deployId);
    return l;
}

void Services::publish(EventType type, const QString &app, const QString &deployId, const QJsonObject &data) const
{
    events.publish(Event{type, app, deployId, data, clock.nowMs()});
}

std::shared_ptr<QMutex> AppLocks::lockFor(const QString &app)
{
    QMutexLocker lock(&m_mutex);
    auto &slot = m_locks[app];
    if (!slot)
        slot = std::make_shared<QMutex>();
    return slot;
}

QString imageTag(const QString &app, const QString &deployId)
{
    return QStringLiteral("pando/%1:%2").arg(app, deployId);
}

QString deployOfTag(const QString &app, const QString &tag)
{
    const QString prefix = QStringLiteral("pando/%1:").arg(app);
    return tag.startsWith(prefix) ? tag.mid(prefix.size()) : QString();
}

QString appOfTag(const QString &tag)
{
    static const QLatin1String prefix("pando/");
    const qsizetype colon = tag.lastIndexOf(QLatin1Char(':'));
    if (!tag.startsWith(prefix) || colon <= prefix.size())
        return {};
    return tag.mid(prefix.size(), colon - prefix.size());
}

QStringList untagImages(const Services &s, const QString &app, const std::function<bool(const QString &)> &keep)
{
    QStringList removed;
    auto images = s.runtime.images(s.labels());
    if (!images)
        return removed;
    for (const adapters::ImageInfo &image : std::as_const(*images)) {
        for (const QString &tag : image.tags) {
            const QString deployId = deployOfTag(app, tag);
            if (deployId.isEmpty() || keep(deployId))
                continue;
            // Only this install's: a tag of the same name may be another's.
            if (auto gone = s.runtime.removeOwnImage(tag, s.labels()); gone && *gone)
                removed << tag;
        }
    }
    return removed;
}

QString containerName(const QString &app, const QString &deployId)
{
    return QStringLiteral("pando-%1-%2").arg(app, deployId);
}

Result<adapters::SourceAccess> fetchAccess(const Services &s, bool trusted, const policy::AppAccess &settings,
                                           const QString &connection)
{
    adapters::SourceAccess access = policy::sourceAccess(trusted, settings);
    if (connection.isEmpty())
        return access;
    if (!s.seal)
        return fail(ErrorCode::Unavailable, QStringLiteral("the secret store is not open"), QStringLiteral("source"));
    auto credential =
        sourceconn::ConnectionStore(s.db, *s.seal, s.clock, s.installationTokens, s.oauthGrants).credential(connection);
    if (!credential)
        return std::unexpected(credential.error());
    access.credential = std::move(*credential);
    return access;
}

Result<adapters::RegistryCredential> registryLogin(const Services &s, const QString &connection)
{
    if (!s.seal)
        return fail(ErrorCode::Unavailable, QStringLiteral("the secret store is not open"),
                    QStringLiteral("source.connection"));
    return sourceconn::ConnectionStore(s.db, *s.seal, s.clock, s.installationTokens, s.oauthGrants)
        .registryLogin(connection);
}

Result<QList<BaseImageLogin>> baseImageLogins(const Services &s, const AppRecord &app, const QStringList &images)
{
    if (images.isEmpty() || !s.seal)
        return QList<BaseImageLogin>{};
    sourceconn::ConnectionStore store(s.db, *s.seal, s.clock, s.installationTokens, s.oauthGrants);
    auto all = store.list();
    if (!all)
        return std::unexpected(all.error());
    QList<sourceconn::Connection> registries;
    for (const sourceconn::Connection &c : std::as_const(*all))
        if (c.scope.kind == adapters::ForgeKind::Registry)
            registries << c;
    auto usable = usableConnections(s.db, registries, app.specWriter, app.sourceTrusted);
    if (!usable)
        return std::unexpected(usable.error());
    QList<BaseImageLogin> logins;
    const auto wipe = [&logins] {
        for (BaseImageLogin &login : logins)
            login.credential.wipe();
    };
    for (const QString &image : images) {
        auto chosen = sourceconn::chooseForImage(*usable, image);
        if (!chosen) {
            wipe();
            Error e = chosen.error();
            e.where = QStringLiteral("build.dockerfile");
            e.hint = QStringLiteral("give one of them an owner (the registry's namespace) that the other's does not "
                                    "have, or leave only one of them to this app's spec writer");
            return std::unexpected(e);
        }
        const std::optional<sourceconn::Connection> &closest = *chosen;
        if (!closest)
            continue;
        auto login = store.registryLogin(closest->name);
        if (!login) {
            wipe();
            return std::unexpected(login.error());
        }
        logins.append({image, closest->name, std::move(*login)});
    }
    return logins;
}

void noteRefusal(const Services &s, const QString &connection, const Error &error)
{
    if (error.code == ErrorCode::Unauthorized && s.installationTokens && !connection.isEmpty())
        s.installationTokens->forget(connection);
}

} // namespace pando::core
