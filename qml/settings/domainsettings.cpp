#include "qml/settings/domainsettings.h"

#include <QJsonArray>
#include <QSaveFile>

using namespace Qt::StringLiterals;

namespace pando::desktop {

DomainSettings::DomainSettings(QObject *parent) : QObject(parent)
{}

DomainSettings::~DomainSettings() = default;

void DomainSettings::setSessionObject(QObject *object)
{
    Session *session = object ? sessionOf(object, this) : nullptr;
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    m_loaded = false;
    m_canEdit = false;
    m_canEditKnown = false;
    m_caKnown = false;
    m_caPem.clear();
    if (m_session)
        connect(m_session, &Session::stateChanged, this, [this](Session::State state) {
            if (state == Session::State::Connected)
                refresh();
        });
    Q_EMIT sessionChanged();
    Q_EMIT changed();
    refresh();
}

void DomainSettings::refresh()
{
    // Settings answers count by m_generation (a save makes an earlier read's answer stale); who
    // may edit and the CA by m_readGeneration, which only a new read makes stale.
    const quint64 generation = ++m_generation;
    const quint64 read = ++m_readGeneration;
    if (!m_session || m_session->state() != Session::State::Connected)
        return;
    m_busy = true;
    m_canEditKnown = false;
    m_caKnown = false;
    Q_EMIT changed();
    QPointer<DomainSettings> self(this);
    m_session->settings([self, generation](const Result<QJsonObject> &settings) {
        if (self && generation == self->m_generation)
            self->answered(settings, false);
    });
    m_session->users([self, read](const Result<QJsonArray> &users) {
        if (!self || read != self->m_readGeneration)
            return;
        self->m_canEdit = users.has_value();
        self->m_canEditKnown = true;
        Q_EMIT self->changed();
    });
    m_session->edgeCa([self, read](const Result<QJsonObject> &ca) {
        if (!self || read != self->m_readGeneration)
            return;
        self->m_caKnown = true;
        Q_EMIT self->changed();
        if (ca)
            self->setCa(ca->value(u"pem"_s).toString().toUtf8(), {}, false);
        else if (ca.error().code == ErrorCode::NotFound)
            self->setCa({},
                        tr("The install CA does not exist yet: Pando makes it when an app first needs a "
                           "certificate from it (tls: internal, or a local name)."),
                        false);
        else
            self->setCa({}, tr("Could not read the install CA: %1").arg(ca.error().text()), true);
    });
}

void DomainSettings::answered(const Result<QJsonObject> &settings, bool saved)
{
    m_busy = false;
    if (!settings)
        return fail(settings.error());
    m_error.clear();
    m_errorField.clear();
    if (saved)
        m_status = tr("Saved");
    apply(*settings);
}

void DomainSettings::apply(const QJsonObject &settings)
{
    m_loaded = true;
    m_baseDomain = settings.value(u"base_domain"_s).toString();
    QStringList allowed;
    for (const QJsonValue v : settings.value(u"allowed_domains"_s).toArray())
        allowed.append(v.toString());
    m_allowedDomains = allowed.join(u", "_s);
    m_wildcardDomains = settings.value(u"wildcard_domains"_s).toBool();
    Q_EMIT changed();
}

void DomainSettings::fail(const Error &error)
{
    m_error = error.hint.isEmpty() ? error.text() : tr("%1 — %2").arg(error.text(), error.hint);
    m_errorField = error.where;
    Q_EMIT changed();
}

void DomainSettings::save(const QString &baseDomain, const QString &allowedDomains, bool wildcardDomains)
{
    if (!m_session)
        return;
    QJsonArray allowed;
    for (const QString &name : allowedDomains.split(u',', Qt::SkipEmptyParts))
        if (const QString trimmed = name.trimmed(); !trimmed.isEmpty())
            allowed.append(trimmed);
    const QJsonObject fields{{u"base_domain"_s, baseDomain.trimmed()},
                             {u"allowed_domains"_s, allowed},
                             {u"wildcard_domains"_s, wildcardDomains}};
    const quint64 generation = ++m_generation;
    m_busy = true;
    m_status.clear();
    Q_EMIT changed();
    QPointer<DomainSettings> self(this);
    m_session->updateSettings(fields, [self, generation](const Result<QJsonObject> &settings) {
        if (self && generation == self->m_generation)
            self->answered(settings, true);
    });
}

void DomainSettings::saveCa(const QUrl &file)
{
    if (m_caPem.isEmpty())
        return;
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(m_caPem) != m_caPem.size() || !out.commit())
        return setCa(m_caPem, tr("Could not save the install CA to %1: %2").arg(path, out.errorString()), true);
    setCa(m_caPem, tr("Saved the install CA to %1").arg(path), false);
}

void DomainSettings::setCa(const QByteArray &pem, const QString &text, bool failed)
{
    m_caPem = pem;
    m_caText = text;
    m_caFailed = failed;
    Q_EMIT caChanged();
}

} // namespace pando::desktop
