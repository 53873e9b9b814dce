#include "qml/apps/appsettings.h"
#include "qml/apps/appsettingstext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>
#include <QSaveFile>

using namespace Qt::StringLiterals;

namespace pando::desktop {

using namespace settingstext;

namespace {

// The spec fields the tab edits, by path; numeric ones are sent as numbers when they read as one
// (otherwise as the text typed, for the engine to refuse naming the field).
struct Field {
    QString path;
    bool numeric = false;
};

const QList<Field> &fields()
{
    static const QList<Field> list{
        {u"source.ref"_s},
        {u"run.port"_s, true},
        {u"run.restart"_s},
        {u"run.resources.memory"_s},
        {u"run.resources.cpus"_s, true},
        {u"run.resources.disk"_s},
        {u"run.resources.diskPolicy"_s},
        {u"health.path"_s},
        {u"health.timeout"_s},
        {u"health.interval"_s},
        {u"health.every"_s},
        {u"health.failures"_s, true},
        {u"route.port"_s, true},
        {u"network.egress"_s},
    };
    return list;
}

// Sets (or, for an undefined value, removes) the value at path, making the maps on the way.
void setAt(QJsonObject &object, QStringView path, const QJsonValue &value)
{
    const qsizetype dot = path.indexOf(u'.');
    if (dot < 0) {
        if (value.isUndefined())
            object.remove(path.toString());
        else
            object.insert(path.toString(), value);
        return;
    }
    const QString head = path.left(dot).toString();
    QJsonObject inner = object.value(head).toObject();
    setAt(inner, path.mid(dot + 1), value);
    object.insert(head, inner);
}

QString whenText(qint64 ms)
{
    if (ms <= 0)
        return {};
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(ms), QLocale::ShortFormat);
}

// One runtime's room for people: "2 of 8 CPUs committed", "1.5 GB of 16 GB committed, 9 GB free".
QVariantMap runtimeRow(const QJsonObject &r)
{
    const QJsonObject cpus = r.value(u"cpus"_s).toObject();
    const QJsonObject memory = r.value(u"memory"_s).toObject();
    const QJsonObject disk = r.value(u"disk"_s).toObject();
    const auto amount = [](const QJsonObject &o) {
        const qint64 total = o.value(u"total"_s).toInteger();
        const qint64 committed = o.value(u"committed"_s).toInteger();
        QString text = total > 0 ? AppSettings::tr("%1 of %2 committed").arg(bytesText(committed), bytesText(total))
                                 : AppSettings::tr("%1 committed, total unknown").arg(bytesText(committed));
        if (o.value(u"available"_s).isDouble())
            text = AppSettings::tr("%1, %2 free").arg(text, bytesText(o.value(u"available"_s).toInteger()));
        return text;
    };
    const double cpuTotal = cpus.value(u"total"_s).toDouble();
    const double cpuCommitted = cpus.value(u"committed"_s).toDouble();
    QString diskText = amount(disk);
    if (const QString of = disk.value(u"of"_s).toString(); !of.isEmpty())
        diskText = AppSettings::tr("%1 (%2)").arg(diskText, of);
    if (!disk.value(u"measures_apps"_s).toBool(true))
        diskText = AppSettings::tr("%1; apps cannot be held to a disk limit here").arg(diskText);
    const QJsonObject cache = disk.value(u"build_cache"_s).toObject();
    if (const int images = cache.value(u"images"_s).toInt(); images > 0)
        diskText = AppSettings::tr("%1; build cache %2 in %n image(s)", nullptr, images)
                       .arg(diskText, bytesText(cache.value(u"bytes"_s).toInteger()));
    if (const QJsonObject builder = cache.value(u"builder"_s).toObject(); !builder.isEmpty())
        diskText = AppSettings::tr("%1; builder cache %2 (%3 reclaimable: docker builder prune)")
                       .arg(diskText, bytesText(builder.value(u"bytes"_s).toInteger()),
                            bytesText(builder.value(u"reclaimable"_s).toInteger()));
    return {
        {u"kind"_s, r.value(u"kind"_s).toString()},
        {u"isDefault"_s, r.value(u"default"_s).toBool()},
        {u"reachable"_s, r.value(u"reachable"_s).toBool()},
        {u"apps"_s, r.value(u"apps"_s).toInt()},
        {u"cpus"_s,
         cpuTotal > 0
             ? AppSettings::tr("%1 of %2 committed").arg(QLocale().toString(cpuCommitted), QLocale().toString(cpuTotal))
             : AppSettings::tr("%1 committed, total unknown").arg(QLocale().toString(cpuCommitted))},
        {u"memory"_s, amount(memory)},
        {u"disk"_s, diskText},
        {u"note"_s, r.value(u"note"_s).toString()},
    };
}

} // namespace

