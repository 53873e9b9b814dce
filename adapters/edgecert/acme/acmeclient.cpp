#include "adapters/edgecert/acme/acmeclient.h"

#include "adapters/edgecert/acme/acmejws.h"
#include "adapters/edgecert/acme/certrequest.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSslCertificate>
#include <QThread>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::adapters::edgecert {

namespace {

constexpr int NonceRetries = 8;
constexpr int MaxPollSleepMs = 30000;

QString problemType(QLatin1StringView kind)
{
    return u"urn:ietf:params:acme:error:"_s + kind;
}

} // namespace

int retryAfterMs(const QByteArray &value, const QDateTime &now)
{
    if (value.isEmpty())
        return -1;
    bool number = false;
    const qint64 seconds = value.toLongLong(&number);
    if (number)
        return int(qBound(qint64(0), seconds * 1000, qint64(MaxPollSleepMs)));
    // An HTTP date (IMF-fixdate) always ends in "GMT", which Qt's RFC 2822 parser wants as an offset.
    QString date = QString::fromLatin1(value).trimmed();
    if (date.endsWith(u" GMT"_s))
        date = date.chopped(3) + u"+0000"_s;
    const QDateTime at = QDateTime::fromString(date, Qt::RFC2822Date);
    if (!at.isValid())
        return -1;
    return int(qBound(qint64(0), now.msecsTo(at), qint64(MaxPollSleepMs)));
}

QString problemText(const QJsonObject &problem)
{
    const QString type = problem.value("type"_L1).toString();
    const QString detail = problem.value("detail"_L1).toString();
    QStringList parts{type, detail};
    // A compound problem (several identifiers) says which one in its subproblems.
    for (const QJsonValue sub : problem.value("subproblems"_L1).toArray())
        parts << problemText(sub.toObject());
    parts.removeAll(QString());
    return parts.join(u": "_s);
}

AcmeClient::AcmeClient(AcmeOptions options, jose::EcKey accountKey, QString accountUrl)
    : m_options(std::move(options)), m_key(std::move(accountKey)), m_accountUrl(std::move(accountUrl))
{}

Status AcmeClient::sleep(int ms)
{
    QDeadlineTimer until(ms);
    while (!until.hasExpired()) {
        if (m_cancel && m_cancel->isCancelled())
            return fail(ErrorCode::Cancelled, u"the certificate's issuance was cancelled"_s);
        if (m_deadline.hasExpired())
            break;
        QThread::msleep(quint64(qMin<qint64>(50, until.remainingTime())));
    }
    return {};
}

Result<AcmeClient::Answer> AcmeClient::request(const char *step, const QByteArray &method, const QString &url,
                                               const QByteArray &body, std::initializer_list<int> expected)
{
    const QString where = u"ACME "_s + QLatin1String(step);
    if (m_deadline.hasExpired())
        return fail(ErrorCode::Timeout, u"the CA did not issue within %1 s"_s.arg(m_options.issueTimeoutMs / 1000),
                    where);
    const QUrl target(url);
    if (!target.isValid() || target.scheme() != u"https" || target.host().isEmpty())
        return fail(ErrorCode::Failed, u"the CA named no https URL to go on with (%1)"_s.arg(url), where);
    httpkit::Endpoint endpoint;
    endpoint.baseUrl = target.toString(QUrl::RemovePath | QUrl::RemoveQuery | QUrl::RemoveFragment).toUtf8();
    endpoint.caFile = m_options.caRootFile;
    httpkit::Request req;
    req.method = method;
    req.path = target.path();
    for (const auto &[key, value] : QUrlQuery(target).queryItems(QUrl::FullyDecoded))
        req.query.append({key, value});
    req.body = body;
    if (!body.isEmpty())
        req.contentType = "application/jose+json";
    req.keepHeaders = true;
    req.timeoutMs = int(qBound(qint64(1), m_deadline.remainingTime(), qint64(m_options.requestTimeoutMs)));
    const httpkit::Exchange exchange = httpkit::perform(endpoint, req, m_cancel);
    if (exchange.cancelled)
        return fail(ErrorCode::Cancelled, u"the certificate's issuance was cancelled"_s, where);
    if (exchange.transportFailed)
        return fail(exchange.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                    u"the CA did not answer at %1: %2"_s.arg(url, exchange.error), where);
    if (const QByteArray nonce = exchange.header("Replay-Nonce"); !nonce.isEmpty())
        m_nonce = nonce;
    Answer answer;
    answer.status = exchange.status;
    answer.body = exchange.body;
    answer.json = QJsonDocument::fromJson(exchange.body).object();
    answer.location = QString::fromUtf8(exchange.header("Location"));
    answer.retryAfterMs = retryAfterMs(exchange.header("Retry-After"), QDateTime::currentDateTimeUtc());
    if (std::ranges::find(expected, exchange.status) == expected.end()) {
        const QString problem = problemText(answer.json);
        Error error{ErrorCode::Failed,
                    u"the CA answered %1%2"_s.arg(exchange.status)
                        .arg(problem.isEmpty() ? QString() : QString(u": "_s + problem)),
                    where};
        m_lastProblem = answer.json.value("type"_L1).toString();
        return std::unexpected(error);
    }
    return answer;
}

