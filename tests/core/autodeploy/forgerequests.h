#pragma once
// Webhook requests as each forge sends them, signed with Secret the way that forge signs, for
// tst_forgehook (pushes) and tst_forgehookpulls (pull requests): the headers are the same
// whatever the event, so each builder takes the event and the body (a sample from data/). Also the
// clone addresses the samples' repositories read as, where both tests' samples name the same.

#include "core/autodeploy/forgehook.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QFile>
#include <QLatin1StringView>
#include <QMessageAuthenticationCode>
#include <QStringList>
#include <QTest>

namespace pando::test::forgehook {

using core::autodeploy::HookRequest;

inline const QByteArray Secret = "whk_7f2c91-Tide-Lantern-4410";

// A payload from data/, exactly as the file holds it.
inline QByteArray payload(const char *name)
{
    // From the checkout, not QFINDTESTDATA: the build directory Qt would look in is left out of
    // the compiler cache's key (scripts/lib.sh), so it may be another checkout's.
    QFile file(sourceDir() + QStringLiteral("/tests/core/autodeploy/data/") + QLatin1StringView(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("payload(): cannot read data/%s", name);
    return file.readAll();
}

inline QByteArray hmacHex(const QByteArray &body, QCryptographicHash::Algorithm algorithm = QCryptographicHash::Sha256)
{
    return QMessageAuthenticationCode::hash(body, Secret, algorithm).toHex();
}

inline HookRequest github(const QByteArray &event, const QByteArray &body)
{
    return {{{"x-github-event", event},
             {"x-github-delivery", "8fc446d1-2487-55ce-8053-79eced13336b"},
             {"x-github-hook-id", "48211093"},
             {"content-type", "application/json"},
             {"user-agent", "GitHub-Hookshot/5f3a1c2"},
             {"x-hub-signature", "sha1=" + hmacHex(body, QCryptographicHash::Sha1)},
             {"x-hub-signature-256", "sha256=" + hmacHex(body)}},
            body};
}

inline HookRequest gitlab(const QByteArray &event, const QByteArray &body)
{
    return {{{"x-gitlab-event", event},
             {"x-gitlab-event-uuid", "ce153f7a-3550-591e-80f5-799f2594626f"},
             {"x-gitlab-webhook-uuid", "0d7b3a52-91e4-4c8f-b6a0-5f2e1c9d4b87"},
             {"x-gitlab-instance", "https://gitlab.example.org"},
             {"x-gitlab-token", Secret},
             {"content-type", "application/json"}},
            body};
}

// Gitea sends its own headers, Gogs's and GitHub's, with the same values. X-Gitea-Event-Type is
// the event, unless type names a kind of it: "pull_request_sync" (new commits) or
// "pull_request_label" of a "pull_request".
inline HookRequest gitea(const QByteArray &event, const QByteArray &body, const QByteArray &type = {})
{
    const QByteArray delivery = "32e5aa91-1c84-55df-b759-94548eb28d85";
    return {{{"x-gitea-event", event},
             {"x-gitea-event-type", type.isEmpty() ? event : type},
             {"x-gitea-delivery", delivery},
             {"x-gitea-signature", hmacHex(body)},
             {"x-gogs-event", event},
             {"x-gogs-delivery", delivery},
             {"x-gogs-signature", hmacHex(body)},
             {"x-github-event", event},
             {"x-github-delivery", delivery},
             {"x-hub-signature-256", "sha256=" + hmacHex(body)},
             {"content-type", "application/json"}},
            body};
}

inline HookRequest forgejo(const QByteArray &event, const QByteArray &body)
{
    return {{{"x-forgejo-event", event},
             {"x-forgejo-event-type", event},
             {"x-forgejo-delivery", "6cd5154c-4fc3-592f-82a4-95fcb98669b3"},
             {"x-forgejo-signature", hmacHex(body)},
             {"content-type", "application/json"}},
            body};
}

inline HookRequest bitbucketCloud(const QByteArray &event, const QByteArray &body)
{
    return {{{"x-event-key", event},
             {"x-request-uuid", "d2f1a7c4-5e3b-4a9d-8c60-7b1e2f9a3c55"},
             {"x-hook-uuid", "9e4b2c71-0f3a-4d85-b6e2-1a7c5d3f8b09"},
             {"x-attempt-number", "1"},
             {"user-agent", "Bitbucket-Webhooks/2.0"},
             {"x-hub-signature", "sha256=" + hmacHex(body)},
             {"content-type", "application/json"}},
            body};
}

inline HookRequest bitbucketDc(const QByteArray &event, const QByteArray &body)
{
    return {{{"x-event-key", event},
             {"x-request-id", "4b7e2d90-6a1c-4f38-9e25-c3d8a0f1b764"},
             {"x-hub-signature", "sha256=" + hmacHex(body)},
             {"content-type", "application/json; charset=utf-8"}},
            body};
}

// Azure DevOps names no event in a header (the body's eventType does) and signs nothing: the
// hook's basic authentication carries the secret as its password.
inline HookRequest azure(const QByteArray &body, const QByteArray &user = "pando-hook")
{
    return {{{"authorization", "Basic " + QByteArray(user + ':' + Secret).toBase64()},
             {"content-type", "application/json; charset=utf-8"}},
            body};
}

// GitHub's lists differ (a push's repository gives its git:// address too): each test has its own.
inline QStringList glUrls()
{
    return {QStringLiteral("https://gitlab.example.org/payments/billing-worker.git"),
            QStringLiteral("git@gitlab.example.org:payments/billing-worker.git"),
            QStringLiteral("https://gitlab.example.org/payments/billing-worker")};
}

inline QStringList giteaUrls()
{
    return {QStringLiteral("https://git.homelab.example/mira/recipe-box.git"),
            QStringLiteral("ssh://git@git.homelab.example:2222/mira/recipe-box.git"),
            QStringLiteral("https://git.homelab.example/mira/recipe-box")};
}

inline QStringList bbCloudUrls()
{
    return {QStringLiteral("https://bitbucket.org/harbor-tools/tide-tables.git"),
            QStringLiteral("git@bitbucket.org:harbor-tools/tide-tables.git"),
            QStringLiteral("https://bitbucket.org/harbor-tools/tide-tables")};
}

inline QStringList dcUrls()
{
    return {QStringLiteral("ssh://git@code.example.com:7999/ops/route-planner.git"),
            QStringLiteral("https://code.example.com/scm/ops/route-planner.git"),
            QStringLiteral("https://code.example.com/projects/OPS/repos/route-planner/browse")};
}

inline QStringList azureUrls()
{
    return {QStringLiteral("https://contoso-retail@dev.azure.com/contoso-retail/Storefront/_git/orders-service"),
            QStringLiteral("git@ssh.dev.azure.com:v3/contoso-retail/Storefront/orders-service"),
            QStringLiteral("https://dev.azure.com/contoso-retail/Storefront/_git/orders-service")};
}

} // namespace pando::test::forgehook