AppSettings::AppSettings(QObject *parent) : QObject(parent)
{}

AppSettings::~AppSettings()
{
    if (m_backupFile)
        m_backupFile->cancelWriting();
    delete m_backupFile;
}

void AppSettings::setSessionObject(QObject *session)
{
    setSession(sessionOf(session, this));
}

void AppSettings::setSession(Session *session)
{
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (m_session)
        connect(m_session, &Session::eventReceived, this, &AppSettings::onEvent);
    Q_EMIT sessionChanged();
    refresh();
}

void AppSettings::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    Q_EMIT appChanged();
    refresh();
}

void AppSettings::clear()
{
    m_view = {};
    m_error.clear();
    m_draft.clear();
    m_env.clear();
    m_diff.clear();
    m_previewed.clear();
    m_saveError = {};
    m_secrets.clear();
    m_missingSecrets.clear();
    m_secretError.clear();
    m_services.clear();
    m_servicesError.clear();
    m_actionError.clear();
    if (!isBackupBusy()) {
        m_backupSlot.clear();
        m_backupText.clear();
        m_backupFailed = false;
    }
    Q_EMIT loadedChanged();
    Q_EMIT draftChanged();
    Q_EMIT envChanged();
    Q_EMIT diffChanged();
    Q_EMIT saveChanged();
    Q_EMIT secretsChanged();
    Q_EMIT servicesChanged();
    Q_EMIT backupChanged();
    Q_EMIT actionChanged();
}

void AppSettings::refresh()
{
    ++m_generation;
    clear();
    if (!m_session || m_app.isEmpty())
        return;
    loadApp();
    loadSecrets();
    loadServices();
    loadCapacity();
}

void AppSettings::loadApp()
{
    m_loading = true;
    Q_EMIT loadedChanged();
    QPointer<AppSettings> self(this);
    m_session->app(m_app, [self, generation = m_generation](const Result<QJsonObject> &view) {
        if (!self || generation != self->m_generation)
            return;
        self->m_loading = false;
        if (!view) {
            self->m_error = failureText(view.error());
            Q_EMIT self->loadedChanged();
            return;
        }
        self->m_error.clear();
        self->applyView(*view);
    });
}

void AppSettings::applyView(const QJsonObject &view)
{
    const bool keepDraft = isModified();
    m_view = view;
    Q_EMIT loadedChanged();
    // A change made elsewhere does not throw away what the user is typing: the diff shows it
    // against the new spec at the next preview.
    if (!keepDraft)
        resetDraft();
}

void AppSettings::resetDraft()
{
    const QJsonObject spec = m_view.value(u"spec"_s).toObject();
    m_draft.clear();
    for (const Field &f : fields())
        m_draft.insert(f.path, textOf(valueAt(spec, f.path)));
    m_env.clear();
    const QJsonObject env = valueAt(spec, u"run.env"_s).toObject();
    for (auto it = env.begin(); it != env.end(); ++it)
        m_env.append({it.key(), it.value().toString()});
    m_diff.clear();
    m_previewed.clear();
    m_saveError = {};
    Q_EMIT draftChanged();
    Q_EMIT envChanged();
    Q_EMIT diffChanged();
    Q_EMIT saveChanged();
}

QJsonObject AppSettings::shown(QJsonObject spec)
{
    QJsonObject run = spec.value(u"run"_s).toObject();
    QJsonObject resources = run.value(u"resources"_s).toObject();
    resources.remove(u"memoryBytes"_s);
    resources.remove(u"diskBytes"_s);
    run.insert(u"resources"_s, resources);
    spec.insert(u"run"_s, run);
    return spec;
}

