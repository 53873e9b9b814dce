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
    QJsonObject json;
    QByteArray requestId;
    QByteArray authenticate;
};

// authorization: the Authorization header's whole value, empty for none. A body without a
// content type is sent as JSON.
inline ApiAnswer callApi(QNetworkAccessManager &network, const QString &baseUrl, const QByteArray &method,
                         const QString &path, const QByteArray &body, const QByteArray &contentType,
                         const QByteArray &authorization)
{
    QNetworkRequest request(QUrl(baseUrl + path));
    if (!authorization.isEmpty())
        request.setRawHeader("Authorization", authorization);
    if (!contentType.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    else if (!body.isEmpty()) // JSON routes take nothing else
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QNetworkReply *reply = network.sendCustomRequest(request, method, body);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished())
        finished.wait(10000);
    ApiAnswer answer;
    answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    answer.json = QJsonDocument::fromJson(reply->readAll()).object();
    answer.requestId = reply->rawHeader("X-Request-Id");
    answer.authenticate = reply->rawHeader("WWW-Authenticate");
    reply->deleteLater();
    return answer;
}

} // namespace pando::test
