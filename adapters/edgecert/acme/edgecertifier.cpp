#include "adapters/edgecert/acme/edgecertifier.h"

#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::adapters::edgecert {

EdgeCertifier::EdgeCertifier(std::shared_ptr<Router> edge, EdgeCertifierOptions options)
    : m_edge(std::move(edge)), m_options(std::move(options)), m_store(m_options.stateDir)
{}

EdgeCertifier::~EdgeCertifier()
{
    {
        const std::lock_guard guard(m_wakeMutex);
        m_stop = true;
    }
    m_cancel.cancel();
    m_wakeUp.notify_all();
    if (m_worker.joinable())
        m_worker.join();
}

Status EdgeCertifier::start()
{
    if (!m_edge->takesCertificates())
        return fail(ErrorCode::Invalid, u"this edge gets its certificates itself"_s, u"edge-certificates"_s,
                    u"Pando issues certificates only for the Caddy edge"_s);
    if (auto prepared = m_store.prepare(); !prepared)
        return prepared;
    if (auto pushed = pushCertificates(); !pushed)
        return pushed;
    if (!m_worker.joinable())
        m_worker = std::thread([this] { run(); });
    return {};
}

void EdgeCertifier::wake()
{
    {
        const std::lock_guard guard(m_wakeMutex);
        m_wake = true;
    }
    m_wakeUp.notify_all();
}

void EdgeCertifier::run()
{
    for (;;) {
        {
            std::unique_lock lock(m_wakeMutex);
            m_wakeUp.wait_for(lock, std::chrono::milliseconds(m_options.checkIntervalMs),
                              [this] { return m_wake || m_stop; });
            if (m_stop)
                return;
            m_wake = false;
        }
        certifyNow();
    }
}

bool EdgeCertifier::needsCertificate(const QString &host) const
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    if (const auto error = m_store.lastError(host);
        error && error->at.isValid() && error->at.msecsTo(now) < m_options.retryAfterFailureMs)
        return false;
    const std::optional<HeldCertificate> held = m_store.held(host);
    if (!held)
        return true;
    const qint64 lifetime = held->notBefore.msecsTo(held->notAfter);
    return now.msecsTo(held->notAfter) < qint64(double(lifetime) * m_options.renewWhenLeft);
}

void EdgeCertifier::certifyNow()
{
    const std::lock_guard pass(m_passMutex);
    const QStringList hosts = m_edge->autoTlsHosts();
    QStringList due;
    for (const QString &host : hosts)
        if (checkStorableHost(host) && needsCertificate(host))
            due << host;
    if (due.isEmpty())
        return;
    auto key = m_store.accountKey();
    if (!key) {
        for (const QString &host : std::as_const(due))
            discardResult(m_store.recordError(host, key.error().text(), QDateTime::currentDateTimeUtc()),
                          "a store that cannot keep its key cannot keep the error either; the log has it");
        qWarning("edgecert: %s", qPrintable(key.error().text()));
        return;
    }
    AcmeClient client(m_options.acme, *key, m_store.accountUrl(m_options.acme.directoryUrl));
    for (const QString &host : std::as_const(due)) {
        if (m_cancel.isCancelled())
            return;
        auto issued = client.issue(host, *this, &m_cancel);
        if (!issued && issued.error().code == ErrorCode::Cancelled)
            return; // Pando is stopping: no failure of the name's, so nothing to record
        if (!client.accountUrl().isEmpty() && client.accountUrl() != m_store.accountUrl(m_options.acme.directoryUrl))
            discardResult(m_store.setAccountUrl(m_options.acme.directoryUrl, client.accountUrl()),
                          "without it the next pass asks the CA for the account's URL again");
        Status kept =
            issued ? m_store.keep(host, issued->chainPem, issued->keyPem) : Status(std::unexpected(issued.error()));
        if (kept)
            kept = pushCertificates();
        if (!kept) {
            qWarning("edgecert: %s: %s", qPrintable(host), qPrintable(kept.error().text()));
            discardResult(m_store.recordError(host, kept.error().text(), QDateTime::currentDateTimeUtc()),
                          "the warning above says it when the store cannot");
        } else {
            qInfo("edgecert: %s: a certificate until %s", qPrintable(host),
                  qPrintable(issued->notAfter.toString(Qt::ISODate)));
        }
    }
}

Status EdgeCertifier::pushCertificates()
{
    QList<ServedCertificate> served;
    QStringList hosts = m_edge->autoTlsHosts();
    hosts.sort();
    for (const QString &host : std::as_const(hosts))
        if (const auto held = m_store.held(host))
            served.append({host, held->chainPem, held->keyPem});
    return m_edge->setCertificates(served);
}

Status EdgeCertifier::present(const QString &host, const QString &token, const QString &keyAuthorization)
{
    const std::lock_guard guard(m_challengeMutex);
    m_answers.append({host, token, keyAuthorization});
    if (auto pushed = m_edge->setChallengeAnswers(m_answers); !pushed) {
        m_answers.removeLast();
        return pushed;
    }
    return {};
}

void EdgeCertifier::withdraw(const QString &host, const QString &token)
{
    const std::lock_guard guard(m_challengeMutex);
    m_answers.removeIf([&](const ChallengeAnswer &a) { return a.host == host && a.token == token; });
    discardResult(m_edge->setChallengeAnswers(m_answers),
                  "an answer left in place is harmless: the CA asked already, and the next change drops it");
}

Result<Route> EdgeCertifier::ensure(const QString &app, int requestedPort)
{
    return m_edge->ensure(app, requestedPort);
}

Status EdgeCertifier::setBackend(const QString &app, const QString &host, int port)
{
    return m_edge->setBackend(app, host, port);
}

Status EdgeCertifier::remove(const QString &app)
{
    return m_edge->remove(app);
}

std::optional<Route> EdgeCertifier::route(const QString &app)
{
    return m_edge->route(app);
}

bool EdgeCertifier::servesAddresses() const
{
    return m_edge->servesAddresses();
}

Status EdgeCertifier::setAddresses(const QString &app, const AddressChange &change)
{
    auto changed = m_edge->setAddresses(app, change);
    if (changed) {
        // A new name gets its certificate now, and the ones it keeps are served again.
        discardResult(pushCertificates(), "the next pass hands them over again");
        wake();
    }
    return changed;
}

bool EdgeCertifier::assertsIdentity() const
{
    return m_edge->assertsIdentity();
}

Status EdgeCertifier::setIdentityCheck(const IdentityCheck &check)
{
    return m_edge->setIdentityCheck(check);
}

QList<CertificateState> EdgeCertifier::certificates()
{
    const QStringList hosts = m_edge->autoTlsHosts();
    const QSet<QString> ours(hosts.begin(), hosts.end());
    QList<CertificateState> states = m_edge->certificates();
    for (CertificateState &state : states) {
        if (!ours.contains(state.host))
            continue; // the edge's own (its install CA's)
        const std::optional<HeldCertificate> held = m_store.held(state.host);
        state = held ? certificateStateOf(state.host, held->chainPem) : CertificateState{state.host, {}, {}, {}};
        if (const auto error = m_store.lastError(state.host))
            state.error = error->error;
    }
    return states;
}

QByteArray EdgeCertifier::installCa()
{
    return m_edge->installCa();
}

std::pair<int, int> EdgeCertifier::addressPorts() const
{
    return m_edge->addressPorts();
}

Status EdgeCertifier::check()
{
    auto checked = m_edge->check();
    wake();
    return checked;
}

RouterStatus EdgeCertifier::status()
{
    return m_edge->status();
}

} // namespace pando::adapters::edgecert