QJsonObject AppSettings::withoutEnv(QJsonObject spec)
{
    QJsonObject run = spec.value(u"run"_s).toObject();
    run.remove(u"env"_s);
    spec.insert(u"run"_s, run);
    return spec;
}

QString AppSettings::specText() const
{
    return m_view.isEmpty() ? QString() : specYaml(shown(m_view.value(u"spec"_s).toObject()));
}

QString AppSettings::revisionText() const
{
    const qint64 updated = m_view.value(u"updated_ms"_s).toInteger();
    return updated > 0 ? tr("Spec changed %1").arg(whenText(updated)) : QString();
}

QString AppSettings::diskText() const
{
    const QJsonObject resources = valueAt(m_view.value(u"spec"_s).toObject(), u"run.resources"_s).toObject();
    const QString disk = resources.value(u"disk"_s).toString();
    if (disk.isEmpty())
        return tr("No disk limit");
    return resources.value(u"diskPolicy"_s).toString() == u"warn"_s
               ? tr("At most %1 written in its container; past it, Pando warns").arg(disk)
               : tr("At most %1 written in its container; past it, Pando stops the app").arg(disk);
}

QString AppSettings::diskState() const
{
    const QString reason = m_view.value(u"status_reason"_s).toString();
    return reason.contains(u"disk limit"_s) ? reason : QString();
}

bool AppSettings::isDiskStopped() const
{
    return m_view.value(u"status"_s).toString() == u"stopped"_s && !diskState().isEmpty();
}

QVariantList AppSettings::env() const
{
    QVariantList list;
    for (const auto &[name, value] : m_env)
        list.append(QVariantMap{{u"name"_s, name}, {u"value"_s, value}});
    return list;
}

bool AppSettings::isModified() const
{
    if (m_view.isEmpty())
        return false;
    return specYaml(draftSpec()) != specText();
}

QVariantList AppSettings::diff() const
{
    QVariantList list;
    for (const DiffLine &line : m_diff) {
        const QString kind = line.kind == DiffLine::Kind::Added     ? u"+"_s
                             : line.kind == DiffLine::Kind::Removed ? u"-"_s
                                                                    : u" "_s;
        list.append(QVariantMap{{u"kind"_s, kind}, {u"text"_s, line.text}});
    }
    return list;
}

QJsonObject AppSettings::draftSpec() const
{
    const QJsonObject original = m_view.value(u"spec"_s).toObject();
    QJsonObject spec = shown(original);
    for (const Field &f : fields()) {
        const QString text = m_draft.value(f.path).toString().trimmed();
        if (text == textOf(valueAt(original, f.path)))
            continue; // as the engine wrote it
        if (text.isEmpty()) {
            setAt(spec, f.path, QJsonValue(QJsonValue::Undefined));
            continue;
        }
        bool isNumber = false;
        const double number = f.numeric ? text.toDouble(&isNumber) : 0;
        setAt(spec, f.path, isNumber ? QJsonValue(number) : QJsonValue(text));
    }
    // A policy says what happens past a limit: without a limit it goes too.
    if (valueAt(spec, u"run.resources.disk"_s).isUndefined())
        setAt(spec, u"run.resources.diskPolicy"_s, QJsonValue(QJsonValue::Undefined));
    QJsonObject env;
    for (const auto &[name, value] : m_env)
        if (!name.trimmed().isEmpty())
            env.insert(name.trimmed(), value);
    setAt(spec, u"run.env"_s, env);
    return spec;
}

void AppSettings::setField(const QString &path, const QString &value)
{
    if (!m_draft.contains(path)) {
        qWarning("AppSettings: no field %s", qPrintable(path));
        return;
    }
    if (m_draft.value(path).toString() == value)
        return;
    m_draft.insert(path, value);
    Q_EMIT draftChanged();
}