Result<AcmeClient::Answer> AcmeClient::post(const char *step, const QString &url,
                                            const std::optional<QJsonObject> &payload,
                                            std::initializer_list<int> expected)
{
    const QByteArray bytes = payload ? QJsonDocument(*payload).toJson(QJsonDocument::Compact) : QByteArray();
    for (int attempt = 0;; ++attempt) {
        if (auto nonce = ensureNonce(); !nonce)
            return std::unexpected(nonce.error());
        const QByteArray nonce = std::exchange(m_nonce, {});
        const QByteArray body = signedRequest(m_key, protectedHeader(m_key, nonce, url, m_accountUrl), bytes);
        if (body.isEmpty())
            return fail(ErrorCode::Internal, u"the account key could not sign"_s, u"ACME "_s + QLatin1String(step));
        m_lastProblem.clear();
        auto answer = request(step, "POST", url, body, expected);
        // A refused nonce is no failure of ours: the refusal carries a fresh one to try again with.
        if (!answer && m_lastProblem == problemType("badNonce"_L1) && attempt < NonceRetries) {
            ++m_badNonceRetries;
            continue;
        }
        return answer;
    }
}

Status AcmeClient::loadDirectory()
{
    if (!m_directory.isEmpty())
        return {};
    auto answer = request("directory", "GET", m_options.directoryUrl, {}, {200});
    if (!answer)
        return std::unexpected(answer.error());
    for (const char *field : {"newNonce", "newAccount", "newOrder"})
        if (answer->json.value(QLatin1String(field)).toString().isEmpty())
            return fail(ErrorCode::Failed, u"the CA's directory names no %1"_s.arg(QLatin1String(field)),
                        u"ACME directory"_s);
    m_directory = answer->json;
    return {};
}

Status AcmeClient::ensureNonce()
{
    if (!m_nonce.isEmpty())
        return {};
    if (auto loaded = loadDirectory(); !loaded)
        return loaded;
    auto answer = request("newNonce", "GET", m_directory.value("newNonce"_L1).toString(), {}, {200, 204});
    if (!answer)
        return std::unexpected(answer.error());
    if (m_nonce.isEmpty())
        return fail(ErrorCode::Failed, u"the CA gave no Replay-Nonce"_s, u"ACME newNonce"_s);
    return {};
}

Status AcmeClient::ensureAccount()
{
    if (!m_accountUrl.isEmpty())
        return {};
    QJsonObject payload{{"termsOfServiceAgreed"_L1, true}};
    if (!m_options.contactEmail.isEmpty())
        payload.insert("contact"_L1, QJsonArray{QString(u"mailto:"_s + m_options.contactEmail)});
    auto answer = post("newAccount", m_directory.value("newAccount"_L1).toString(), payload);
    if (!answer)
        return std::unexpected(answer.error());
    if (answer->location.isEmpty())
        return fail(ErrorCode::Failed, u"the CA named no account URL"_s, u"ACME newAccount"_s);
    m_accountUrl = answer->location;
    return {};
}

Result<QJsonObject> AcmeClient::pollUntilSettled(const char *step, const QString &url)
{
    for (;;) {
        auto answer = post(step, url, std::nullopt, {200});
        if (!answer)
            return std::unexpected(answer.error());
        const QString status = answer->json.value("status"_L1).toString();
        if (status != u"pending" && status != u"processing")
            return answer->json;
        if (auto slept = sleep(answer->retryAfterMs >= 0 ? answer->retryAfterMs : m_options.pollIntervalMs); !slept)
            return std::unexpected(slept.error());
    }
}

