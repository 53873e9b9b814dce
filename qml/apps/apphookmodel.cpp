#include "qml/apps/apphookmodel.h"

#include "app/desktop/session/inprocesssession.h"
#include "core/vocab/vocab.h"
#include "qml/apps/appeventsmodel.h"

#include <QClipboard>
#include <QDateTime>
#include <QGuiApplication>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

qint64 msOf(const QJsonValue &iso)
{
    const QDateTime at = QDateTime::fromString(iso.toString(), Qt::ISODateWithMs);
    return at.isValid() ? at.toMSecsSinceEpoch() : 0;
}

// A secret's characters are overwritten before its memory goes back (best effort: a copy QML
// made of it is its own).
void wipe(QString &secret)
{
    if (!secret.isEmpty())
        secret.fill(u'\0');
    secret.clear();
}

void toClipboard(const QString &text)
{
    // Without a GUI application (a Core-only test) there is no clipboard to put it on.
    if (qobject_cast<QGuiApplication *>(QCoreApplication::instance()) && !text.isEmpty())
        QGuiApplication::clipboard()->setText(text);
}

} // namespace

AppHookModel::AppHookModel(QObject *parent) : SessionListModel(parent)
{}

AppHookModel::~AppHookModel()
{
    wipe(m_newSecret);
}

void AppHookModel::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    ++m_changeGeneration;
    setBusy(false);
    forgetNewSecret();
    forgetRegistered();
    clearFailure();
    show({}, {});
    Q_EMIT appChanged();
    refresh();
}

int AppHookModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> AppHookModel::roleNames() const
{
    return {{ReceivedRole, "received"},
            {ReceivedMsRole, "receivedMs"},
            {DeliveryIdRole, "deliveryId"},
            {ForgeRole, "forge"},
            {EventRole, "event"},
            {RefRole, "ref"},
            {CommitRole, "commit"},
            {PusherRole, "pusher"},
            {OutcomeRole, "outcome"},
            {OutcomeTextRole, "outcomeText"},
            {OutcomeStateRole, "outcomeState"},
            {DetailRole, "detail"},
            {DeployIdRole, "deployId"},
            {SummaryRole, "summary"}};
}

QVariant AppHookModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Delivery &d = m_rows.at(index.row());
    switch (role) {
    case ReceivedRole:
        return d.receivedMs > 0 ? momentText(d.receivedMs) : QString();
    case ReceivedMsRole:
        return d.receivedMs;
    case DeliveryIdRole:
        return d.id;
    case ForgeRole:
        return d.forge;
    case EventRole:
        return d.event;
    case RefRole:
        return d.ref;
    case CommitRole:
        return d.commit.left(12);
    case PusherRole:
        return d.pusher;
    case OutcomeRole:
        return d.outcome;
    case OutcomeTextRole:
        return outcomeText(d.outcome);
    case OutcomeStateRole:
        return int(outcomeState(d.outcome));
    case DetailRole:
        return d.detail;
    case DeployIdRole:
        return d.deployId;
    case Qt::DisplayRole:
    case SummaryRole:
        return d.deployId.isEmpty() ? d.detail : tr("deploy %1").arg(d.deployId);
    }
    return {};
}

AppHookModel::Hook AppHookModel::hookOf(const QJsonObject &json)
{
    Hook hook;
    hook.mode = json.value(u"mode"_s).toString();
    hook.branch = json.value(u"branch"_s).toString();
    hook.tags = json.value(u"tags"_s).toString();
    hook.path = json.value(u"path"_s).toString();
    hook.secretSet = json.value(u"secret_set"_s).toBool();
    hook.secretSetBy = json.value(u"secret_set_by"_s).toString();
    hook.secretSetMs = msOf(json.value(u"secret_set_at"_s));
    const QJsonObject poll = json.value(u"poll"_s).toObject();
    hook.pollEveryS = qint64(poll.value(u"every_s"_s).toDouble());
    hook.polledMs = msOf(poll.value(u"polled_at"_s));
    hook.pollCommit = poll.value(u"commit"_s).toString();
    hook.pollError = poll.value(u"error"_s).toString();
    return hook;
}

AppHookModel::Delivery AppHookModel::deliveryOf(const QJsonObject &json)
{
    Delivery d;
    d.id = json.value(u"id"_s).toString();
    d.forge = json.value(u"forge"_s).toString();
    d.event = json.value(u"event"_s).toString();
    d.ref = json.value(u"ref"_s).toString();
    d.commit = json.value(u"commit"_s).toString();
    d.pusher = json.value(u"pusher"_s).toString();
    d.outcome = json.value(u"outcome"_s).toString();
    d.detail = json.value(u"detail"_s).toString();
    d.deployId = json.value(u"deploy"_s).toString();
    d.receivedMs = qint64(json.value(u"received_ms"_s).toDouble());
    if (d.receivedMs <= 0)
        d.receivedMs = msOf(json.value(u"received_at"_s));
    return d;
}