void AppSettings::setEnv(int row, const QString &name, const QString &value)
{
    if (row < 0 || row >= m_env.size())
        return;
    if (m_env[row].first == name && m_env[row].second == value)
        return;
    m_env[row] = {name, value};
    Q_EMIT draftChanged();
}

void AppSettings::addEnv()
{
    m_env.append(std::pair<QString, QString>());
    Q_EMIT envChanged();
    Q_EMIT draftChanged();
}

void AppSettings::removeEnv(int row)
{
    if (row < 0 || row >= m_env.size())
        return;
    m_env.removeAt(row);
    Q_EMIT envChanged();
    Q_EMIT draftChanged();
}

void AppSettings::discard()
{
    resetDraft();
}

void AppSettings::setSaveError(const Error &error)
{
    m_saveError = error;
    Q_EMIT saveChanged();
}

bool AppSettings::preview()
{
    m_saveError = {};
    // What the form can tell at once; the rest is the engine's to judge.
    QSet<QString> names;
    for (qsizetype row = 0; row < m_env.size(); ++row) {
        const QString name = m_env[row].first.trimmed();
        if (name.isEmpty() && !m_env[row].second.isEmpty()) {
            setSaveError(Error{ErrorCode::Invalid, tr("Name the variable in row %1 of the environment").arg(row + 1),
                               u"run.env"_s});
            return false;
        }
        if (!name.isEmpty() && names.contains(name)) {
            setSaveError(
                Error{ErrorCode::Invalid, tr("%1 is in the environment twice").arg(name), u"run.env."_s + name});
            return false;
        }
        names.insert(name);
    }
    Q_EMIT saveChanged();
    const QString after = specYaml(draftSpec());
    const QString before = specText();
    m_diff = before == after ? QList<DiffLine>() : lineDiff(before, after);
    m_previewed = before == after ? QString() : after;
    Q_EMIT diffChanged();
    return !m_previewed.isEmpty();
}

void AppSettings::save()
{
    if (!m_session || m_saving)
        return;
    if (m_previewed.isEmpty() && !preview())
        return;
    m_saving = true;
    m_saveError = {};
    Q_EMIT saveChanged();
    QPointer<AppSettings> self(this);
    const auto done = [self, generation = m_generation](const Result<QJsonObject> &view) {
        if (!self || generation != self->m_generation)
            return;
        self->m_saving = false;
        if (!view) {
            self->setSaveError(view.error());
            return;
        }
        self->m_view = *view;
        Q_EMIT self->loadedChanged();
        self->resetDraft();
        Q_EMIT self->saved();
    };
    // Only the environment changed: the engine changes those lines of the spec's own text, so its
    // writer's comments and layout stay (PATCH …/env). Anything else sends the whole spec.
    const QJsonObject draft = draftSpec();
    const QJsonObject engine = shown(m_view.value(u"spec"_s).toObject());
    if (withoutEnv(draft) == withoutEnv(engine)) {
        const QJsonObject before = valueAt(engine, u"run.env"_s).toObject();
        const QJsonObject after = valueAt(draft, u"run.env"_s).toObject();
        QJsonObject set;
        QJsonArray unset;
        for (auto it = after.constBegin(); it != after.constEnd(); ++it)
            if (before.value(it.key()) != it.value())
                set.insert(it.key(), it.value());
        for (auto it = before.constBegin(); it != before.constEnd(); ++it)
            if (!after.contains(it.key()))
                unset.append(it.key());
        m_session->changeAppEnv(m_app, QJsonObject{{u"set"_s, set}, {u"unset"_s, unset}},
                                [done](const Result<QJsonObject> &answer) {
                                    if (!answer)
                                        return done(std::unexpected(answer.error()));
                                    done(answer->value(u"app"_s).toObject());
                                });
        return;
    }
    m_session->updateApp(m_app, m_previewed.toUtf8(), done);
}

