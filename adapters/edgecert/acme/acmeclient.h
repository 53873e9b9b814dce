#pragma once
// An ACME client (RFC 8555) that gets one name's certificate by the HTTP-01 challenge: the CA's
// directory, a nonce (a badNonce refusal is retried with the nonce it carries), the account
// (made with the account key's jwk on first use, named by its URL after), a new order for the
// name, its authorizations, the challenge answered through a ChallengeResponder (the edge serves
// the key authorization at http://NAME/.well-known/acme-challenge/TOKEN), finalize with a
// request for a fresh P-256 key, polling that honours the CA's Retry-After, and the chain.
//
// Every request has a deadline and so has the whole issuance. Errors name the step that failed
// and carry the CA's problem document (type and detail); they never hold a key.
//
// Threading: issue() blocks (it polls and sleeps between polls) and must run on a worker thread,
// never on the GUI's or the engine's; one AcmeClient is used by one thread at a time.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/jose/es256.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QJsonObject>
#include <QString>

namespace pando::adapters::edgecert {

struct AcmeOptions {
    QString directoryUrl; // the CA's directory, https://.../directory
    QString caRootFile;   // PEM roots the directory's TLS certificate is checked against; empty: the system's
    QString contactEmail; // given to the CA for expiry notices; empty: none
    int requestTimeoutMs = 15000;
    int issueTimeoutMs = 120000; // the whole issuance, polls included
    int pollIntervalMs = 1000;   // between polls when the CA names no Retry-After
};

// Serves a challenge's answer where the CA fetches it; withdrawn once the CA has decided.
class ChallengeResponder {
public:
    virtual ~ChallengeResponder() = default;
    virtual Status present(const QString &host, const QString &token, const QString &keyAuthorization) = 0;
    virtual void withdraw(const QString &host, const QString &token) = 0;
};

struct IssuedCertificate {
    QByteArray chainPem; // leaf first
    QByteArray keyPem;   // the leaf's private key
    QDateTime notBefore;
    QDateTime notAfter;
};

class AcmeClient {
public:
    // accountUrl: the CA's URL of this key's account, when it was made before (else it is made).
    AcmeClient(AcmeOptions options, jose::EcKey accountKey, QString accountUrl = {});

    Result<IssuedCertificate> issue(const QString &host, ChallengeResponder &responder,
                                    const CancelToken *cancel = nullptr);
    // The account's URL once the CA named it (keep it: the next client need not ask again). An
    // account the CA no longer knows is made again.
    QString accountUrl() const { return m_accountUrl; }
    // How many requests were sent again because the CA refused their nonce (badNonce).
    int badNonceRetries() const { return m_badNonceRetries; }

private:
    struct Answer {
        int status = 0;
        QJsonObject json;
        QByteArray body;
        QString location;
        int retryAfterMs = -1;
    };
    // One request of step, within the issuance's deadline; an error for a transport failure or,
    // unless the status is one of expected, the CA's problem document.
    Result<Answer> request(const char *step, const QByteArray &method, const QString &url, const QByteArray &body,
                           std::initializer_list<int> expected);
    // A signed POST (payload null: POST-as-GET), retried when the CA refuses the nonce.
    Result<Answer> post(const char *step, const QString &url, const std::optional<QJsonObject> &payload,
                        std::initializer_list<int> expected = {200, 201});
    Status loadDirectory();
    Status ensureNonce();
    Status ensureAccount();
    Status authorize(const QString &host, const QString &authorizationUrl, ChallengeResponder &responder);
    // Polls url until its status leaves the pending states; the final object.
    Result<QJsonObject> pollUntilSettled(const char *step, const QString &url);
    Status sleep(int ms);

    AcmeOptions m_options;
    jose::EcKey m_key;
    QString m_accountUrl;
    QJsonObject m_directory;
    QByteArray m_nonce;
    QDeadlineTimer m_deadline;
    const CancelToken *m_cancel = nullptr;
    int m_badNonceRetries = 0;
    QString m_lastProblem; // the type of the CA's problem document for the last request that failed
};

// How long a Retry-After header (delay-seconds or an HTTP date, RFC 9110) says to wait from now,
// in ms, at most 30 s (the issuance's own deadline bounds it too); -1 when it says nothing usable.
int retryAfterMs(const QByteArray &value, const QDateTime &now);

// "urn:ietf:params:acme:error:rejectedIdentifier: detail" from an RFC 7807 problem document;
// empty when body is none.
QString problemText(const QJsonObject &problem);

} // namespace pando::adapters::edgecert