DisplayState::Value AppHookModel::outcomeState(const QString &outcome)
{
    if (outcome == u"deployed")
        return DisplayState::Healthy;
    if (outcome == u"failed")
        return DisplayState::Failed;
    if (outcome == u"removed")
        return DisplayState::Stopped;
    // accepted (the deploy is being queued), ignored, and any word a newer install adds.
    return DisplayState::Neutral;
}

QString AppHookModel::outcomeText(const QString &outcome)
{
    if (outcome == u"accepted")
        return tr("accepted");
    if (outcome == u"deployed")
        return tr("deployed");
    if (outcome == u"ignored")
        return tr("ignored");
    if (outcome == u"failed")
        return tr("failed");
    if (outcome == u"removed")
        return tr("preview removed");
    return outcome;
}

QString AppHookModel::modeText() const
{
    if (m_hook.mode == u"push")
        return tr("on push, through the forge's webhook");
    if (m_hook.mode == u"poll")
        return tr("by polling the repository");
    if (m_hook.mode == u"off")
        return tr("off");
    return m_hook.mode;
}

QString AppHookModel::follows() const
{
    if (!m_hook.tags.isEmpty())
        return tr("tags matching %1").arg(m_hook.tags);
    if (!m_hook.branch.isEmpty())
        return tr("branch %1").arg(m_hook.branch);
    return {};
}

QString AppHookModel::hookUrl() const
{
    if (m_hook.path.isEmpty() || !m_session)
        return m_hook.path;
    // This computer's engine answers on loopback, which no forge reaches: the path alone, and
    // hookHint says where it is served to others.
    if (qobject_cast<InProcessSession *>(m_session.data()))
        return m_hook.path;
    auto *remote = qobject_cast<RemoteSession *>(m_session.data());
    if (!remote || !remote->baseUrl().isValid())
        return m_hook.path;
    // As the API client builds its addresses: the base's own path, then the API's.
    QUrl url = remote->baseUrl().adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery | QUrl::RemoveFragment |
                                          QUrl::StripTrailingSlash);
    url.setPath(url.path() + m_hook.path);
    return url.toString();
}

QString AppHookModel::hookHint() const
{
    if (m_hook.path.isEmpty() || !m_session)
        return {};
    if (qobject_cast<InProcessSession *>(m_session.data()))
        return tr("This computer's engine answers only this computer. A forge reaches the webhook while Settings "
                  "serves teammates (\"Let teammates use this computer's engine\"): at that server's address, "
                  "https://THIS-COMPUTER:PORT, followed by this path; tell the forge to accept the server's own "
                  "certificate.");
    return tr("The address this desktop reaches the install at: the forge must reach it too.");
}

QString AppHookModel::secretText() const
{
    if (!m_hook.secretSet)
        return tr("none yet");
    const QString by = m_hook.secretSetBy.isEmpty() ? tr("someone") : AppEventsModel::actorText(m_hook.secretSetBy);
    if (m_hook.secretSetMs <= 0)
        return tr("set by %1").arg(by);
    return tr("set by %1 at %2").arg(by, momentText(m_hook.secretSetMs));
}

QString AppHookModel::pollText() const
{
    if (m_hook.mode != u"poll")
        return {};
    const qint64 every = m_hook.pollEveryS;
    const QString often = every <= 0          ? QString()
                          : every % 3600 == 0 ? tr("every %n hour(s)", nullptr, int(every / 3600))
                          : every % 60 == 0   ? tr("every %n minute(s)", nullptr, int(every / 60))
                                              : tr("every %n second(s)", nullptr, int(every));
    QString last;
    if (m_hook.polledMs <= 0)
        last = tr("not polled yet");
    else if (!m_hook.pollError.isEmpty())
        last = tr("the poll at %1 failed: %2").arg(momentText(m_hook.polledMs), m_hook.pollError);
    else if (!m_hook.pollCommit.isEmpty())
        last = tr("last polled at %1, at commit %2").arg(momentText(m_hook.polledMs), m_hook.pollCommit.left(12));
    else
        last = tr("last polled at %1").arg(momentText(m_hook.polledMs));
    return often.isEmpty() ? last : tr("Polled %1; %2").arg(often, last);
}

void AppHookModel::show(const Hook &hook, const QList<Delivery> &rows)
{
    const bool countMoves = rows.size() != m_rows.size();
    beginResetModel();
    m_rows = rows;
    endResetModel();
    if (countMoves)
        Q_EMIT countChanged();
    if (!(m_hook == hook)) {
        m_hook = hook;
        Q_EMIT hookChanged();
    }
}

void AppHookModel::sessionReplaced()
{
    ++m_changeGeneration;
    setBusy(false);
    forgetNewSecret();
    forgetRegistered();
    clearFailure();
    show({}, {});
}

void AppHookModel::setBusy(bool busy)
{
    if (m_busy == busy)
        return;
    m_busy = busy;
    Q_EMIT busyChanged();
}

