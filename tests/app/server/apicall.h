#pragma once
// One HTTP request to a test install's API and its answer, waited for up to 10 s: for the API
// tests that drive the server the way a client other than pando does.

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QString>

namespace pando::test {

struct ApiAnswer {
    int status = 0;
    QJsonObject json; // the body as a JSON object (empty when it is not one)
    QByteArray body;
    QByteArray requestId;
    QByteArray authenticate;
    QByteArray contentType;
    QByteArray disposition; // Content-Disposition
};

struct ApiCallOptions {
    int timeoutMs = 10000;
    bool followRedirects = true; // false: what the route answers, not where it sends a browser
};

// authorization: the Authorization header's whole value, empty for none. A body without a
// content type is sent as JSON.
inline ApiAnswer callApi(QNetworkAccessManager &network, const QString &baseUrl, const QByteArray &method,
                         const QString &path, const QByteArray &body, const QByteArray &contentType,
                         const QByteArray &authorization, const ApiCallOptions &options = {})
{
    QNetworkRequest request(QUrl(baseUrl + path));
    if (!options.followRedirects)
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    if (!authorization.isEmpty())
        request.setRawHeader("Authorization", authorization);
    if (!contentType.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    else if (!body.isEmpty()) // JSON routes take nothing else
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QNetworkReply *reply = network.sendCustomRequest(request, method, body);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished())
        finished.wait(options.timeoutMs);
    ApiAnswer answer;
    answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    answer.body = reply->readAll();
    answer.json = QJsonDocument::fromJson(answer.body).object();
    answer.requestId = reply->rawHeader("X-Request-Id");
    answer.authenticate = reply->rawHeader("WWW-Authenticate");
    answer.contentType = reply->rawHeader("Content-Type");
    answer.disposition = reply->rawHeader("Content-Disposition");
    reply->deleteLater();
    return answer;
}

} // namespace pando::test
