#include "sourcesmodel.h"

#include "app/client/oauthloopback.h"

#include <QDateTime>
#include <QDesktopServices>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace pando::desktop {

SourcesModel::SourcesModel(QObject *parent)
    : SessionListModel(parent), m_openUrl([](const QUrl &url) { QDesktopServices::openUrl(url); })
{}

QStringList SourcesModel::kinds()
{
    return {u"github"_s, u"gitlab"_s, u"gitea"_s, u"bitbucket"_s, u"azure-devops"_s, u"generic"_s, u"registry"_s};
}

int SourcesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant SourcesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &row = m_rows.at(index.row());
    const bool tested = row.value(u"checked_ms"_s).toInteger() > 0;
    const QString check = row.value(u"check_result"_s).toString();
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return row.value(u"name"_s).toString();
    case KindRole:
        return row.value(u"kind"_s).toString();
    case UrlRole:
        return row.value(u"url"_s).toString();
    case OwnerRole:
        return row.value(u"owner"_s).toString();
    case AuthTextRole: {
        if (row.value(u"auth"_s).toString() == u"ssh-key")
            return tr("deploy key %1").arg(row.value(u"fingerprint"_s).toString()).trimmed();
        if (row.value(u"auth"_s).toString() == u"github-app")
            return tr("GitHub App %1, installation %2")
                .arg(row.value(u"app_id"_s).toString(), row.value(u"installation_id"_s).toString());
        if (row.value(u"auth"_s).toString() == u"oauth")
            return tr("OAuth app %1").arg(row.value(u"client_id"_s).toString());
        const QString user = row.value(u"username"_s).toString();
        return user.isEmpty() ? tr("token") : tr("token as %1").arg(user);
    }
    case CheckTextRole:
        return tested ? tr("%1 (tested %2)").arg(check, momentText(row.value(u"checked_ms"_s).toInteger()))
                      : tr("never tested");
    case StateRole:
        return !tested                     ? DisplayState::Neutral
               : check.startsWith(u"ok"_s) ? DisplayState::Healthy
                                           : DisplayState::Failed;
    default:
        return {};
    }
}

QHash<int, QByteArray> SourcesModel::roleNames() const
{
    return {{NameRole, "name"},         {KindRole, "kind"},           {UrlRole, "url"},           {OwnerRole, "owner"},
            {AuthTextRole, "authText"}, {CheckTextRole, "checkText"}, {StateRole, "displayState"}};
}

void SourcesModel::sessionReplaced()
{
    endAuthorization();
    m_loaded = false;
    apply({});
    finish({});
}

void SourcesModel::refresh()
{
    if (!m_session)
        return;
    const quint64 generation = ++m_generation;
    setLoading(true);
    QPointer<SourcesModel> self(this);
    m_session->sourceConnections([self, generation](const Result<QJsonArray> &rows) {
        if (!self || generation != self->m_generation)
            return;
        self->setError(rows ? QString() : rows.error().message);
        if (rows) {
            self->m_loaded = true;
            self->apply(*rows);
        }
        self->setLoading(false);
    });
}

void SourcesModel::apply(const QJsonArray &rows)
{
    // A reset: a short list reloaded whole, its selection dropped.
    beginResetModel();
    m_rows.clear();
    for (const QJsonValue row : rows)
        m_rows.append(row.toObject());
    endResetModel();
    Q_EMIT countChanged();
}

void SourcesModel::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    Q_EMIT busyChanged();
}

void SourcesModel::finish(const QString &outcome, const Error *failure)
{
    setBusy(false);
    m_outcome = failure ? failure->message + (failure->hint.isEmpty() ? QString() : u" — "_s + failure->hint) : outcome;
    m_failed = failure != nullptr;
    m_failedField = failure ? failure->where : QString();
    Q_EMIT outcomeChanged();
}

