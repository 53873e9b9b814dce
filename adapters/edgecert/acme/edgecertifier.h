#pragma once
// Certificates for an edge that cannot get them itself (several edges behind one name, an edge
// without ACME): Pando gets them from an ACME CA by HTTP-01 and hands them to the edge to serve.
// EdgeCertifier wraps the edge's Router and passes every route change on; beside it a worker
// thread gets a certificate for each name the edge serves with tls: auto that has none, and
// again ("renews") once a third of its lifetime is left. The edge answers the CA's challenge
// (Router::setChallengeAnswers) and serves what it is handed (Router::setCertificates), both
// applied as every route change is.
//
// The certificates live in a CertStore (certstore.h) and are handed to the edge again when the
// certifier starts, so a restart serves the same certificate without a new order. A failure is
// recorded as the name's last error, which certificates() reports; the certificate held before
// keeps serving, and the name is tried again after retryAfterFailureMs.
//
// Threading: every Router method may be called from any thread (the wrapped edge's contract);
// issuance runs on the certifier's own thread, which the destructor cancels and joins.

#include "adapters/api/routing.h"
#include "adapters/edgecert/acme/acmeclient.h"
#include "adapters/edgecert/acme/certstore.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace pando::adapters::edgecert {

struct EdgeCertifierOptions {
    AcmeOptions acme;
    QString stateDir;                 // the CertStore's directory (made 0700)
    int checkIntervalMs = 60000;      // how often names are looked at without a route change
    int retryAfterFailureMs = 300000; // a name that failed is not tried again before this
    double renewWhenLeft = 1.0 / 3.0; // of the lifetime: renew when less than this is left
};

class EdgeCertifier : public Router, private ChallengeResponder {
public:
    EdgeCertifier(std::shared_ptr<Router> edge, EdgeCertifierOptions options);
    ~EdgeCertifier() override;

    // Readies the store, hands the edge the certificates kept there, and starts the worker.
    // Invalid when the edge does not take certificates.
    Status start();
    // Runs one pass on the calling thread: every name that needs a certificate gets one (or its
    // error). For tests and the worker.
    void certifyNow();

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;
    bool servesAddresses() const override;
    Status setAddresses(const QString &app, const AddressChange &change) override;
    bool assertsIdentity() const override;
    Status setIdentityCheck(const IdentityCheck &check) override;
    // The edge's, with each name Pando certifies as Pando's store says (issuer, expiry, error).
    QList<CertificateState> certificates() override;
    QByteArray installCa() override;
    std::pair<int, int> addressPorts() const override;
    Status check() override;
    RouterStatus status() override;

private:
    Status present(const QString &host, const QString &token, const QString &keyAuthorization) override;
    void withdraw(const QString &host, const QString &token) override;
    bool needsCertificate(const QString &host) const;
    Status pushCertificates();
    void wake();
    void run();

    std::shared_ptr<Router> m_edge;
    EdgeCertifierOptions m_options;
    CertStore m_store;
    CancelToken m_cancel;
    std::mutex m_challengeMutex; // m_answers
    QList<ChallengeAnswer> m_answers;
    std::mutex m_passMutex; // one pass at a time
    std::mutex m_wakeMutex; // m_wake, m_stop
    std::condition_variable m_wakeUp;
    bool m_wake = false;
    bool m_stop = false;
    std::thread m_worker;
};

} // namespace pando::adapters::edgecert