void AppSettings::loadSecrets()
{
    QPointer<AppSettings> self(this);
    m_session->appSecrets(m_app, [self, generation = m_generation](const Result<QJsonObject> &answer) {
        if (!self || generation != self->m_generation)
            return;
        self->m_secrets.clear();
        self->m_missingSecrets.clear();
        if (!answer) {
            self->m_secretError = failureText(answer.error());
        } else {
            for (const QJsonValue v : answer->value(u"secrets"_s).toArray()) {
                const QJsonObject s = v.toObject();
                self->m_secrets.append(QVariantMap{
                    {u"name"_s, s.value(u"name"_s).toString()},
                    {u"injectedAs"_s, s.value(u"injected_as"_s).toString()},
                    {u"file"_s, s.value(u"file"_s).toString()},
                    {u"updatedText"_s, whenText(s.value(u"updated_ms"_s).toInteger())},
                });
            }
            for (const QJsonValue v : answer->value(u"missing"_s).toArray())
                self->m_missingSecrets.append(v.toString());
        }
        Q_EMIT self->secretsChanged();
    });
}

bool AppSettings::secretAnswered(const Error *refusal)
{
    m_secretBusy = false;
    if (refusal) {
        m_secretError = failureText(*refusal);
        Q_EMIT secretsChanged();
        return false;
    }
    loadSecrets();
    return true;
}

void AppSettings::setSecret(const QString &name, const QString &value)
{
    if (!m_session || m_secretBusy)
        return;
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty() || value.isEmpty()) {
        m_secretError = trimmed.isEmpty() ? tr("Name the secret") : tr("Enter the secret's value");
        Q_EMIT secretsChanged();
        return;
    }
    m_secretBusy = true;
    m_secretError.clear();
    Q_EMIT secretsChanged();
    QPointer<AppSettings> self(this);
    m_session->setAppSecret(m_app, trimmed, value,
                            [self, trimmed, generation = m_generation](const Result<QJsonObject> &answer) {
                                if (!self || generation != self->m_generation)
                                    return;
                                if (self->secretAnswered(answer ? nullptr : &answer.error()))
                                    Q_EMIT self->secretSet(trimmed);
                            });
}

void AppSettings::removeSecret(const QString &name)
{
    if (!m_session || m_secretBusy)
        return;
    m_secretBusy = true;
    m_secretError.clear();
    Q_EMIT secretsChanged();
    QPointer<AppSettings> self(this);
    m_session->removeAppSecret(m_app, name, [self, name, generation = m_generation](const Status &done) {
        if (!self || generation != self->m_generation)
            return;
        if (self->secretAnswered(done ? nullptr : &done.error()))
            Q_EMIT self->secretRemoved(name);
    });
}

void AppSettings::startApp()
{
    if (!m_session)
        return;
    m_actionError.clear();
    Q_EMIT actionChanged();
    QPointer<AppSettings> self(this);
    m_session->appAction(m_app, Session::AppAction::Start,
                         [self, generation = m_generation](const Result<QJsonObject> &view) {
                             if (!self || generation != self->m_generation)
                                 return;
                             if (!view) {
                                 self->m_actionError = failureText(view.error());
                                 Q_EMIT self->actionChanged();
                                 return;
                             }
                             self->applyView(*view);
                         });
}

void AppSettings::loadCapacity()
{
    QPointer<AppSettings> self(this);
    m_session->capacity([self](const Result<QJsonObject> &answer) {
        if (!self)
            return;
        self->m_capacity.clear();
        self->m_capacityError.clear();
        if (!answer)
            self->m_capacityError = failureText(answer.error());
        else
            for (const QJsonValue v : answer->value(u"runtimes"_s).toArray())
                self->m_capacity.append(runtimeRow(v.toObject()));
        Q_EMIT self->capacityChanged();
    });
}

void AppSettings::onEvent(const QJsonObject &event)
{
    if (m_app.isEmpty() || event.value(u"app"_s).toString() != m_app)
        return;
    const QString type = event.value(u"type"_s).toString();
    if (type == u"app.updated"_s || type == u"app.started"_s || type == u"app.stopped"_s ||
        type == u"app.restarted"_s || type == u"app.disk.exceeded"_s || type == u"deploy.succeeded"_s)
        loadApp();
    if (type == u"app.secrets.changed"_s)
        loadSecrets();
    if (type == u"deploy.succeeded"_s || type == u"service.removed"_s)
        loadServices();
}

} // namespace pando::desktop
