// Forge pull (merge) request webhooks read into HookEvent::pullRequest. The payloads (data/*-pr-*.json,
// data/gitlab-mr-*.json) are written for these tests after the fields each forge documents for its
// pull-request event (plausible values, not the documentation's samples), and each request is
// signed the way its forge signs it, by the builders tst_forgehook uses for pushes
// (forgerequests.h). Variants of a payload (a fork, another action, a field missing or wrong) are
// made by editing its JSON in the test.
#include "core/autodeploy/forgehook.h"
#include "tests/core/autodeploy/forgerequests.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core::autodeploy;
using namespace pando::test::forgehook;
using Kind = HookEvent::Kind;
using Action = PullRequestEvent::Action;

namespace {

// What one request should read as.
struct Pull {
    QString eventName;
    Action action = Action::Other;
    QString actionName;
    int number = 0;
    QString headBranch;
    QString headCommit;
    QStringList headRepoUrls;
    QString baseBranch;
    bool fork = false;
    bool merged = false;
    QString title;
    QString webUrl;
    QStringList repoUrls;
    QString pusher;
};

} // namespace

Q_DECLARE_METATYPE(pando::core::autodeploy::Forge)
Q_DECLARE_METATYPE(pando::core::autodeploy::HookRequest)
Q_DECLARE_METATYPE(Pull)

namespace {

QJsonObject setAt(QJsonObject object, QStringList path, const QJsonValue &value)
{
    const QString key = path.takeFirst();
    if (path.isEmpty()) {
        if (value.isUndefined())
            object.remove(key);
        else
            object.insert(key, value);
        return object;
    }
    object.insert(key, setAt(object.value(key).toObject(), path, value));
    return object;
}

// A request whose body has the value at a dotted path set (Undefined: removed). Not signed
// again: parse does not look.
HookRequest patched(HookRequest request, const QString &path, const QJsonValue &value)
{
    const QJsonObject body = QJsonDocument::fromJson(request.body).object();
    if (body.isEmpty())
        qFatal("patched(): the body is not a JSON object");
    request.body = QJsonDocument(setAt(body, path.split(u'.'), value)).toJson(QJsonDocument::Compact);
    return request;
}

HookRequest removed(const HookRequest &request, const QString &path)
{
    return patched(request, path, QJsonValue(QJsonValue::Undefined));
}

const QJsonValue Null = QJsonValue(QJsonValue::Null);

QStringList ghUrls()
{
    return {u"https://github.com/northwind-labs/ledger-api.git"_s, u"git@github.com:northwind-labs/ledger-api.git"_s,
            u"https://github.com/northwind-labs/ledger-api"_s};
}

// The samples' expected readings, which rows below vary.
Pull githubOpened()
{
    return {.eventName = u"pull_request"_s,
            .action = Action::Opened,
            .actionName = u"opened"_s,
            .number = 57,
            .headBranch = u"feature/settlement-retry"_s,
            .headCommit = u"a62e0156978ba1c74a502650603b9aaf14d0f1c5"_s,
            .headRepoUrls = ghUrls(),
            .baseBranch = u"main"_s,
            .title = u"Retry a settlement once when the bank answers 503"_s,
            .webUrl = u"https://github.com/northwind-labs/ledger-api/pull/57"_s,
            .repoUrls = ghUrls(),
            .pusher = u"ivarga"_s};
}

Pull giteaOpened()
{
    return {.eventName = u"pull_request"_s,
            .action = Action::Opened,
            .actionName = u"opened"_s,
            .number = 12,
            .headBranch = u"print-view"_s,
            .headCommit = u"323e874dc81aacb3e18d637de14a4377edcd8b33"_s,
            .headRepoUrls = giteaUrls(),
            .baseBranch = u"main"_s,
            .title = u"Print a recipe on one page"_s,
            .webUrl = u"https://git.homelab.example/mira/recipe-box/pulls/12"_s,
            .repoUrls = giteaUrls(),
            .pusher = u"dario"_s};
}

Pull gitlabOpened()
{
    return {.eventName = u"Merge Request Hook"_s,
            .action = Action::Opened,
            .actionName = u"open"_s,
            .number = 143,
            .headBranch = u"fix/currency-rounding"_s,
            .headCommit = u"c58719f8117dcf3f822d02b049963414ec6e721b"_s,
            .headRepoUrls = glUrls(),
            .baseBranch = u"main"_s,
            .title = u"Draft: Round invoice totals per currency"_s,
            .webUrl = u"https://gitlab.example.org/payments/billing-worker/-/merge_requests/143"_s,
            .repoUrls = glUrls(),
            .pusher = u"tferreira"_s};
}

Pull bitbucketCreated()
{
    return {.eventName = u"pullrequest:created"_s,
            .action = Action::Opened,
            .actionName = u"pullrequest:created"_s,
            .number = 38,
            .headBranch = u"tables/cobh-spring"_s,
            .headCommit = u"2971312a751f"_s,
            .headRepoUrls = bbCloudUrls(),
            .baseBranch = u"main"_s,
            .title = u"Add the spring tide table for Cobh"_s,
            .webUrl = u"https://bitbucket.org/harbor-tools/tide-tables/pull-requests/38"_s,
            .repoUrls = bbCloudUrls(),
            .pusher = u"praman"_s};
}

Pull dcOpened()
{
    return {.eventName = u"pr:opened"_s,
            .action = Action::Opened,
            .actionName = u"pr:opened"_s,
            .number = 214,
            .headBranch = u"feature/ring-road-closure"_s,
            .headCommit = u"4a944eec763ba0262b8639393ca441c474600ef6"_s,
            .headRepoUrls = dcUrls(),
            .baseBranch = u"release/2026.11"_s,
            .title = u"Avoid the ring road while it is closed"_s,
            .webUrl = u"https://code.example.com/projects/OPS/repos/route-planner/pull-requests/214"_s,
            .repoUrls = dcUrls(),
            .pusher = u"jkowalski"_s};
}

Pull azureCreated()
{
    return {.eventName = u"git.pullrequest.created"_s,
            .action = Action::Opened,
            .actionName = u"git.pullrequest.created:active"_s,
            .number = 1187,
            .headBranch = u"feature/tax-jurisdictions"_s,
            .headCommit = u"ad511e0e2fa6d3bf21488ec31df9ff7c2f90a976"_s,
            .headRepoUrls = azureUrls(),
            .baseBranch = u"main"_s,
            .title = u"Split tax lines by jurisdiction"_s,
            .webUrl = u"https://dev.azure.com/contoso-retail/Storefront/_git/orders-service/pullrequest/1187"_s,
            .repoUrls = azureUrls(),
            .pusher = u"ana.lucero@contoso-retail.example"_s};
}

// A row's expectation made from a sample's by a change.
template<class F> Pull with(Pull pull, F change)
{
    change(pull);
    return pull;
}

} // namespace

