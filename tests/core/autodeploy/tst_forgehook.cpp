// Forge push webhooks: which forge sent a request, its signature checked the forge's way, and its
// payload read into a HookEvent. The payloads (data/*.json) are written for these tests after the
// fields each forge documents for its push event (plausible values, not the documentation's
// samples), and each request is signed the way its forge signs it (forgerequests.h). Of note
// among them: github-tag.json is an annotated tag, whose "after" is the tag object and not its
// commit, and the *-delete.json ones delete a branch (an all-zero new head; Bitbucket Cloud: "new"
// is null).
#include "core/autodeploy/forgehook.h"
#include "tests/core/autodeploy/forgerequests.h"

#include <QCryptographicHash>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core::autodeploy;
using namespace pando::test::forgehook;
using Kind = HookEvent::Kind;

Q_DECLARE_METATYPE(pando::core::autodeploy::Forge)
Q_DECLARE_METATYPE(pando::core::autodeploy::HookRequest)
Q_DECLARE_METATYPE(pando::core::autodeploy::HookEvent::Kind)
Q_DECLARE_METATYPE(pando::ErrorCode)

namespace {

const QByteArray BitbucketDcPing = R"({"test": true})";

// GitHub's form body: the JSON percent-encoded in one "payload" field, spaces as '+'.
HookRequest githubForm()
{
    const QByteArray json = payload("github-push.json").replace('\n', ' ');
    const QByteArray body = "payload=" + json.toPercentEncoding().replace("%20", "+");
    HookRequest request = github("push", body);
    request.headers["content-type"] = "application/x-www-form-urlencoded";
    return request;
}

// A sample with one part of its body replaced (not signed again: parse does not look).
HookRequest edited(HookRequest request, const QByteArray &from, const QByteArray &to)
{
    if (!request.body.contains(from))
        qFatal("edited(): the body has no %s", from.constData());
    request.body.replace(from, to);
    return request;
}

HookRequest without(HookRequest request, std::initializer_list<QByteArray> names)
{
    for (const QByteArray &name : names)
        request.headers.remove(name);
    return request;
}

HookRequest withHeader(HookRequest request, const QByteArray &name, const QByteArray &value)
{
    request.headers[name] = value;
    return request;
}

QStringList ghUrls()
{
    return {u"https://github.com/northwind-labs/ledger-api.git"_s, u"git@github.com:northwind-labs/ledger-api.git"_s,
            u"https://github.com/northwind-labs/ledger-api"_s, u"git://github.com/northwind-labs/ledger-api.git"_s};
}

} // namespace