void SourcesModel::add(const QString &name, const QString &kind, const QString &url, const QString &owner,
                       const QString &username, const QString &token, const QString &sshKey, const QString &knownHosts)
{
    send(QJsonObject{{u"name"_s, name.trimmed()}, {u"kind"_s, kind}, {u"url"_s, url.trimmed()}},
         {{u"owner"_s, owner.trimmed()},
          {u"username"_s, username.trimmed()},
          {u"token"_s, token.trimmed()},
          {u"ssh_key"_s, sshKey},
          {u"known_hosts"_s, knownHosts}});
}

void SourcesModel::addGitHubApp(const QString &name, const QString &url, const QString &owner, const QString &appId,
                                const QString &installationId, const QString &privateKey)
{
    send(QJsonObject{{u"name"_s, name.trimmed()}, {u"kind"_s, u"github"_s}, {u"url"_s, url.trimmed()}},
         {{u"owner"_s, owner.trimmed()},
          {u"app_id"_s, appId.trimmed()},
          {u"installation_id"_s, installationId.trimmed()},
          {u"private_key"_s, privateKey}});
}

void SourcesModel::send(QJsonObject body, const QList<std::pair<QString, QString>> &optional)
{
    if (!m_session || m_busy)
        return;
    for (const auto &[field, value] : optional) {
        if (!value.isEmpty())
            body.insert(field, value);
    }
    setBusy(true);
    QPointer<SourcesModel> self(this);
    m_session->addSourceConnection(body, [self](const Result<QJsonObject> &added) {
        if (!self)
            return;
        if (!added)
            return self->finish({}, &added.error());
        const QString name = added->value(u"name"_s).toString();
        const QString fingerprint = added->value(u"fingerprint"_s).toString();
        self->finish(
            fingerprint.isEmpty()
                ? tr("Added %1. Apps whose repository it covers read through it from their next change.").arg(name)
                : tr("Added %1. Add the public half of key %2 to the repositories as a deploy key.")
                      .arg(name, fingerprint));
        Q_EMIT self->added(name);
        self->refresh();
    });
}

void SourcesModel::addOAuthApp(const QString &name, const QString &kind, const QString &url, const QString &owner,
                               const QString &clientId, const QString &clientSecret)
{
    QJsonObject body{{u"name"_s, name.trimmed()},
                     {u"kind"_s, kind},
                     {u"url"_s, url.trimmed()},
                     {u"client_id"_s, clientId.trimmed()},
                     {u"client_secret"_s, clientSecret.trimmed()}};
    if (!owner.trimmed().isEmpty())
        body.insert(u"owner"_s, owner.trimmed());
    authorizeInBrowser(
        [this, body](const QString &redirectUri, std::function<void(const Result<QJsonObject> &)> done) mutable {
            body.insert(u"redirect_uri"_s, redirectUri);
            m_session->beginSourceAuthorization(body, std::move(done));
        },
        true);
}

void SourcesModel::authorize(const QString &name)
{
    authorizeInBrowser(
        [this, name](const QString &redirectUri, std::function<void(const Result<QJsonObject> &)> done) {
            m_session->reauthorizeSourceConnection(name, redirectUri, std::move(done));
        },
        false);
}

