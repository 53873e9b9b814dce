#include "services.h"

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

void noteRefusal(const Services &s, const QString &connection, const Error &error)
{
    if (error.code == ErrorCode::Unauthorized && s.installationTokens && !connection.isEmpty())
        s.installationTokens->forget(connection);
}

} // namespace pando::core