class TestForgeHook : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void names()
    {
        QCOMPARE(forgeName(Forge::GitHub), u"github"_s);
        QCOMPARE(forgeName(Forge::GitLab), u"gitlab"_s);
        QCOMPARE(forgeName(Forge::Gitea), u"gitea"_s);
        QCOMPARE(forgeName(Forge::Bitbucket), u"bitbucket"_s);
        QCOMPARE(forgeName(Forge::AzureDevOps), u"azure-devops"_s);
    }

    // Each signed sample: from its headers (Azure DevOps: its body) to its forge, and verified.
    void detectAndVerify_data()
    {
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<Forge>("forge");
        QTest::newRow("github push") << github("push", payload("github-push.json")) << Forge::GitHub;
        QTest::newRow("github ping") << github("ping", payload("github-ping.json")) << Forge::GitHub;
        QTest::newRow("github form") << githubForm() << Forge::GitHub;
        QTest::newRow("github, hex upper-case")
            << withHeader(github("push", payload("github-push.json")), "x-hub-signature-256",
                          "sha256=" + hmacHex(payload("github-push.json")).toUpper())
            << Forge::GitHub;
        QTest::newRow("gitlab push") << gitlab("Push Hook", payload("gitlab-push.json")) << Forge::GitLab;
        QTest::newRow("gitlab tag") << gitlab("Tag Push Hook", payload("gitlab-tag-push.json")) << Forge::GitLab;
        // Gitea sends X-GitHub-Event too: its own headers decide.
        QTest::newRow("gitea push") << gitea("push", payload("gitea-push.json")) << Forge::Gitea;
        QTest::newRow("gitea, only the GitHub-style signature")
            << without(gitea("push", payload("gitea-push.json")), {"x-gitea-signature", "x-gogs-signature"})
            << Forge::Gitea;
        QTest::newRow("forgejo push") << forgejo("push", payload("gitea-push.json")) << Forge::Gitea;
        QTest::newRow("gogs push") << without(gitea("push", payload("gitea-push.json")),
                                              {"x-gitea-event", "x-gitea-signature"})
                                   << Forge::Gitea;
        QTest::newRow("bitbucket cloud push")
            << bitbucketCloud("repo:push", payload("bitbucket-cloud-push.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket dc push")
            << bitbucketDc("repo:refs_changed", payload("bitbucket-dc-refs-changed.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket dc ping") << bitbucketDc("diagnostics:ping", BitbucketDcPing) << Forge::Bitbucket;
        QTest::newRow("azure push") << azure(payload("azure-git-push.json")) << Forge::AzureDevOps;
        QTest::newRow("azure, another user name")
            << azure(payload("azure-git-push.json"), "svc-hooks") << Forge::AzureDevOps;
    }

    void detectAndVerify()
    {
        QFETCH(HookRequest, request);
        QFETCH(Forge, forge);
        auto detected = detectForge(request);
        QVERIFY2(detected, qPrintable(detected ? QString() : detected.error().text()));
        QCOMPARE(*detected, forge);
        auto verified = verify(forge, request, Secret);
        QVERIFY2(verified, qPrintable(verified ? QString() : verified.error().text()));
    }

    void detectNone_data()
    {
        QTest::addColumn<HookRequest>("request");
        QTest::newRow("no headers, no body") << HookRequest{};
        QTest::newRow("a JSON body from elsewhere")
            << HookRequest{{{"content-type", "application/json"}}, R"({"eventType": "git.push", "publisherId": "x"})"};
        QTest::newRow("tfs without an event type") << HookRequest{{}, R"({"publisherId": "tfs"})"};
    }

    void detectNone()
    {
        QFETCH(HookRequest, request);
        auto detected = detectForge(request);
        QVERIFY(!detected);
        QCOMPARE(detected.error().code, ErrorCode::Invalid);
        QCOMPARE(detected.error().where, u"headers"_s);
        for (const char *header : {"X-GitHub-Event", "X-Gitlab-Event", "X-Gitea-Event", "X-Event-Key", "tfs"})
            QVERIFY2(detected.error().message.contains(QLatin1StringView(header)), header);
    }

    void verifyRefuses_data()
    {
        QTest::addColumn<Forge>("forge");
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<QByteArray>("secret");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("header"); // named in the message

        const auto tampered = [](HookRequest request) {
            request.body[request.body.size() / 2] = char(request.body[request.body.size() / 2] ^ 1);
            return request;
        };
        const QByteArray wrong = "whk_7f2c91-Tide-Lantern-4411";
        const HookRequest gh = github("push", payload("github-push.json"));
        QTest::newRow("github wrong secret")
            << Forge::GitHub << gh << wrong << u"headers.x-hub-signature-256"_s << u"X-Hub-Signature-256"_s;
        QTest::newRow("github tampered body")
            << Forge::GitHub << tampered(gh) << Secret << u"headers.x-hub-signature-256"_s << u"X-Hub-Signature-256"_s;
        QTest::newRow("github no signature") << Forge::GitHub << without(gh, {"x-hub-signature-256", "x-hub-signature"})
                                             << Secret << u"headers.x-hub-signature-256"_s << u"X-Hub-Signature-256"_s;
        QTest::newRow("github sha1 only") << Forge::GitHub << without(gh, {"x-hub-signature-256"}) << Secret
                                          << u"headers.x-hub-signature-256"_s << u"SHA-1 X-Hub-Signature"_s;
        QTest::newRow("github not hex") << Forge::GitHub
                                        << withHeader(gh, "x-hub-signature-256", "sha256=" + QByteArray(64, 'g'))
                                        << Secret << u"headers.x-hub-signature-256"_s << u"X-Hub-Signature-256"_s;
        QTest::newRow("github bare hex") << Forge::GitHub
                                         << withHeader(gh, "x-hub-signature-256", hmacHex(payload("github-push.json")))
                                         << Secret << u"headers.x-hub-signature-256"_s << u"X-Hub-Signature-256"_s;
        QTest::newRow("github empty secret") << Forge::GitHub << gh << QByteArray() << u"secret"_s << u"secret"_s;

        const HookRequest gl = gitlab("Push Hook", payload("gitlab-push.json"));
        QTest::newRow("gitlab wrong token")
            << Forge::GitLab << gl << wrong << u"headers.x-gitlab-token"_s << u"X-Gitlab-Token"_s;
        QTest::newRow("gitlab token a prefix of the secret")
            << Forge::GitLab << withHeader(gl, "x-gitlab-token", Secret.first(10)) << Secret
            << u"headers.x-gitlab-token"_s << u"X-Gitlab-Token"_s;
        QTest::newRow("gitlab no token") << Forge::GitLab << without(gl, {"x-gitlab-token"}) << Secret
                                         << u"headers.x-gitlab-token"_s << u"X-Gitlab-Token"_s;
        QTest::newRow("gitlab empty secret")
            << Forge::GitLab << withHeader(gl, "x-gitlab-token", {}) << QByteArray() << u"secret"_s << u"secret"_s;

        const HookRequest gt = gitea("push", payload("gitea-push.json"));
        QTest::newRow("gitea wrong secret")
            << Forge::Gitea << gt << wrong << u"headers.x-gitea-signature"_s << u"X-Gitea-Signature"_s;
        QTest::newRow("gitea tampered body")
            << Forge::Gitea << tampered(gt) << Secret << u"headers.x-gitea-signature"_s << u"X-Gitea-Signature"_s;
        QTest::newRow("gitea no signature")
            << Forge::Gitea << without(gt, {"x-gitea-signature", "x-gogs-signature", "x-hub-signature-256"}) << Secret
            << u"headers.x-gitea-signature"_s << u"X-Gitea-Signature, X-Forgejo-Signature, X-Gogs-Signature"_s;
        QTest::newRow("forgejo tampered body")
            << Forge::Gitea << tampered(forgejo("push", payload("gitea-push.json"))) << Secret
            << u"headers.x-forgejo-signature"_s << u"X-Forgejo-Signature"_s;

        const HookRequest bb = bitbucketCloud("repo:push", payload("bitbucket-cloud-push.json"));
        QTest::newRow("bitbucket wrong secret")
            << Forge::Bitbucket << bb << wrong << u"headers.x-hub-signature"_s << u"X-Hub-Signature"_s;
        QTest::newRow("bitbucket tampered body")
            << Forge::Bitbucket << tampered(bb) << Secret << u"headers.x-hub-signature"_s << u"X-Hub-Signature"_s;
        QTest::newRow("bitbucket no signature") << Forge::Bitbucket << without(bb, {"x-hub-signature"}) << Secret
                                                << u"headers.x-hub-signature"_s << u"X-Hub-Signature"_s;
        QTest::newRow("bitbucket dc tampered body")
            << Forge::Bitbucket << tampered(bitbucketDc("repo:refs_changed", payload("bitbucket-dc-refs-changed.json")))
            << Secret << u"headers.x-hub-signature"_s << u"X-Hub-Signature"_s;
        QTest::newRow("bitbucket sha1") << Forge::Bitbucket
                                        << withHeader(bb, "x-hub-signature",
                                                      "sha1=" + hmacHex(payload("bitbucket-cloud-push.json"),
                                                                        QCryptographicHash::Sha1))
                                        << Secret << u"headers.x-hub-signature"_s << u"X-Hub-Signature"_s;

        const HookRequest az = azure(payload("azure-git-push.json"));
        QTest::newRow("azure wrong password")
            << Forge::AzureDevOps << az << wrong << u"headers.authorization"_s << u"Authorization"_s;
        QTest::newRow("azure no authorization") << Forge::AzureDevOps << without(az, {"authorization"}) << Secret
                                                << u"headers.authorization"_s << u"Authorization"_s;
        QTest::newRow("azure bearer") << Forge::AzureDevOps << withHeader(az, "authorization", "Bearer " + Secret)
                                      << Secret << u"headers.authorization"_s << u"Authorization"_s;
        QTest::newRow("azure no colon") << Forge::AzureDevOps
                                        << withHeader(az, "authorization", "Basic " + Secret.toBase64()) << Secret
                                        << u"headers.authorization"_s << u"Authorization"_s;
        QTest::newRow("azure empty secret") << Forge::AzureDevOps << azure(payload("azure-git-push.json"), "u")
                                            << QByteArray() << u"secret"_s << u"secret"_s;
    }

    void verifyRefuses()
    {
        QFETCH(Forge, forge);
        QFETCH(HookRequest, request);
        QFETCH(QByteArray, secret);
        QFETCH(QString, where);
        QFETCH(QString, header);
        auto verified = verify(forge, request, secret);
        QVERIFY(!verified);
        QCOMPARE(verified.error().code, ErrorCode::Unauthorized);
        QCOMPARE(verified.error().where, where);
        QVERIFY2(verified.error().message.contains(header), qPrintable(verified.error().message));
        // Neither the secret nor what a right signature would be is ever said.
        const QString said = verified.error().message + verified.error().hint;
        QVERIFY(!said.contains(QString::fromLatin1(Secret)));
        QVERIFY(!said.contains(QString::fromLatin1(hmacHex(request.body))));
    }

    void parseEvent_data()
    {
        QTest::addColumn<Forge>("forge");
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<Kind>("kind");
        QTest::addColumn<QString>("eventName");
        QTest::addColumn<QString>("deliveryId");
        QTest::addColumn<QString>("ref");
        QTest::addColumn<QString>("commit");
        QTest::addColumn<bool>("deleted");
        QTest::addColumn<QStringList>("repoUrls");
        QTest::addColumn<QString>("pusher");

        const QString ghDelivery = u"8fc446d1-2487-55ce-8053-79eced13336b"_s;
        QTest::newRow("github push") << Forge::GitHub << github("push", payload("github-push.json")) << Kind::Push
                                     << u"push"_s << ghDelivery << u"refs/heads/main"_s
                                     << u"45dc3ef40a774c4d66b1953aa7dcbc11d39b6438"_s << false << ghUrls()
                                     << u"ivarga"_s;
        QTest::newRow("github form") << Forge::GitHub << githubForm() << Kind::Push << u"push"_s << ghDelivery
                                     << u"refs/heads/main"_s << u"45dc3ef40a774c4d66b1953aa7dcbc11d39b6438"_s << false
                                     << ghUrls() << u"ivarga"_s;
        QTest::newRow("github tag") << Forge::GitHub << github("push", payload("github-tag.json")) << Kind::Push
                                    << u"push"_s << ghDelivery << u"refs/tags/v2.3.0"_s
                                    << u"bb177f2dd7591194dd6b7697b6f06d63d0a4644b"_s << false << ghUrls().first(3)
                                    << u"release-bot"_s;
        QTest::newRow("github deleted branch")
            << Forge::GitHub << github("push", payload("github-delete.json")) << Kind::Push << u"push"_s << ghDelivery
            << u"refs/heads/feature/old-export"_s << QString() << true << ghUrls().first(1) << u"ivarga"_s;
        QTest::newRow("github commit in upper case")
            << Forge::GitHub
            << edited(github("push", payload("github-push.json")), "45dc3ef40a774c4d66b1953aa7dcbc11d39b6438",
                      "45DC3EF40A774C4D66B1953AA7DCBC11D39B6438")
            << Kind::Push << u"push"_s << ghDelivery << u"refs/heads/main"_s
            << u"45dc3ef40a774c4d66b1953aa7dcbc11d39b6438"_s << false << ghUrls() << u"ivarga"_s;
        QTest::newRow("github ping") << Forge::GitHub << github("ping", payload("github-ping.json")) << Kind::Ping
                                     << u"ping"_s << ghDelivery << QString() << QString() << false << QStringList()
                                     << QString();
        QTest::newRow("github other") << Forge::GitHub << github("issues", R"({"action": "opened"})") << Kind::Other
                                      << u"issues"_s << ghDelivery << QString() << QString() << false << QStringList()
                                      << QString();

        const QString glDelivery = u"ce153f7a-3550-591e-80f5-799f2594626f"_s;
        QTest::newRow("gitlab push") << Forge::GitLab << gitlab("Push Hook", payload("gitlab-push.json")) << Kind::Push
                                     << u"Push Hook"_s << glDelivery << u"refs/heads/main"_s
                                     << u"6ab582ad622abb173e80c2ad6ed93d70d7065608"_s << false << glUrls()
                                     << u"tferreira"_s;
        QTest::newRow("gitlab tag") << Forge::GitLab << gitlab("Tag Push Hook", payload("gitlab-tag-push.json"))
                                    << Kind::Push << u"Tag Push Hook"_s << glDelivery << u"refs/tags/v0.9.1"_s
                                    << u"492901dd5063554552f178ef85d269db681634e7"_s << false << glUrls()
                                    << u"tferreira"_s;
        QTest::newRow("gitlab deleted, Idempotency-Key")
            << Forge::GitLab
            << withHeader(without(gitlab("Push Hook", payload("gitlab-delete.json")), {"x-gitlab-event-uuid"}),
                          "idempotency-key", "72f0c1d8-3b6e-4a95-8d21-e4c7b0a95f13")
            << Kind::Push << u"Push Hook"_s << u"72f0c1d8-3b6e-4a95-8d21-e4c7b0a95f13"_s
            << u"refs/heads/try/partial-refunds"_s << QString() << true << glUrls().first(1) << u"tferreira"_s;
        // Merge requests are read as pull requests (tst_forgehookpulls); a comment is not.
        QTest::newRow("gitlab other") << Forge::GitLab << gitlab("Note Hook", R"({"object_kind": "note"})")
                                      << Kind::Other << u"Note Hook"_s << glDelivery << QString() << QString() << false
                                      << QStringList() << QString();

        QTest::newRow("gitea push") << Forge::Gitea << gitea("push", payload("gitea-push.json")) << Kind::Push
                                    << u"push"_s << u"32e5aa91-1c84-55df-b759-94548eb28d85"_s << u"refs/heads/main"_s
                                    << u"84a4bd3475f8b0e2e92773e63f774f5ec0d59f81"_s << false << giteaUrls()
                                    << u"mira"_s;
        QTest::newRow("forgejo push") << Forge::Gitea << forgejo("push", payload("gitea-push.json")) << Kind::Push
                                      << u"push"_s << u"6cd5154c-4fc3-592f-82a4-95fcb98669b3"_s << u"refs/heads/main"_s
                                      << u"84a4bd3475f8b0e2e92773e63f774f5ec0d59f81"_s << false << giteaUrls()
                                      << u"mira"_s;

        const QString bbDelivery = u"d2f1a7c4-5e3b-4a9d-8c60-7b1e2f9a3c55"_s;
        QTest::newRow("bitbucket cloud push")
            << Forge::Bitbucket << bitbucketCloud("repo:push", payload("bitbucket-cloud-push.json")) << Kind::Push
            << u"repo:push"_s << bbDelivery << u"refs/heads/main"_s << u"921261b854cacaa2fe170abdf43f7abab83b487e"_s
            << false << bbCloudUrls() << u"praman"_s;
        QTest::newRow("bitbucket cloud tag")
            << Forge::Bitbucket
            << bitbucketCloud("repo:push", payload("bitbucket-cloud-push.json")
                                               .replace(R"("new": {"type": "branch", "name": "main")",
                                                        R"("new": {"type": "tag", "name": "2026.11.18")"))
            << Kind::Push << u"repo:push"_s << bbDelivery << u"refs/tags/2026.11.18"_s
            << u"921261b854cacaa2fe170abdf43f7abab83b487e"_s << false << bbCloudUrls() << u"praman"_s;
        QTest::newRow("bitbucket cloud deleted branch")
            << Forge::Bitbucket << bitbucketCloud("repo:push", payload("bitbucket-cloud-delete.json")) << Kind::Push
            << u"repo:push"_s << bbDelivery << u"refs/heads/spike/cache"_s << QString() << true << bbCloudUrls()
            << u"praman"_s;
        QTest::newRow("bitbucket dc push")
            << Forge::Bitbucket << bitbucketDc("repo:refs_changed", payload("bitbucket-dc-refs-changed.json"))
            << Kind::Push << u"repo:refs_changed"_s << u"4b7e2d90-6a1c-4f38-9e25-c3d8a0f1b764"_s
            << u"refs/heads/release/2026.11"_s << u"bc2455d2034e33a28763c316609aed0d75f62d56"_s << false << dcUrls()
            << u"jkowalski"_s;
        QTest::newRow("bitbucket dc deleted branch")
            << Forge::Bitbucket
            << bitbucketDc("repo:refs_changed",
                           payload("bitbucket-dc-refs-changed.json")
                               .replace(R"("bc2455d2034e33a28763c316609aed0d75f62d56", "type": "UPDATE")",
                                        R"("0000000000000000000000000000000000000000", "type": "DELETE")"))
            << Kind::Push << u"repo:refs_changed"_s << u"4b7e2d90-6a1c-4f38-9e25-c3d8a0f1b764"_s
            << u"refs/heads/release/2026.11"_s << QString() << true << dcUrls() << u"jkowalski"_s;
        QTest::newRow("bitbucket dc ping")
            << Forge::Bitbucket << bitbucketDc("diagnostics:ping", BitbucketDcPing) << Kind::Ping
            << u"diagnostics:ping"_s << u"4b7e2d90-6a1c-4f38-9e25-c3d8a0f1b764"_s << QString() << QString() << false
            << QStringList() << QString();

        const QString azureId = u"a6d557a8-96ed-528d-81bc-f6b670011f82"_s;
        QTest::newRow("azure push") << Forge::AzureDevOps << azure(payload("azure-git-push.json")) << Kind::Push
                                    << u"git.push"_s << azureId << u"refs/heads/main"_s
                                    << u"096620787a41de3e5e727ca23d95871ddc483553"_s << false << azureUrls()
                                    << u"ana.lucero@contoso-retail.example"_s;
        QTest::newRow("azure deleted tag")
            << Forge::AzureDevOps
            << edited(edited(azure(payload("azure-git-push.json")), R"("name": "refs/heads/main")",
                             R"("name": "refs/tags/v5.0.0-rc1")"),
                      R"("newObjectId": "096620787a41de3e5e727ca23d95871ddc483553")",
                      R"("newObjectId": "0000000000000000000000000000000000000000")")
            << Kind::Push << u"git.push"_s << azureId << u"refs/tags/v5.0.0-rc1"_s << QString() << true << azureUrls()
            << u"ana.lucero@contoso-retail.example"_s;
        // git.pullrequest.* are read as pull requests (tst_forgehookpulls); a comment on one is not.
        QTest::newRow("azure other") << Forge::AzureDevOps
                                     << edited(azure(payload("azure-git-push.json")), R"("eventType": "git.push")",
                                               R"("eventType": "ms.vss-code.git-pullrequest-comment-event")")
                                     << Kind::Other << u"ms.vss-code.git-pullrequest-comment-event"_s << azureId
                                     << QString() << QString() << false << QStringList() << QString();
    }

    void parseEvent()
    {
        QFETCH(Forge, forge);
        QFETCH(HookRequest, request);
        QFETCH(Kind, kind);
        auto event = parse(forge, request);
        QVERIFY2(event, qPrintable(event ? QString() : event.error().text()));
        QCOMPARE(event->forge, forge);
        QCOMPARE(event->kind, kind);
        QTEST(event->eventName, "eventName");
        QTEST(event->deliveryId, "deliveryId");
        QTEST(event->ref, "ref");
        QTEST(event->commit, "commit");
        QTEST(event->deleted, "deleted");
        QTEST(event->repoUrls, "repoUrls");
        QTEST(event->pusher, "pusher");
    }

    void parseRefuses_data()
    {
        QTest::addColumn<Forge>("forge");
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<ErrorCode>("code");
        QTest::addColumn<QString>("where");

        const HookRequest gh = github("push", payload("github-push.json"));
        const auto row = [](const char *name, Forge forge, const HookRequest &request, const QString &where,
                            ErrorCode code = ErrorCode::Invalid) {
            QTest::newRow(name) << forge << request << code << where;
        };
        row("github not json", Forge::GitHub, github("push", R"({"ref": "refs/heads/main", )"), u"body"_s);
        row("github a json array", Forge::GitHub, github("push", "[]"), u"body"_s);
        row("github form without payload", Forge::GitHub,
            withHeader(github("push", "ref=refs%2Fheads%2Fmain"), "content-type", "application/x-www-form-urlencoded"),
            u"body.payload"_s);
        row("github no ref", Forge::GitHub, edited(gh, R"("ref": "refs/heads/main",)", ""), u"body.ref"_s);
        row("github ref not a ref", Forge::GitHub, edited(gh, R"("ref": "refs/heads/main")", R"("ref": "main")"),
            u"body.ref"_s);
        row("github commit not hex", Forge::GitHub,
            edited(gh, R"("after": "45dc3ef40a774c4d66b1953aa7dcbc11d39b6438")",
                   R"("after": "45dc3ef40a774c4d66b1953aa7dcbc11d39b64zz")"),
            u"body.after"_s);
        row("github commit short", Forge::GitHub,
            edited(gh, R"("after": "45dc3ef40a774c4d66b1953aa7dcbc11d39b6438")", R"("after": "45dc3ef")"),
            u"body.after"_s);
        row("github no repository address", Forge::GitHub,
            github("push", R"({"ref": "refs/heads/main", "after": "45dc3ef40a774c4d66b1953aa7dcbc11d39b6438",
                               "repository": {"name": "ledger-api"}})"),
            u"body.repository"_s);
        row("github no delivery", Forge::GitHub, without(gh, {"x-github-delivery"}), u"headers.x-github-delivery"_s);
        row("github no event", Forge::GitHub, without(gh, {"x-github-event"}), u"headers.x-github-event"_s);

        const HookRequest gl = gitlab("Push Hook", payload("gitlab-push.json"));
        row("gitlab no delivery", Forge::GitLab, without(gl, {"x-gitlab-event-uuid"}),
            u"headers.x-gitlab-event-uuid"_s);
        row("gitlab no ref", Forge::GitLab, edited(gl, R"("ref": "refs/heads/main", )", ""), u"body.ref"_s);
        row("gitlab commit not hex", Forge::GitLab,
            edited(gl, R"("after": "6ab582ad622abb173e80c2ad6ed93d70d7065608")", R"("after": 42)"), u"body.after"_s);

        row("gitea no delivery", Forge::Gitea, without(gitea("push", payload("gitea-push.json")), {"x-gitea-delivery"}),
            u"headers.x-gitea-delivery"_s);
        row("forgejo no delivery", Forge::Gitea,
            without(forgejo("push", payload("gitea-push.json")), {"x-forgejo-delivery"}),
            u"headers.x-forgejo-delivery"_s);
        row("gitea no ref", Forge::Gitea,
            edited(gitea("push", payload("gitea-push.json")), R"("ref": "refs/heads/main",)", ""), u"body.ref"_s);

        const HookRequest bb = bitbucketCloud("repo:push", payload("bitbucket-cloud-push.json"));
        row("bitbucket no changes", Forge::Bitbucket, bitbucketCloud("repo:push", R"({"push": {"changes": []}})"),
            u"body.push.changes"_s);
        row("bitbucket hash not hex", Forge::Bitbucket,
            edited(bb, R"("hash": "921261b854cacaa2fe170abdf43f7abab83b487e",)", R"("hash": "not-a-commit",)"),
            u"body.push.changes[0].new.target.hash"_s);
        row("bitbucket no name", Forge::Bitbucket,
            bitbucketCloud("repo:push", R"({"push": {"changes": [{"old": null, "new": {"type": "branch",
                "target": {"hash": "921261b854cacaa2fe170abdf43f7abab83b487e"}}}]},
                "repository": {"full_name": "harbor-tools/tide-tables"}})"),
            u"body.push.changes[0].new.name"_s);
        row("bitbucket no delivery", Forge::Bitbucket, without(bb, {"x-request-uuid"}), u"headers.x-request-uuid"_s);
        const HookRequest dc = bitbucketDc("repo:refs_changed", payload("bitbucket-dc-refs-changed.json"));
        row("bitbucket dc no ref", Forge::Bitbucket,
            edited(edited(dc, R"("id": "refs/heads/release/2026.11", )", ""),
                   R"("refId": "refs/heads/release/2026.11",)", ""),
            u"body.changes[0].ref.id"_s);
        row("bitbucket dc hash not hex", Forge::Bitbucket,
            edited(dc, R"("toHash": "bc2455d2034e33a28763c316609aed0d75f62d56")", R"("toHash": "bc2455d2")"),
            u"body.changes[0].toHash"_s);
        row("bitbucket dc no delivery", Forge::Bitbucket, without(dc, {"x-request-id"}), u"headers.x-request-id"_s);

        const HookRequest az = azure(payload("azure-git-push.json"));
        row("azure no id", Forge::AzureDevOps, edited(az, R"("id": "a6d557a8-96ed-528d-81bc-f6b670011f82", )", ""),
            u"body.id"_s);
        row("azure no ref updates", Forge::AzureDevOps,
            edited(az, R"("refUpdates": [{"name")", R"("refUpdatez": [{"name")"), u"body.resource.refUpdates"_s);
        row("azure commit not hex", Forge::AzureDevOps,
            edited(az, R"("newObjectId": "096620787a41de3e5e727ca23d95871ddc483553")", R"("newObjectId": "HEAD")"),
            u"body.resource.refUpdates[0].newObjectId"_s);

        HookRequest big = gh;
        big.body = QByteArray(MaxHookPayloadBytes + 1, ' ');
        row("over the cap", Forge::GitHub, big, u"body"_s, ErrorCode::TooLarge);
    }

    void parseRefuses()
    {
        QFETCH(Forge, forge);
        QFETCH(HookRequest, request);
        QFETCH(ErrorCode, code);
        QFETCH(QString, where);
        auto event = parse(forge, request);
        QVERIFY2(!event, "parsed");
        QCOMPARE(event.error().code, code);
        QCOMPARE(event.error().where, where);
        QVERIFY(!event.error().message.isEmpty());
    }

    // The cap is the largest body read, not one byte below it.
    void payloadAtTheCap()
    {
        HookRequest request = github("push", payload("github-push.json"));
        request.body.append(QByteArray(MaxHookPayloadBytes - request.body.size(), ' '));
        auto event = parse(Forge::GitHub, request);
        QVERIFY2(event, qPrintable(event ? QString() : event.error().text()));
        QCOMPARE(event->ref, u"refs/heads/main"_s);
    }
};

QTEST_GUILESS_MAIN(TestForgeHook)
#include "tst_forgehook.moc"