void AppHookModel::setFailure(const Error &error, bool secret)
{
    m_secretFailed = secret;
    const bool fieldMoves = m_errorField != error.where;
    m_errorField = error.where;
    // What to do next, where the install says it ("leave it out and Pando makes one").
    const QString text = error.hint.isEmpty() ? error.text() : tr("%1 (%2)").arg(error.text(), error.hint);
    if (text == this->error() && fieldMoves)
        Q_EMIT errorChanged();
    setError(text);
}

void AppHookModel::clearFailure()
{
    if (!m_secretFailed && m_errorField.isEmpty() && error().isEmpty())
        return;
    m_secretFailed = false;
    m_errorField.clear();
    setError({});
}

void AppHookModel::refresh()
{
    const quint64 generation = ++m_generation;
    if (!m_session || m_app.isEmpty()) {
        setLoading(false);
        return;
    }
    setLoading(true);
    QPointer<AppHookModel> self(this);
    m_session->appHook(m_app, Deliveries, [self, generation](const Result<QJsonObject> &answer) {
        if (!self || generation != self->m_generation)
            return;
        self->m_loaded = true;
        self->setLoading(false);
        if (!answer) {
            self->setFailure(answer.error(), false);
            return;
        }
        // A refused secret stays said until the user tries again; a failed read is over.
        if (!self->m_secretFailed)
            self->clearFailure();
        QList<Delivery> rows;
        for (const QJsonValue v : answer->value(u"deliveries"_s).toArray())
            rows.append(deliveryOf(v.toObject()));
        self->show(hookOf(*answer), rows);
    });
}

void AppHookModel::makeSecret()
{
    changeSecret({});
}

void AppHookModel::setSecret(const QString &secret)
{
    if (secret.isEmpty()) {
        setFailure(Error{ErrorCode::Invalid, tr("type the secret to set, or make a new one instead"), u"secret"_s},
                   true);
        return;
    }
    changeSecret(secret);
}

void AppHookModel::change(const std::function<void(Session::ObjectCallback)> &send,
                          std::function<void(const QJsonObject &answer)> made)
{
    const quint64 generation = ++m_changeGeneration;
    clearFailure();
    setBusy(true);
    QPointer<AppHookModel> self(this);
    send([self, generation, made = std::move(made)](const Result<QJsonObject> &answer) {
        if (!self || generation != self->m_changeGeneration)
            return;
        self->setBusy(false);
        if (!answer) {
            self->setFailure(answer.error(), true);
            return;
        }
        self->forgetNewSecret();
        made(*answer);
        self->refresh();
    });
}

void AppHookModel::changeSecret(const QString &chosen)
{
    if (!m_session || m_app.isEmpty() || m_busy)
        return;
    change([this, chosen](Session::ObjectCallback done) { m_session->newHookSecret(m_app, chosen, std::move(done)); },
           [this, made = chosen.isEmpty()](const QJsonObject &answer) {
               if (!made)
                   return;
               m_newSecret = answer.value(u"secret"_s).toString();
               Q_EMIT newSecretChanged();
           });
}

void AppHookModel::forgetRegistered()
{
    if (m_registered.isEmpty())
        return;
    m_registered.clear();
    Q_EMIT registeredChanged();
}

QString AppHookModel::publicBase() const
{
    const QString url = hookUrl();
    return url == m_hook.path ? QString() : url.left(url.size() - m_hook.path.size());
}

void AppHookModel::registerOnForge(const QString &publicUrl)
{
    if (!m_session || m_app.isEmpty() || m_busy)
        return;
    if (publicUrl.trimmed().isEmpty()) {
        setFailure(Error{ErrorCode::Invalid, tr("type the address the forge reaches this install at"), u"url"_s}, true);
        return;
    }
    change([this, url = publicUrl.trimmed()](
               Session::ObjectCallback done) { m_session->registerAppHook(m_app, url, std::move(done)); },
           [this](const QJsonObject &answer) {
               // The forge and the install share a new secret.
               m_registered = tr("Registered on the forge at %1 (hook %2)")
                                  .arg(answer.value(u"url"_s).toString(), answer.value(u"hook"_s).toString());
               Q_EMIT registeredChanged();
           });
}

void AppHookModel::copyHookUrl() const
{
    toClipboard(hookUrl());
}

void AppHookModel::copyNewSecret() const
{
    toClipboard(m_newSecret);
}

void AppHookModel::forgetNewSecret()
{
    if (m_newSecret.isEmpty())
        return;
    wipe(m_newSecret);
    Q_EMIT newSecretChanged();
}

void AppHookModel::onEvent(const QJsonObject &event)
{
    if (m_app.isEmpty() || event.value(u"app"_s).toString() != m_app)
        return;
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (!type)
        return;
    // A delivery that deploys is settled as its deploy is queued; the steps in between change
    // nothing here.
    if ((core::isDeployEvent(*type) && *type != core::EventType::DeployStep) || *type == core::EventType::AppUpdated)
        refresh();
}

} // namespace pando::desktop
