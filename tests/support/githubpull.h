#pragma once
// A pull_request delivery as GitHub sends it (its documented headers and the payload fields Pando
// reads), signed with the webhook's secret in X-Hub-Signature-256: what the preview tests send to
// an app's webhook, through the engine or over HTTP.

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QMessageAuthenticationCode>
#include <QString>
#include <QUuid>
#include <utility>

namespace pando::test {

struct GitHubPull {
    QString action = QStringLiteral("opened"); // opened, synchronize, closed, labeled, ...
    int number = 7;
    QString head = QStringLiteral("feature-x");
    QString sha = QString(40, QLatin1Char('a'));
    QString base = QStringLiteral("main");
    QString headRepo; // clone address, ending in .git
    QString baseRepo;
    bool merged = false;
    QString title = QStringLiteral("Add the search page");
};

struct GitHubDelivery {
    QByteArray body;
    QList<std::pair<QByteArray, QByteArray>> headers; // names as GitHub writes them
};

inline GitHubDelivery githubPullDelivery(const QByteArray &secret, const GitHubPull &pull,
                                         const QString &id = QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    const auto repository = [](const QString &url) {
        QString name = url.section(QLatin1Char('/'), -2);
        if (name.endsWith(QLatin1String(".git")))
            name.chop(4);
        return QJsonObject{{QStringLiteral("full_name"), name},
                           {QStringLiteral("clone_url"), url},
                           {QStringLiteral("ssh_url"), QStringLiteral("git@github.com:%1.git").arg(name)},
                           {QStringLiteral("html_url"), QString(QStringLiteral("https://github.com/") + name)}};
    };
    const QString baseRepo = pull.baseRepo;
    const QString headRepo = pull.headRepo.isEmpty() ? baseRepo : pull.headRepo;
    const QJsonObject body{
        {QStringLiteral("action"), pull.action},
        {QStringLiteral("number"), pull.number},
        {QStringLiteral("pull_request"),
         QJsonObject{
             {QStringLiteral("number"), pull.number},
             {QStringLiteral("title"), pull.title},
             {QStringLiteral("html_url"), QStringLiteral("https://github.com/acme/web/pull/%1").arg(pull.number)},
             {QStringLiteral("merged"), pull.merged},
             {QStringLiteral("head"), QJsonObject{{QStringLiteral("ref"), pull.head},
                                                  {QStringLiteral("sha"), pull.sha},
                                                  {QStringLiteral("repo"), repository(headRepo)}}},
             {QStringLiteral("base"), QJsonObject{{QStringLiteral("ref"), pull.base},
                                                  {QStringLiteral("sha"), QString(40, QLatin1Char('1'))},
                                                  {QStringLiteral("repo"), repository(baseRepo)}}}}},
        {QStringLiteral("repository"), repository(baseRepo)},
        {QStringLiteral("sender"), QJsonObject{{QStringLiteral("login"), QStringLiteral("octo-dev")}}},
    };
    GitHubDelivery delivery;
    delivery.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    delivery.headers = {
        {"Content-Type", "application/json"},
        {"X-GitHub-Event", "pull_request"},
        {"X-GitHub-Delivery", id.toUtf8()},
        {"X-Hub-Signature-256",
         "sha256=" + QMessageAuthenticationCode::hash(delivery.body, secret, QCryptographicHash::Sha256).toHex()}};
    return delivery;
}

} // namespace pando::test