class TestForgeHookPulls : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Every signed sample: from its headers (Azure DevOps: its body) to its forge, and verified.
    void detectAndVerify_data()
    {
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<Forge>("forge");
        for (const char *name :
             {"github-pr-opened.json", "github-pr-synchronize.json", "github-pr-closed.json", "github-pr-fork.json"})
            QTest::newRow(name) << github("pull_request", payload(name)) << Forge::GitHub;
        for (const char *name : {"gitea-pr-opened.json", "gitea-pr-synchronized.json", "gitea-pr-closed.json"})
            QTest::newRow(name) << gitea("pull_request", payload(name)) << Forge::Gitea;
        QTest::newRow("forgejo") << forgejo("pull_request", payload("gitea-pr-opened.json")) << Forge::Gitea;
        for (const char *name : {"gitlab-mr-opened.json", "gitlab-mr-updated.json", "gitlab-mr-merged.json"})
            QTest::newRow(name) << gitlab("Merge Request Hook", payload(name)) << Forge::GitLab;
        QTest::newRow("bitbucket-cloud-pr-created.json")
            << bitbucketCloud("pullrequest:created", payload("bitbucket-cloud-pr-created.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket-cloud-pr-updated.json")
            << bitbucketCloud("pullrequest:updated", payload("bitbucket-cloud-pr-updated.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket-cloud-pr-fulfilled.json")
            << bitbucketCloud("pullrequest:fulfilled", payload("bitbucket-cloud-pr-fulfilled.json"))
            << Forge::Bitbucket;
        QTest::newRow("bitbucket-dc-pr-opened.json")
            << bitbucketDc("pr:opened", payload("bitbucket-dc-pr-opened.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket-dc-pr-from-ref-updated.json")
            << bitbucketDc("pr:from_ref_updated", payload("bitbucket-dc-pr-from-ref-updated.json")) << Forge::Bitbucket;
        QTest::newRow("bitbucket-dc-pr-merged.json")
            << bitbucketDc("pr:merged", payload("bitbucket-dc-pr-merged.json")) << Forge::Bitbucket;
        for (const char *name : {"azure-pr-created.json", "azure-pr-updated.json", "azure-pr-completed.json"})
            QTest::newRow(name) << azure(payload(name)) << Forge::AzureDevOps;
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

    void parsePull_data()
    {
        QTest::addColumn<Forge>("forge");
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<Pull>("expected");

        const HookRequest ghOpened = github("pull_request", payload("github-pr-opened.json"));
        QTest::newRow("github opened") << Forge::GitHub << ghOpened << githubOpened();
        QTest::newRow("github synchronize")
            << Forge::GitHub << github("pull_request", payload("github-pr-synchronize.json"))
            << with(githubOpened(), [](Pull &p) {
                   p.action = Action::Updated;
                   p.actionName = u"synchronize"_s;
                   p.headCommit = u"0958ed21086c95954599fd24378b7aa84dd73c22"_s;
                   p.pusher = u"tbalogh"_s;
               });
        const Pull ghMerged = with(githubOpened(), [](Pull &p) {
            p.action = Action::Closed;
            p.actionName = u"closed"_s;
            p.headCommit = u"0958ed21086c95954599fd24378b7aa84dd73c22"_s;
            p.merged = true;
        });
        QTest::newRow("github closed, merged")
            << Forge::GitHub << github("pull_request", payload("github-pr-closed.json")) << ghMerged;
        QTest::newRow("github closed, not merged")
            << Forge::GitHub
            << patched(github("pull_request", payload("github-pr-closed.json")), u"pull_request.merged"_s, false)
            << with(ghMerged, [](Pull &p) { p.merged = false; });
        // An Other action keeps what is there; merged counts only for Closed.
        QTest::newRow("github labeled: other")
            << Forge::GitHub << patched(patched(ghOpened, u"action"_s, u"labeled"_s), u"pull_request.merged"_s, true)
            << with(githubOpened(), [](Pull &p) {
                   p.action = Action::Other;
                   p.actionName = u"labeled"_s;
               });
        QTest::newRow("github other with only a number")
            << Forge::GitHub << github("pull_request", R"({"action": "edited", "number": 57})")
            << Pull{.eventName = u"pull_request"_s, .actionName = u"edited"_s, .number = 57};
        const Pull ghFork{.eventName = u"pull_request"_s,
                          .action = Action::Opened,
                          .actionName = u"reopened"_s,
                          .number = 61,
                          .headBranch = u"fix/mt-iban"_s,
                          .headCommit = u"87fb2a102c5f86206ec93a5ea0f9076e23f2f4f4"_s,
                          .headRepoUrls = {u"https://github.com/rzammit/ledger-api.git"_s,
                                           u"git@github.com:rzammit/ledger-api.git"_s,
                                           u"https://github.com/rzammit/ledger-api"_s},
                          .baseBranch = u"release/2026.12"_s,
                          .fork = true,
                          .title = u"Fix the IBAN check for Maltese accounts"_s,
                          .webUrl = u"https://github.com/northwind-labs/ledger-api/pull/61"_s,
                          .repoUrls = ghUrls(),
                          .pusher = u"rzammit"_s};
        QTest::newRow("github fork, reopened, commit in upper case")
            << Forge::GitHub << github("pull_request", payload("github-pr-fork.json")) << ghFork;
        // The fork was deleted: GitHub sends head.repo null; the branch's commit may go with it.
        QTest::newRow("github deleted fork, closed without a head commit")
            << Forge::GitHub
            << removed(
                   patched(patched(github("pull_request", payload("github-pr-fork.json")), u"action"_s, u"closed"_s),
                           u"pull_request.head.repo"_s, Null),
                   u"pull_request.head.sha"_s)
            << with(ghFork, [](Pull &p) {
                   p.action = Action::Closed;
                   p.actionName = u"closed"_s;
                   p.headCommit.clear();
                   p.headRepoUrls.clear();
               });
        QTest::newRow("github same repository, other letter case")
            << Forge::GitHub << patched(ghOpened, u"pull_request.head.repo.full_name"_s, u"Northwind-Labs/Ledger-API"_s)
            << githubOpened();
        QTest::newRow("github title on one line, cut; no javascript link")
            << Forge::GitHub
            << patched(
                   patched(ghOpened, u"pull_request.title"_s, QString(u"Retry\nonce\tper 503  " + QString(300, u'x'))),
                   u"pull_request.html_url"_s, u"javascript:alert(1)"_s)
            << with(githubOpened(), [](Pull &p) {
                   p.title = QString(u"Retry once per 503 " + QString(300, u'x')).left(200);
                   p.webUrl.clear();
               });
        QTest::newRow("github head ref given in full")
            << Forge::GitHub << patched(ghOpened, u"pull_request.head.ref"_s, u"refs/heads/feature/settlement-retry"_s)
            << githubOpened();

        QTest::newRow("gitea opened") << Forge::Gitea << gitea("pull_request", payload("gitea-pr-opened.json"))
                                      << giteaOpened();
        QTest::newRow("gitea synchronized")
            << Forge::Gitea << gitea("pull_request", payload("gitea-pr-synchronized.json"), "pull_request_sync")
            << with(giteaOpened(), [](Pull &p) {
                   p.action = Action::Updated;
                   p.actionName = u"synchronized"_s;
                   p.headCommit = u"cfcf61aeb71f3a2944cfdb257106ff5beeb06f05"_s;
               });
        QTest::newRow("gitea closed, merged") << Forge::Gitea << gitea("pull_request", payload("gitea-pr-closed.json"))
                                              << with(giteaOpened(), [](Pull &p) {
                                                     p.action = Action::Closed;
                                                     p.actionName = u"closed"_s;
                                                     p.headCommit = u"cfcf61aeb71f3a2944cfdb257106ff5beeb06f05"_s;
                                                     p.merged = true;
                                                     p.pusher = u"mira"_s;
                                                 });
        QTest::newRow("gitea label_updated: other")
            << Forge::Gitea
            << patched(gitea("pull_request", payload("gitea-pr-opened.json"), "pull_request_label"), u"action"_s,
                       u"label_updated"_s)
            << with(giteaOpened(), [](Pull &p) {
                   p.action = Action::Other;
                   p.actionName = u"label_updated"_s;
               });
        const QJsonObject darioRepo{{u"id"_s, 23},
                                    {u"full_name"_s, u"dario/recipe-box"_s},
                                    {u"fork"_s, true},
                                    {u"html_url"_s, u"https://git.homelab.example/dario/recipe-box"_s},
                                    {u"ssh_url"_s, u"ssh://git@git.homelab.example:2222/dario/recipe-box.git"_s},
                                    {u"clone_url"_s, u"https://git.homelab.example/dario/recipe-box.git"_s}};
        QTest::newRow("forgejo fork") << Forge::Gitea
                                      << patched(patched(forgejo("pull_request", payload("gitea-pr-opened.json")),
                                                         u"pull_request.head.repo"_s, darioRepo),
                                                 u"pull_request.head.repo_id"_s, 23)
                                      << with(giteaOpened(), [](Pull &p) {
                                             p.fork = true;
                                             p.headRepoUrls = {
                                                 u"https://git.homelab.example/dario/recipe-box.git"_s,
                                                 u"ssh://git@git.homelab.example:2222/dario/recipe-box.git"_s,
                                                 u"https://git.homelab.example/dario/recipe-box"_s};
                                         });

        const HookRequest glOpened = gitlab("Merge Request Hook", payload("gitlab-mr-opened.json"));
        QTest::newRow("gitlab opened") << Forge::GitLab << glOpened << gitlabOpened();
        const Pull glUpdated = with(gitlabOpened(), [](Pull &p) {
            p.action = Action::Updated;
            p.actionName = u"update"_s;
            p.headCommit = u"4655b523abd9c8a0c918f2ea26653587a44fccae"_s;
            p.title = u"Round invoice totals per currency"_s;
        });
        QTest::newRow("gitlab updated with new commits")
            << Forge::GitLab << gitlab("Merge Request Hook", payload("gitlab-mr-updated.json")) << glUpdated;
        QTest::newRow("gitlab updated without new commits: other")
            << Forge::GitLab
            << removed(gitlab("Merge Request Hook", payload("gitlab-mr-updated.json")), u"object_attributes.oldrev"_s)
            << with(glUpdated, [](Pull &p) { p.action = Action::Other; });
        QTest::newRow("gitlab merged") << Forge::GitLab
                                       << gitlab("Merge Request Hook", payload("gitlab-mr-merged.json"))
                                       << with(glUpdated, [](Pull &p) {
                                              p.action = Action::Closed;
                                              p.actionName = u"merge"_s;
                                              p.merged = true;
                                              p.pusher = u"lbrandt"_s;
                                          });
        QTest::newRow("gitlab closed") << Forge::GitLab << patched(glOpened, u"object_attributes.action"_s, u"close"_s)
                                       << with(gitlabOpened(), [](Pull &p) {
                                              p.action = Action::Closed;
                                              p.actionName = u"close"_s;
                                          });
        QTest::newRow("gitlab reopened") << Forge::GitLab
                                         << patched(glOpened, u"object_attributes.action"_s, u"reopen"_s)
                                         << with(gitlabOpened(), [](Pull &p) { p.actionName = u"reopen"_s; });
        QTest::newRow("gitlab approved: other")
            << Forge::GitLab << patched(glOpened, u"object_attributes.action"_s, u"approved"_s)
            << with(gitlabOpened(), [](Pull &p) {
                   p.action = Action::Other;
                   p.actionName = u"approved"_s;
               });
        const QJsonObject glForkSource{
            {u"web_url"_s, u"https://gitlab.example.org/tferreira/billing-worker"_s},
            {u"git_ssh_url"_s, u"git@gitlab.example.org:tferreira/billing-worker.git"_s},
            {u"git_http_url"_s, u"https://gitlab.example.org/tferreira/billing-worker.git"_s},
            {u"path_with_namespace"_s, u"tferreira/billing-worker"_s}};
        QTest::newRow("gitlab fork") << Forge::GitLab
                                     << patched(patched(glOpened, u"object_attributes.source_project_id"_s, 7311),
                                                u"object_attributes.source"_s, glForkSource)
                                     << with(gitlabOpened(), [](Pull &p) {
                                            p.fork = true;
                                            p.headRepoUrls = {
                                                u"https://gitlab.example.org/tferreira/billing-worker.git"_s,
                                                u"git@gitlab.example.org:tferreira/billing-worker.git"_s,
                                                u"https://gitlab.example.org/tferreira/billing-worker"_s};
                                        });

        const QByteArray bbCreatedBody = payload("bitbucket-cloud-pr-created.json");
        QTest::newRow("bitbucket cloud created")
            << Forge::Bitbucket << bitbucketCloud("pullrequest:created", bbCreatedBody) << bitbucketCreated();
        const Pull bbUpdated = with(bitbucketCreated(), [](Pull &p) {
            p.eventName = p.actionName = u"pullrequest:updated"_s;
            p.action = Action::Updated;
            p.headCommit = u"7112e64a3794"_s;
        });
        QTest::newRow("bitbucket cloud updated")
            << Forge::Bitbucket << bitbucketCloud("pullrequest:updated", payload("bitbucket-cloud-pr-updated.json"))
            << bbUpdated;
        QTest::newRow("bitbucket cloud fulfilled")
            << Forge::Bitbucket << bitbucketCloud("pullrequest:fulfilled", payload("bitbucket-cloud-pr-fulfilled.json"))
            << with(bbUpdated, [](Pull &p) {
                   p.eventName = p.actionName = u"pullrequest:fulfilled"_s;
                   p.action = Action::Closed;
                   p.merged = true;
                   p.pusher = u"ofitz"_s;
               });
        QTest::newRow("bitbucket cloud rejected")
            << Forge::Bitbucket << bitbucketCloud("pullrequest:rejected", payload("bitbucket-cloud-pr-updated.json"))
            << with(bbUpdated, [](Pull &p) {
                   p.eventName = p.actionName = u"pullrequest:rejected"_s;
                   p.action = Action::Closed;
               });
        QTest::newRow("bitbucket cloud approved: other")
            << Forge::Bitbucket << bitbucketCloud("pullrequest:approved", bbCreatedBody)
            << with(bitbucketCreated(), [](Pull &p) {
                   p.eventName = p.actionName = u"pullrequest:approved"_s;
                   p.action = Action::Other;
               });
        const QJsonObject bbForkRepo{
            {u"full_name"_s, u"praman/tide-tables"_s},
            {u"uuid"_s, u"{7e1f0c2d-4b6a-4e89-9d3c-a5b8f2e1c047}"_s},
            {u"links"_s,
             QJsonObject{{u"html"_s, QJsonObject{{u"href"_s, u"https://bitbucket.org/praman/tide-tables"_s}}}}}};
        QTest::newRow("bitbucket cloud fork")
            << Forge::Bitbucket
            << patched(bitbucketCloud("pullrequest:created", bbCreatedBody), u"pullrequest.source.repository"_s,
                       bbForkRepo)
            << with(bitbucketCreated(), [](Pull &p) {
                   p.fork = true;
                   p.headRepoUrls = {u"https://bitbucket.org/praman/tide-tables.git"_s,
                                     u"git@bitbucket.org:praman/tide-tables.git"_s,
                                     u"https://bitbucket.org/praman/tide-tables"_s};
               });

        const QByteArray dcOpenedBody = payload("bitbucket-dc-pr-opened.json");
        QTest::newRow("bitbucket dc opened")
            << Forge::Bitbucket << bitbucketDc("pr:opened", dcOpenedBody) << dcOpened();
        const Pull dcUpdated = with(dcOpened(), [](Pull &p) {
            p.eventName = p.actionName = u"pr:from_ref_updated"_s;
            p.action = Action::Updated;
            p.headCommit = u"e9ae8e15cbc0c223f95f81d4e8bcd653fde0bf0e"_s;
        });
        QTest::newRow("bitbucket dc from_ref_updated")
            << Forge::Bitbucket << bitbucketDc("pr:from_ref_updated", payload("bitbucket-dc-pr-from-ref-updated.json"))
            << dcUpdated;
        QTest::newRow("bitbucket dc merged")
            << Forge::Bitbucket << bitbucketDc("pr:merged", payload("bitbucket-dc-pr-merged.json"))
            << with(dcUpdated, [](Pull &p) {
                   p.eventName = p.actionName = u"pr:merged"_s;
                   p.action = Action::Closed;
                   p.merged = true;
                   p.pusher = u"anowak"_s;
               });
        QTest::newRow("bitbucket dc declined")
            << Forge::Bitbucket << bitbucketDc("pr:declined", dcOpenedBody) << with(dcOpened(), [](Pull &p) {
                   p.eventName = p.actionName = u"pr:declined"_s;
                   p.action = Action::Closed;
               });
        QTest::newRow("bitbucket dc deleted, its branch gone")
            << Forge::Bitbucket
            << removed(bitbucketDc("pr:deleted", dcOpenedBody), u"pullRequest.fromRef.latestCommit"_s)
            << with(dcOpened(), [](Pull &p) {
                   p.eventName = p.actionName = u"pr:deleted"_s;
                   p.action = Action::Closed;
                   p.headCommit.clear();
               });
        QTest::newRow("bitbucket dc reviewer approved: other")
            << Forge::Bitbucket << bitbucketDc("pr:reviewer:approved", dcOpenedBody) << with(dcOpened(), [](Pull &p) {
                   p.eventName = p.actionName = u"pr:reviewer:approved"_s;
                   p.action = Action::Other;
               });
        const QJsonObject dcForkRepo{
            {u"slug"_s, u"route-planner"_s},
            {u"id"_s, 97},
            {u"project"_s, QJsonObject{{u"key"_s, u"~JKOWALSKI"_s}}},
            {u"links"_s,
             QJsonObject{{u"clone"_s, QJsonArray{QJsonObject{{u"href"_s, u"https://code.example.com/scm/~jkowalski/"
                                                                         u"route-planner.git"_s}}}}}}};
        QTest::newRow("bitbucket dc fork")
            << Forge::Bitbucket
            << patched(bitbucketDc("pr:opened", dcOpenedBody), u"pullRequest.fromRef.repository"_s, dcForkRepo)
            << with(dcOpened(), [](Pull &p) {
                   p.fork = true;
                   p.headRepoUrls = {u"https://code.example.com/scm/~jkowalski/route-planner.git"_s};
               });

        const HookRequest azCreated = azure(payload("azure-pr-created.json"));
        QTest::newRow("azure created") << Forge::AzureDevOps << azCreated << azureCreated();
        const Pull azUpdated = with(azureCreated(), [](Pull &p) {
            p.eventName = u"git.pullrequest.updated"_s;
            p.action = Action::Updated;
            p.actionName = u"git.pullrequest.updated:active"_s;
            p.headCommit = u"6f3b8a2c1d9e4f5a7b0c2d4e6f8a1b3c5d7e9f02"_s;
        });
        QTest::newRow("azure updated") << Forge::AzureDevOps << azure(payload("azure-pr-updated.json")) << azUpdated;
        QTest::newRow("azure completed") << Forge::AzureDevOps << azure(payload("azure-pr-completed.json"))
                                         << with(azUpdated, [](Pull &p) {
                                                p.action = Action::Closed;
                                                p.actionName = u"git.pullrequest.updated:completed"_s;
                                                p.merged = true;
                                                p.pusher = u"ravi.menon@contoso-retail.example"_s;
                                            });
        QTest::newRow("azure abandoned") << Forge::AzureDevOps
                                         << patched(azure(payload("azure-pr-updated.json")), u"resource.status"_s,
                                                    u"abandoned"_s)
                                         << with(azUpdated, [](Pull &p) {
                                                p.action = Action::Closed;
                                                p.actionName = u"git.pullrequest.updated:abandoned"_s;
                                            });
        QTest::newRow("azure merge attempted: other")
            << Forge::AzureDevOps
            << patched(azure(payload("azure-pr-completed.json")), u"eventType"_s, u"git.pullrequest.merged"_s)
            << with(azUpdated, [](Pull &p) {
                   p.eventName = u"git.pullrequest.merged"_s;
                   p.action = Action::Other;
                   p.actionName = u"git.pullrequest.merged:completed"_s;
                   p.pusher = u"ana.lucero@contoso-retail.example"_s;
               });
        const QJsonObject azForkSource{
            {u"name"_s, u"refs/heads/feature/tax-jurisdictions"_s},
            {u"repository"_s,
             QJsonObject{{u"name"_s, u"orders-service"_s},
                         {u"remoteUrl"_s, u"https://dev.azure.com/contoso-retail/Partners/_git/orders-service"_s},
                         {u"webUrl"_s, u"https://dev.azure.com/contoso-retail/Partners/_git/orders-service"_s}}}};
        QTest::newRow("azure fork") << Forge::AzureDevOps << patched(azCreated, u"resource.forkSource"_s, azForkSource)
                                    << with(azureCreated(), [](Pull &p) {
                                           p.fork = true;
                                           p.headRepoUrls = {
                                               u"https://dev.azure.com/contoso-retail/Partners/_git/orders-service"_s};
                                       });
    }

    void parsePull()
    {
        QFETCH(Forge, forge);
        QFETCH(HookRequest, request);
        QFETCH(Pull, expected);
        auto event = parse(forge, request);
        QVERIFY2(event, qPrintable(event ? QString() : event.error().text()));
        QCOMPARE(event->forge, forge);
        QCOMPARE(event->kind, Kind::PullRequest);
        QCOMPARE(event->eventName, expected.eventName);
        QVERIFY(!event->deliveryId.isEmpty());
        QCOMPARE(event->ref, QString());
        QCOMPARE(event->commit, QString());
        QCOMPARE(event->deleted, false);
        QCOMPARE(event->repoUrls, expected.repoUrls);
        QCOMPARE(event->pusher, expected.pusher);
        const PullRequestEvent &pull = event->pullRequest;
        QCOMPARE(pull.action, expected.action);
        QCOMPARE(pull.actionName, expected.actionName);
        QCOMPARE(pull.number, expected.number);
        QCOMPARE(pull.headBranch, expected.headBranch);
        QCOMPARE(pull.headCommit, expected.headCommit);
        QCOMPARE(pull.headRepoUrls, expected.headRepoUrls);
        QCOMPARE(pull.baseBranch, expected.baseBranch);
        QCOMPARE(pull.fork, expected.fork);
        QCOMPARE(pull.merged, expected.merged);
        QCOMPARE(pull.title, expected.title);
        QCOMPARE(pull.webUrl, expected.webUrl);
    }

    void parsePullRefuses_data()
    {
        QTest::addColumn<Forge>("forge");
        QTest::addColumn<HookRequest>("request");
        QTest::addColumn<QString>("where");
        const auto row = [](const char *name, Forge forge, const HookRequest &request, const QString &where) {
            QTest::newRow(name) << forge << request << where;
        };

        const HookRequest gh = github("pull_request", payload("github-pr-opened.json"));
        const HookRequest ghSync = github("pull_request", payload("github-pr-synchronize.json"));
        row("github no head commit", Forge::GitHub, removed(gh, u"pull_request.head.sha"_s),
            u"body.pull_request.head.sha"_s);
        row("github updated without a head commit", Forge::GitHub, patched(ghSync, u"pull_request.head.sha"_s, Null),
            u"body.pull_request.head.sha"_s);
        row("github head commit all zeros", Forge::GitHub, patched(gh, u"pull_request.head.sha"_s, QString(40, u'0')),
            u"body.pull_request.head.sha"_s);
        row("github head commit not hex", Forge::GitHub,
            patched(gh, u"pull_request.head.sha"_s, u"a62e0156978ba1c74a502650603b9aaf14d0f1zz"_s),
            u"body.pull_request.head.sha"_s);
        row("github head commit short", Forge::GitHub, patched(gh, u"pull_request.head.sha"_s, u"a62e015"_s),
            u"body.pull_request.head.sha"_s);
        row("github head commit a number", Forge::GitHub, patched(gh, u"pull_request.head.sha"_s, 42),
            u"body.pull_request.head.sha"_s);
        row("github closed, head commit not hex", Forge::GitHub,
            patched(github("pull_request", payload("github-pr-closed.json")), u"pull_request.head.sha"_s, u"HEAD"_s),
            u"body.pull_request.head.sha"_s);
        row("github number 0", Forge::GitHub, patched(gh, u"number"_s, 0), u"body.number"_s);
        row("github number negative", Forge::GitHub, patched(gh, u"number"_s, -57), u"body.number"_s);
        row("github number a string", Forge::GitHub, patched(gh, u"number"_s, u"57"_s), u"body.number"_s);
        row("github number a fraction", Forge::GitHub, patched(gh, u"number"_s, 57.5), u"body.number"_s);
        row("github number too large", Forge::GitHub, patched(gh, u"number"_s, 2147483648.0), u"body.number"_s);
        row("github other without a number", Forge::GitHub, github("pull_request", R"({"action": "edited"})"),
            u"body.number"_s);
        row("github no head branch", Forge::GitHub, removed(gh, u"pull_request.head.ref"_s),
            u"body.pull_request.head.ref"_s);
        row("github head branch not a string", Forge::GitHub, patched(gh, u"pull_request.head.ref"_s, true),
            u"body.pull_request.head.ref"_s);
        row("github head branch too long", Forge::GitHub, patched(gh, u"pull_request.head.ref"_s, QString(256, u'b')),
            u"body.pull_request.head.ref"_s);
        row("github no base repository address", Forge::GitHub,
            removed(removed(gh, u"pull_request.base.repo"_s), u"repository"_s), u"body.pull_request.base.repo"_s);

        const HookRequest gt = gitea("pull_request", payload("gitea-pr-synchronized.json"), "pull_request_sync");
        row("gitea no head commit", Forge::Gitea, removed(gt, u"pull_request.head.sha"_s),
            u"body.pull_request.head.sha"_s);
        row("gitea number a string", Forge::Gitea, patched(gt, u"number"_s, u"12"_s), u"body.number"_s);

        const HookRequest gl = gitlab("Merge Request Hook", payload("gitlab-mr-updated.json"));
        row("gitlab no last commit", Forge::GitLab, removed(gl, u"object_attributes.last_commit"_s),
            u"body.object_attributes.last_commit.id"_s);
        row("gitlab last commit not hex", Forge::GitLab, patched(gl, u"object_attributes.last_commit.id"_s, u"main"_s),
            u"body.object_attributes.last_commit.id"_s);
        row("gitlab iid 0", Forge::GitLab, patched(gl, u"object_attributes.iid"_s, 0), u"body.object_attributes.iid"_s);
        row("gitlab iid negative", Forge::GitLab, patched(gl, u"object_attributes.iid"_s, -1),
            u"body.object_attributes.iid"_s);
        row("gitlab iid a string", Forge::GitLab, patched(gl, u"object_attributes.iid"_s, u"143"_s),
            u"body.object_attributes.iid"_s);
        row("gitlab no source branch", Forge::GitLab, removed(gl, u"object_attributes.source_branch"_s),
            u"body.object_attributes.source_branch"_s);
        row("gitlab no target address", Forge::GitLab,
            removed(removed(gl, u"object_attributes.target"_s), u"project"_s), u"body.object_attributes.target"_s);

        const HookRequest bb = bitbucketCloud("pullrequest:updated", payload("bitbucket-cloud-pr-updated.json"));
        row("bitbucket cloud no head commit", Forge::Bitbucket, removed(bb, u"pullrequest.source.commit"_s),
            u"body.pullrequest.source.commit.hash"_s);
        row("bitbucket cloud head commit not hex", Forge::Bitbucket,
            patched(bb, u"pullrequest.source.commit.hash"_s, u"tide-2027"_s), u"body.pullrequest.source.commit.hash"_s);
        row("bitbucket cloud head commit too short", Forge::Bitbucket,
            patched(bb, u"pullrequest.source.commit.hash"_s, u"7112e6"_s), u"body.pullrequest.source.commit.hash"_s);
        row("bitbucket cloud id negative", Forge::Bitbucket, patched(bb, u"pullrequest.id"_s, -38),
            u"body.pullrequest.id"_s);
        row("bitbucket cloud id a string", Forge::Bitbucket, patched(bb, u"pullrequest.id"_s, u"38"_s),
            u"body.pullrequest.id"_s);
        row("bitbucket cloud no destination address", Forge::Bitbucket,
            removed(removed(bb, u"pullrequest.destination.repository"_s), u"repository"_s),
            u"body.pullrequest.destination.repository"_s);

        const HookRequest dc = bitbucketDc("pr:from_ref_updated", payload("bitbucket-dc-pr-from-ref-updated.json"));
        row("bitbucket dc no head commit", Forge::Bitbucket, removed(dc, u"pullRequest.fromRef.latestCommit"_s),
            u"body.pullRequest.fromRef.latestCommit"_s);
        row("bitbucket dc head commit abbreviated", Forge::Bitbucket,
            patched(dc, u"pullRequest.fromRef.latestCommit"_s, u"e9ae8e15cbc0"_s),
            u"body.pullRequest.fromRef.latestCommit"_s);
        row("bitbucket dc id 0", Forge::Bitbucket, patched(dc, u"pullRequest.id"_s, 0), u"body.pullRequest.id"_s);
        row("bitbucket dc no head branch", Forge::Bitbucket, removed(dc, u"pullRequest.fromRef"_s),
            u"body.pullRequest.fromRef.displayId"_s);
        row("bitbucket dc no target address", Forge::Bitbucket, removed(dc, u"pullRequest.toRef.repository.links"_s),
            u"body.pullRequest.toRef.repository.links"_s);

        const HookRequest az = azure(payload("azure-pr-updated.json"));
        row("azure no head commit", Forge::AzureDevOps, removed(az, u"resource.lastMergeSourceCommit"_s),
            u"body.resource.lastMergeSourceCommit.commitId"_s);
        row("azure head commit not hex", Forge::AzureDevOps,
            patched(az, u"resource.lastMergeSourceCommit.commitId"_s, u"HEAD"_s),
            u"body.resource.lastMergeSourceCommit.commitId"_s);
        row("azure id 0", Forge::AzureDevOps, patched(az, u"resource.pullRequestId"_s, 0),
            u"body.resource.pullRequestId"_s);
        row("azure id a string", Forge::AzureDevOps, patched(az, u"resource.pullRequestId"_s, u"1187"_s),
            u"body.resource.pullRequestId"_s);
        row("azure no source branch", Forge::AzureDevOps, removed(az, u"resource.sourceRefName"_s),
            u"body.resource.sourceRefName"_s);
        row("azure no repository", Forge::AzureDevOps, removed(az, u"resource.repository"_s),
            u"body.resource.repository"_s);
    }

    void parsePullRefuses()
    {
        QFETCH(Forge, forge);
        QFETCH(HookRequest, request);
        QFETCH(QString, where);
        auto event = parse(forge, request);
        QVERIFY2(!event, "parsed");
        QCOMPARE(event.error().code, ErrorCode::Invalid);
        QCOMPARE(event.error().where, where);
        QVERIFY(!event.error().message.isEmpty());
        const QString said = event.error().message + event.error().hint;
        QVERIFY(!said.contains(QString::fromLatin1(Secret)));
    }
};

QTEST_GUILESS_MAIN(TestForgeHookPulls)
#include "tst_forgehookpulls.moc"