void SourcesModel::authorizeInBrowser(const Begin &begin, bool adding)
{
    if (!m_session || m_busy)
        return;
    auto *loopback = new client::OAuthLoopback(this);
    if (auto listening = loopback->listen(0); !listening) {
        loopback->deleteLater();
        return finish({}, &listening.error());
    }
    m_loopback = loopback;
    setBusy(true);
    QPointer<SourcesModel> self(this);
    begin(loopback->redirectUri(), [self, loopback, adding](const Result<QJsonObject> &begun) {
        if (!self || self->m_loopback != loopback)
            return;
        if (!begun) {
            self->endAuthorization();
            return self->finish({}, &begun.error());
        }
        const QString state = begun->value(u"state"_s).toString();
        loopback->expectState(state);
        auto *deadline = new QTimer(loopback);
        deadline->setSingleShot(true);
        QObject::connect(deadline, &QTimer::timeout, self, [self] {
            self->endAuthorization();
            const Error late{ErrorCode::Timeout, tr("The forge did not send the browser back in time."),
                             u"authorization"_s, tr("Start again, and finish on the forge's page within ten minutes.")};
            self->finish({}, &late);
        });
        deadline->start(
            int(qBound<qint64>(1000, begun->value(u"expires_ms"_s).toInteger() - QDateTime::currentMSecsSinceEpoch(),
                               qint64(std::numeric_limits<int>::max()))));
        QObject::connect(loopback, &client::OAuthLoopback::refused, self, [self](const Error &error) {
            self->endAuthorization();
            self->finish({}, &error);
        });
        QObject::connect(loopback, &client::OAuthLoopback::authorized, self,
                         [self, state, adding, deadline](const QString &code) {
                             deadline->stop();
                             self->m_session->completeSourceAuthorization(
                                 state, code, [self, adding](const Result<QJsonObject> &done) {
                                     if (!self)
                                         return;
                                     self->endAuthorization();
                                     if (!done)
                                         return self->finish({}, &done.error());
                                     const QString name = done->value(u"name"_s).toString();
                                     self->finish(adding ? tr("Added %1. Apps whose repository it covers read through "
                                                              "it from their next change.")
                                                               .arg(name)
                                                         : tr("Authorized %1 again.").arg(name));
                                     if (adding)
                                         Q_EMIT self->added(name);
                                     self->refresh();
                                 });
                         });
        self->m_authorizeUrl = begun->value(u"authorize_url"_s).toString();
        Q_EMIT self->busyChanged();
        self->m_outcome = tr("Waiting for the forge: authorize Pando on the page that opened in your browser.");
        self->m_failed = false;
        self->m_failedField.clear();
        Q_EMIT self->outcomeChanged();
        self->m_openUrl(QUrl(self->m_authorizeUrl));
    });
}

QString SourcesModel::field(const QString &name, const QString &key) const
{
    for (const QJsonObject &row : m_rows) {
        if (row.value(u"name"_s).toString() == name)
            return row.value(key).toString();
    }
    return {};
}

QString SourcesModel::authOf(const QString &name) const
{
    return field(name, u"auth"_s);
}

QString SourcesModel::kindOf(const QString &name) const
{
    return field(name, u"kind"_s);
}

void SourcesModel::cancelAuthorization()
{
    if (!m_loopback)
        return;
    endAuthorization();
    finish(tr("Stopped waiting for the forge; nothing changed."));
}

void SourcesModel::endAuthorization()
{
    if (m_loopback)
        m_loopback->deleteLater();
    m_loopback = nullptr;
    m_authorizeUrl.clear();
}

void SourcesModel::test(const QString &name, const QString &repo)
{
    if (!m_session || m_busy)
        return;
    setBusy(true);
    QPointer<SourcesModel> self(this);
    if (kindOf(name) == u"registry"_s) {
        const QString image = repo.trimmed();
        m_session->testRegistryConnection(name, image, [self, name, image](const Result<QJsonObject> &tested) {
            if (!self)
                return;
            if (!tested)
                self->finish({}, &tested.error());
            else if (image.isEmpty())
                self->finish(tr("The registry of %1 accepts its login.").arg(name));
            else
                self->finish(tr("%1 reads %2 (%3).").arg(name, image, tested->value(u"digest"_s).toString().left(19)));
            self->refresh();
        });
        return;
    }
    m_session->testSourceConnection(name, repo.trimmed(), [self, name, repo](const Result<QJsonObject> &tested) {
        if (!self)
            return;
        if (!tested)
            self->finish({}, &tested.error());
        else
            self->finish(
                tr("%1 reads %2 (at %3).").arg(name, repo.trimmed(), tested->value(u"commit"_s).toString().left(12)));
        self->refresh();
    });
}

void SourcesModel::remove(const QString &name)
{
    if (!m_session || m_busy)
        return;
    setBusy(true);
    QPointer<SourcesModel> self(this);
    m_session->removeSourceConnection(name, [self, name](const Status &removed) {
        if (!self)
            return;
        if (!removed)
            self->finish({}, &removed.error());
        else
            self->finish(tr("Removed %1 and its credential.").arg(name));
        self->refresh();
    });
}

} // namespace pando::desktop