Status AcmeClient::authorize(const QString &host, const QString &authorizationUrl, ChallengeResponder &responder)
{
    auto authorization = post("authorization", authorizationUrl, std::nullopt, {200});
    if (!authorization)
        return std::unexpected(authorization.error());
    if (authorization->json.value("status"_L1).toString() == u"valid")
        return {}; // the account proved this name recently
    QJsonObject challenge;
    for (const QJsonValue offered : authorization->json.value("challenges"_L1).toArray())
        if (offered.toObject().value("type"_L1).toString() == u"http-01")
            challenge = offered.toObject();
    if (challenge.isEmpty())
        return fail(ErrorCode::Failed, u"the CA offers no http-01 challenge for %1"_s.arg(host),
                    u"ACME authorization"_s);
    const QString token = challenge.value("token"_L1).toString();
    // The token goes into a URL path the edge serves: only base64url characters (RFC 8555 8.3).
    static const QRegularExpression tokenShape(u"^[A-Za-z0-9_-]{16,256}$"_s);
    if (!tokenShape.match(token).hasMatch())
        return fail(ErrorCode::Failed, u"the CA's http-01 token for %1 is not base64url"_s.arg(host),
                    u"ACME challenge"_s);
    if (auto presented = responder.present(host, token, keyAuthorization(token, m_key)); !presented)
        return std::unexpected(
            Error{presented.error().code,
                  u"the edge could not serve the challenge for %1: %2"_s.arg(host, presented.error().text()),
                  u"ACME challenge"_s});
    const auto withdraw = qScopeGuard([&] { responder.withdraw(host, token); });
    if (auto ready = post("challenge", challenge.value("url"_L1).toString(), QJsonObject{}, {200}); !ready)
        return std::unexpected(ready.error());
    auto settled = pollUntilSettled("authorization", authorizationUrl);
    if (!settled)
        return std::unexpected(settled.error());
    if (settled->value("status"_L1).toString() == u"valid")
        return {};
    QString why;
    for (const QJsonValue offered : settled->value("challenges"_L1).toArray())
        if (const QJsonObject error = offered.toObject().value("error"_L1).toObject(); !error.isEmpty())
            why = problemText(error);
    return fail(ErrorCode::Failed,
                u"the CA did not accept the http-01 challenge for %1 (%2)%3"_s.arg(
                    host, settled->value("status"_L1).toString(), why.isEmpty() ? QString() : u": "_s + why),
                u"ACME authorization"_s);
}

Result<IssuedCertificate> AcmeClient::issue(const QString &host, ChallengeResponder &responder,
                                            const CancelToken *cancel)
{
    m_cancel = cancel;
    m_deadline = QDeadlineTimer(m_options.issueTimeoutMs);
    if (auto loaded = loadDirectory(); !loaded)
        return std::unexpected(loaded.error());
    if (auto account = ensureAccount(); !account)
        return std::unexpected(account.error());

    const QJsonObject identifier{{"type"_L1, "dns"_L1}, {"value"_L1, host}};
    const QJsonObject newOrder{{"identifiers"_L1, QJsonArray{identifier}}};
    auto order = post("newOrder", m_directory.value("newOrder"_L1).toString(), newOrder, {201});
    if (!order && m_lastProblem == problemType("accountDoesNotExist"_L1)) {
        // The CA forgot the account kept for it (a CA reset, a test CA restarted): make a new one.
        m_accountUrl.clear();
        if (auto account = ensureAccount(); !account)
            return std::unexpected(account.error());
        order = post("newOrder", m_directory.value("newOrder"_L1).toString(), newOrder, {201});
    }
    if (!order)
        return std::unexpected(order.error());
    const QString orderUrl = order->location;
    if (orderUrl.isEmpty())
        return fail(ErrorCode::Failed, u"the CA named no order URL"_s, u"ACME newOrder"_s);
    for (const QJsonValue authorization : order->json.value("authorizations"_L1).toArray())
        if (auto done = authorize(host, authorization.toString(), responder); !done)
            return std::unexpected(done.error());

    auto request = makeCertificateRequest(host);
    if (!request)
        return std::unexpected(request.error());
    auto finalized = post("finalize", order->json.value("finalize"_L1).toString(),
                          QJsonObject{{"csr"_L1, QString::fromLatin1(jose::base64Url(request->csrDer))}}, {200});
    if (!finalized)
        return std::unexpected(finalized.error());
    QJsonObject settled = finalized->json;
    if (settled.value("status"_L1).toString() != u"valid") {
        auto polled = pollUntilSettled("order", orderUrl);
        if (!polled)
            return std::unexpected(polled.error());
        settled = *polled;
    }
    if (settled.value("status"_L1).toString() != u"valid")
        return fail(ErrorCode::Failed,
                    u"the CA did not issue for %1 (order %2): %3"_s.arg(
                        host, settled.value("status"_L1).toString(), problemText(settled.value("error"_L1).toObject())),
                    u"ACME finalize"_s);
    auto chain = post("certificate", settled.value("certificate"_L1).toString(), std::nullopt, {200});
    if (!chain)
        return std::unexpected(chain.error());
    const QList<QSslCertificate> certificates = QSslCertificate::fromData(chain->body, QSsl::Pem);
    if (certificates.isEmpty())
        return fail(ErrorCode::Failed, u"the CA's certificate for %1 is not a PEM chain"_s.arg(host),
                    u"ACME certificate"_s);
    return IssuedCertificate{chain->body, request->keyPem, certificates.first().effectiveDate(),
                             certificates.first().expiryDate()};
}

} // namespace pando::adapters::edgecert
