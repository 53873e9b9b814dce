// The forge REST API adapter against a local stand-in for six forges' APIs
// (forge_api_standin.py), which answers the documented requests with the documented shapes,
// status codes, error bodies and paging, checks each forge's auth header, keeps the statuses,
// hooks (with their events) and pull request comments it is sent, and can be told to refuse (401,
// 403, 404, Azure's 203) or never answer. Every case runs for every forge. No forge on the internet can be reached from
// here: what the real APIs do beyond their references (and the stand-in's reading of them) is not tested.

#include "adapters/api/forge.h"
#include "adapters/forge/rest/forgeclient.h"
#include "adapters/forge/rest/forgerest.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

namespace {

const QByteArray Token = "forge-token-Vq7xK2pLm9";
const QByteArray WrongToken = "forge-token-revoked-Zt4w";
const QString BitbucketUser = u"jdoe"_s;

QString shaOf(const char *text)
{
    return QString::fromLatin1(QCryptographicHash::hash(text, QCryptographicHash::Sha1).toHex());
}

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

// Neither token in anything an error says.
template<class R> bool holdsNoToken(const R &result)
{
    const QString said = result.error().text() + result.error().hint;
    return !said.contains(QString::fromLatin1(Token)) && !said.contains(QString::fromLatin1(WrongToken));
}

// The stand-in, one per test function.
using StandIn = test::ForgeStandIn;

// One forge as a row of the data-driven cases.
struct ForgeRow {
    QString standIn; // the stand-in's name for it, and its API root's path there
    QString apiPath; // "/github", "/azure/acme"
    ForgeKind kind;
    QString baseUrl;  // the connection's address
    QString username; // Bitbucket Cloud's app password user; GitLab "oauth2" for a Bearer token
    QString repoUrl;  // the repository tests work on, as an app names it
    QString repoKey;  // the stand-in's key for it
    QString missingUrl;
    QStringList names;      // the repositories listed, in order
    QString listPath;       // the listing's path, to count its pages
    QStringList secretPath; // where the stand-in keeps a hook's secret
    QString scopeWord;      // what a 403's hint names
    QJsonObject statusBody; // what setCommitStatus sends for the status below
};

const QString Context = u"pando/shop"_s;
const QString Description = QString(150, u'd');
const QString Clipped = QString(140, u'd');
const QString Target = u"https://pando.example/deploys/7"_s;

QList<ForgeRow> forgeRows()
{
    const QStringList acme{u"acme/api"_s, u"acme/web"_s, u"acme/tools"_s};
    const QJsonObject gitHubStatus{
        {"state"_L1, "success"_L1}, {"description"_L1, Clipped}, {"context"_L1, Context}, {"target_url"_L1, Target}};
    const QJsonObject gitLabStatus{
        {"state"_L1, "success"_L1}, {"name"_L1, Context}, {"description"_L1, Clipped}, {"target_url"_L1, Target}};
    const QJsonObject bitbucketStatus{{"key"_L1, Context},
                                      {"name"_L1, Context},
                                      {"state"_L1, "SUCCESSFUL"_L1},
                                      {"description"_L1, Clipped},
                                      {"url"_L1, Target}};
    const QJsonObject azureStatus{{"state"_L1, "succeeded"_L1},
                                  {"description"_L1, Clipped},
                                  {"context"_L1, QJsonObject{{"genre"_L1, "pando"_L1}, {"name"_L1, "shop"_L1}}},
                                  {"targetUrl"_L1, Target}};
    return {
        {u"github"_s,
         u"/github"_s,
         ForgeKind::GitHub,
         u"https://github.com"_s,
         {},
         u"https://github.com/acme/api.git"_s,
         u"acme/api"_s,
         u"https://github.com/acme/nothere"_s,
         acme,
         u"/user/repos"_s,
         {u"config"_s, u"secret"_s},
         u"admin:repo_hook"_s,
         gitHubStatus},
        // A GitLab below a path, and a project in a subgroup: its id is "acme%2Fplatform%2Fapi".
        {u"gitlab"_s,
         u"/gitlab"_s,
         ForgeKind::GitLab,
         u"https://git.example.com/gitlab"_s,
         {},
         u"https://git.example.com/gitlab/acme/platform/api.git"_s,
         u"acme/platform/api"_s,
         u"https://git.example.com/gitlab/acme/nothere"_s,
         {u"acme/platform/api"_s, u"acme/web"_s, u"acme/tools"_s},
         u"/projects"_s,
         {u"token"_s},
         u"Maintainer"_s,
         gitLabStatus},
        {u"gitlab"_s,
         u"/gitlab"_s,
         ForgeKind::GitLab,
         u"https://git.example.com/gitlab"_s,
         u"oauth2"_s,
         u"https://git.example.com/gitlab/acme/platform/api.git"_s,
         u"acme/platform/api"_s,
         u"https://git.example.com/gitlab/acme/nothere"_s,
         {u"acme/platform/api"_s, u"acme/web"_s, u"acme/tools"_s},
         u"/projects"_s,
         {u"token"_s},
         u"Maintainer"_s,
         gitLabStatus},
        // An ssh address names the repository as well as an https one.
        {u"gitea"_s,
         u"/gitea"_s,
         ForgeKind::Gitea,
         u"https://gitea.example"_s,
         {},
         u"git@gitea.example:acme/api.git"_s,
         u"acme/api"_s,
         u"https://gitea.example/acme/nothere"_s,
         acme,
         u"/user/repos"_s,
         {u"config"_s, u"secret"_s},
         u"write:repository"_s,
         gitHubStatus},
        {u"bitbucket"_s,
         u"/bitbucket"_s,
         ForgeKind::Bitbucket,
         u"https://bitbucket.org"_s,
         BitbucketUser,
         u"https://jdoe@bitbucket.org/acme/api.git"_s,
         u"acme/api"_s,
         u"https://bitbucket.org/acme/nothere"_s,
         acme,
         u"/repositories"_s,
         {u"secret"_s},
         u"Webhooks"_s,
         bitbucketStatus},
        {u"bitbucket"_s,
         u"/bitbucket"_s,
         ForgeKind::Bitbucket,
         u"https://bitbucket.org"_s,
         {},
         u"https://bitbucket.org/acme/api"_s,
         u"acme/api"_s,
         u"https://bitbucket.org/acme/nothere"_s,
         acme,
         u"/repositories"_s,
         {u"secret"_s},
         u"Webhooks"_s,
         bitbucketStatus},
        {u"bbdc"_s,
         u"/bbdc"_s,
         ForgeKind::Bitbucket,
         u"https://bitbucket.example"_s,
         {},
         u"https://bitbucket.example/scm/acme/api.git"_s,
         u"ACME/api"_s,
         u"https://bitbucket.example/scm/acme/nothere.git"_s,
         {u"ACME/api"_s, u"ACME/web"_s, u"ACME/tools"_s},
         u"/rest/api/1.0/repos"_s,
         {u"configuration"_s, u"secret"_s},
         u"Repository admin"_s,
         QJsonObject{{"state"_L1, "SUCCESSFUL"_L1},
                     {"key"_L1, Context},
                     {"name"_L1, Context},
                     {"url"_L1, Target},
                     {"description"_L1, Clipped}}},
        {u"azure"_s,
         u"/azure/acme"_s,
         ForgeKind::AzureDevOps,
         u"https://dev.azure.com/acme"_s,
         {},
         u"https://acme@dev.azure.com/acme/shop/_git/api"_s,
         u"shop/api"_s,
         u"https://dev.azure.com/acme/shop/_git/nothere"_s,
         {u"shop/api"_s, u"shop/web"_s, u"shop/tools"_s},
         u"/_apis/git/repositories"_s,
         {u"consumerInputs"_s, u"basicAuthPassword"_s},
         u"Service Hooks"_s,
         azureStatus},
    };
}

// What commentOnPullRequest() sends each forge: the documented path (as the stand-in saw it, below
// its root), the documented body, the forge's limit on a comment and what a refusal's hint names.
struct CommentRequest {
    QString path;
    QJsonObject body;
    qsizetype limit = 0;
    QString scopeWord;
};

CommentRequest commentRequest(const ForgeRow &row, int number, const QString &text)
{
    const QString n = QString::number(number);
    if (row.standIn == u"github"_s)
        return {
            u"/github/repos/acme/api/issues/"_s + n + u"/comments"_s, {{"body"_L1, text}}, 65536, u"Pull requests"_s};
    if (row.standIn == u"gitlab"_s)
        return {u"/gitlab/projects/acme%2Fplatform%2Fapi/merge_requests/"_s + n + u"/notes"_s,
                {{"body"_L1, text}},
                1000000,
                u"api scope"_s};
    if (row.standIn == u"gitea"_s)
        return {u"/gitea/repos/acme/api/issues/"_s + n + u"/comments"_s, {{"body"_L1, text}}, 65536, u"write:issue"_s};
    if (row.standIn == u"bitbucket"_s)
        return {u"/bitbucket/repositories/acme/api/pullrequests/"_s + n + u"/comments"_s,
                {{"content"_L1, QJsonObject{{"raw"_L1, text}}}},
                32767,
                u"Pull requests"_s};
    if (row.standIn == u"bbdc"_s)
        return {u"/bbdc/rest/api/1.0/projects/acme/repos/api/pull-requests/"_s + n + u"/comments"_s,
                {{"text"_L1, text}},
                32767,
                u"Repository read"_s};
    return {u"/azure/acme/shop/_apis/git/repositories/api/pullRequests/"_s + n + u"/threads"_s,
            {{"comments"_L1,
              QJsonArray{QJsonObject{{"parentCommentId"_L1, 0}, {"content"_L1, text}, {"commentType"_L1, 1}}}},
             {"status"_L1, 1}},
            150000,
            u"Code (Read & write)"_s};
}

// The events registerWebhook() subscribes a forge's hook to, sorted as the stand-in shows them.
QJsonArray hookEventsOf(const ForgeRow &row)
{
    QStringList events;
    if (row.standIn == u"github"_s || row.standIn == u"gitea"_s)
        events = {u"push"_s, u"pull_request"_s};
    else if (row.standIn == u"gitlab"_s)
        events = {u"push_events"_s, u"merge_requests_events"_s};
    else if (row.standIn == u"bitbucket"_s)
        events = {u"repo:push"_s, u"pullrequest:created"_s, u"pullrequest:updated"_s, u"pullrequest:fulfilled"_s,
                  u"pullrequest:rejected"_s};
    else if (row.standIn == u"bbdc"_s)
        events = {u"repo:refs_changed"_s, u"pr:opened"_s,   u"pr:from_ref_updated"_s,
                  u"pr:merged"_s,         u"pr:declined"_s, u"pr:deleted"_s};
    else
        events = {u"git.push"_s, u"git.pullrequest.created"_s, u"git.pullrequest.updated"_s};
    events.sort();
    return QJsonArray::fromStringList(events);
}

// How many hooks the stand-in keeps for one URL: Azure's service hooks are one subscription per event.
qsizetype hooksPerUrl(const ForgeRow &row)
{
    return row.standIn == u"azure"_s ? 3 : 1;
}

QString rowName(const ForgeRow &row)
{
    return row.username == u"oauth2"_s                               ? u"gitlab-bearer"_s
           : row.standIn == u"bitbucket"_s && row.username.isEmpty() ? u"bitbucket-bearer"_s
                                                                     : row.standIn;
}

RepoAddress address(const QString &url, ForgeKind kind)
{
    auto parsed = parseRepoAddress(url, kind);
    if (!parsed)
        qFatal("test address %s does not parse", qPrintable(url));
    return *parsed;
}

QJsonValue at(QJsonValue value, const QStringList &path)
{
    for (const QString &key : path)
        value = value[key];
    return value;
}

} // namespace

Q_DECLARE_METATYPE(ForgeRow)
Q_DECLARE_METATYPE(pando::adapters::ForgeKind)

class TestForgeApi : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<StandIn> m_standIn;

    std::unique_ptr<ForgeApi> api(const ForgeRow &row, forgerest::ForgeRestOptions options = {},
                                  const QByteArray &token = Token) const
    {
        options.apiBase = m_standIn->base() + row.apiPath;
        if (options.requestTimeoutMs == forgerest::ForgeRestOptions().requestTimeoutMs)
            options.requestTimeoutMs = 5000;
        return forgerest::makeApi(ForgeAccount{ForgeScope{row.kind, row.baseUrl, {}}, row.username, token}, options);
    }

    // The api of row's forge, which the stand-in makes never answer: each request has 400 ms.
    std::unique_ptr<ForgeApi> silentApi(const ForgeRow &row) const
    {
        m_standIn->failFor(row.standIn, row.repoKey, u"hang"_s);
        forgerest::ForgeRestOptions options;
        options.requestTimeoutMs = 400;
        return api(row, options);
    }

    static void addRows()
    {
        QTest::addColumn<ForgeRow>("row");
        for (const ForgeRow &row : forgeRows())
            QTest::newRow(qPrintable(rowName(row))) << row;
    }

private Q_SLOTS:
    void init()
    {
        PANDO_REQUIRE_COMPONENT(!QStandardPaths::findExecutable(u"python3"_s).isEmpty(),
                                u"python3 (runs the stand-in for the forges' APIs)"_s);
        m_standIn = std::make_unique<StandIn>(Token, BitbucketUser);
        QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
    }

    void cleanup() { m_standIn.reset(); }

    void repositoriesOverTwoPages_data() { addRows(); }
    void repositoriesOverTwoPages()
    {
        QFETCH(ForgeRow, row);
        auto repositories = api(row)->repositories({});
        QVERIFY2(repositories, errorText(repositories));
        QStringList names;
        for (const ForgeRepository &repository : *repositories)
            names << repository.fullName;
        QCOMPARE(names, row.names);
        QCOMPARE(m_standIn->gets(row.standIn, row.listPath), 2);

        const ForgeRepository &first = repositories->first();
        QVERIFY(first.isPrivate);
        QVERIFY(!repositories->at(1).isPrivate);
        QVERIFY2(first.cloneUrl.startsWith(u"https://"_s), qPrintable(first.cloneUrl));
        QVERIFY2(!first.cloneUrl.contains(u'@'), qPrintable(first.cloneUrl)); // no account's name in it
        QVERIFY(!first.sshUrl.isEmpty());
        QVERIFY(first.webUrl.startsWith(u"https://"_s));
        // Data Center's listing does not say which branch is the default.
        QCOMPARE(first.defaultBranch, row.standIn == u"bbdc"_s ? QString() : u"main"_s);
        if (row.standIn != u"bbdc"_s)
            QCOMPARE(repositories->at(1).defaultBranch, u"trunk"_s);
    }

    void branchesOverTwoPages_data() { addRows(); }
    void branchesOverTwoPages()
    {
        QFETCH(ForgeRow, row);
        auto branches = api(row)->branches(address(row.repoUrl, row.kind), {});
        QVERIFY2(branches, errorText(branches));
        QCOMPARE(branches->size(), 3);
        QCOMPARE(branches->at(0).name, u"main"_s);
        QCOMPARE(branches->at(0).commit, shaOf("main"));
        QCOMPARE(branches->at(1).name, u"feature/x"_s);
        QCOMPARE(branches->at(1).commit, shaOf("feature/x"));
        QCOMPARE(branches->at(2).commit, shaOf("release"));
    }

    void resolve_data() { addRows(); }
    void resolve()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        const QList<std::pair<QString, QString>> refs{
            {u"main"_s, shaOf("main")},
            {u"feature/x"_s, shaOf("feature/x")},
            {u"refs/heads/feature/x"_s, shaOf("feature/x")},
            {u"v1.0"_s, shaOf("v1.0")}, // an annotated tag: the commit, not the tag object
            {u"refs/tags/v1.0"_s, shaOf("v1.0")},
            {shaOf("release"), shaOf("release")},
        };
        for (const auto &[ref, commit] : refs) {
            auto resolved = forge->resolve(repo, ref, {});
            QVERIFY2(resolved, qPrintable(ref + u": "_s + QString::fromUtf8(errorText(resolved))));
            QCOMPARE(*resolved, commit);
        }
        auto missing = forge->resolve(repo, u"nope"_s, {});
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, ErrorCode::NotFound);
        QCOMPARE(missing.error().where, u"ref"_s);
        QVERIFY2(missing.error().message.contains(u"\"nope\""_s), errorText(missing));
        // A tag is not looked for as a branch, nor a branch as a tag.
        QCOMPARE(forge->resolve(repo, u"refs/tags/main"_s, {}).error().code, ErrorCode::NotFound);
        QCOMPARE(forge->resolve(repo, u"refs/heads/v1.0"_s, {}).error().code, ErrorCode::NotFound);
        QCOMPARE(forge->resolve(repo, QString(), {}).error().code, ErrorCode::Invalid);
    }

    void setCommitStatus_data() { addRows(); }
    void setCommitStatus()
    {
        QFETCH(ForgeRow, row);
        const QString commit = shaOf("main");
        auto set =
            api(row)->setCommitStatus(address(row.repoUrl, row.kind),
                                      CommitStatus{commit, CommitState::Success, Context, Description, Target}, {});
        QVERIFY2(set, errorText(set));
        const QJsonArray received = m_standIn->statuses(row.standIn);
        QCOMPARE(received.size(), 1);
        QCOMPARE(received.at(0)["sha"_L1].toString(), commit);
        QCOMPARE(received.at(0)["body"_L1].toObject(), row.statusBody);

        auto notACommit = api(row)->setCommitStatus(address(row.repoUrl, row.kind),
                                                    CommitStatus{u"main"_s, CommitState::Pending, Context, {}, {}}, {});
        QCOMPARE(notACommit.error().code, ErrorCode::Invalid);
        QCOMPARE(notACommit.error().where, u"commit"_s);
    }

    // GitLab refuses a status the commit has already; Pando asked for that state, so it is done.
    void gitLabStatusTwice()
    {
        const ForgeRow row = forgeRows().at(1);
        auto forge = api(row);
        const CommitStatus pending{shaOf("main"), CommitState::Pending, Context, u"deploying"_s, Target};
        auto first = forge->setCommitStatus(address(row.repoUrl, row.kind), pending, {});
        QVERIFY2(first, errorText(first));
        auto again = forge->setCommitStatus(address(row.repoUrl, row.kind), pending, {});
        QVERIFY2(again, errorText(again));
        QCOMPARE(m_standIn->statuses(u"gitlab"_s).size(), 1);
    }

    void registerWebhookIsIdempotent_data() { addRows(); }
    void registerWebhookIsIdempotent()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        const QString url = u"https://pando.example/hooks/shop"_s;

        auto created = forge->registerWebhook(repo, url, "first-secret", {});
        QVERIFY2(created, errorText(created));
        QVERIFY(!created->id.isEmpty());
        QCOMPARE(created->url, url);
        QJsonArray hooks = m_standIn->hooks(row.standIn).value(row.repoKey).toArray();
        QCOMPARE(hooks.size(), hooksPerUrl(row));
        for (const QJsonValue hook : hooks)
            QCOMPARE(at(hook, row.secretPath).toString(), u"first-secret"_s);

        auto again = forge->registerWebhook(repo, url, "second-secret", {});
        QVERIFY2(again, errorText(again));
        QCOMPARE(again->id, created->id);
        hooks = m_standIn->hooks(row.standIn).value(row.repoKey).toArray();
        QCOMPARE(hooks.size(), hooksPerUrl(row));
        for (const QJsonValue hook : hooks)
            QCOMPARE(at(hook, row.secretPath).toString(), u"second-secret"_s);

        // Another URL is another hook.
        auto other = forge->registerWebhook(repo, u"https://other.example/hook"_s, "third-secret", {});
        QVERIFY2(other, errorText(other));
        QVERIFY(other->id != created->id);
        QCOMPARE(m_standIn->hooks(row.standIn).value(row.repoKey).toArray().size(), 2 * hooksPerUrl(row));

        QCOMPARE(forge->registerWebhook(repo, url, {}, {}).error().where, u"secret"_s);
        QCOMPARE(forge->registerWebhook(repo, u"ftp://pando.example/x"_s, "s3cret", {}).error().where, u"url"_s);
    }

    // One hook serves deploy on push and previews: it is for pushes and pull requests, and
    // registering again leaves each event subscribed once.
    void registerWebhookSubscribesToPullRequests_data() { addRows(); }
    void registerWebhookSubscribesToPullRequests()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        const QString url = u"https://pando.example/hooks/shop"_s;
        const QJsonObject expected{{url, hookEventsOf(row)}};

        auto registered = forge->registerWebhook(repo, url, "first-secret", {});
        QVERIFY2(registered, errorText(registered));
        QCOMPARE(m_standIn->hookEvents(row.standIn).value(row.repoKey).toObject(), expected);
        auto again = forge->registerWebhook(repo, url, "second-secret", {});
        QVERIFY2(again, errorText(again));
        QCOMPARE(again->id, registered->id);
        QCOMPARE(m_standIn->hookEvents(row.standIn).value(row.repoKey).toObject(), expected);
    }

    // A hook an older Pando registered for pushes only is updated to the pull request events too
    // (Azure: its push subscription kept, the pull request ones added), and no second one is made.
    void reregisteringUpdatesTheEvents_data() { addRows(); }
    void reregisteringUpdatesTheEvents()
    {
        QFETCH(ForgeRow, row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        const QString url = u"https://pando.example/hooks/shop"_s;
        const QString seeded = m_standIn->seedHook(row.standIn, row.repoKey, url, u"old-secret"_s);
        QVERIFY(!seeded.isEmpty());
        QCOMPARE(m_standIn->hookEvents(row.standIn).value(row.repoKey).toObject().value(url).toArray().size(), 1);

        auto registered = api(row)->registerWebhook(repo, url, "new-secret", {});
        QVERIFY2(registered, errorText(registered));
        QCOMPARE(registered->id, seeded);
        QCOMPARE(m_standIn->hookEvents(row.standIn).value(row.repoKey).toObject(),
                 (QJsonObject{{url, hookEventsOf(row)}}));
        const QJsonArray hooks = m_standIn->hooks(row.standIn).value(row.repoKey).toArray();
        QCOMPARE(hooks.size(), hooksPerUrl(row));
        for (const QJsonValue hook : hooks)
            QCOMPARE(at(hook, row.secretPath).toString(), u"new-secret"_s);
    }

    void commentOnPullRequest_data() { addRows(); }
    void commentOnPullRequest()
    {
        QFETCH(ForgeRow, row);
        const QString body = u"Preview of **shop** for this pull request: https://pr-7.shop.pando.example"_s;
        auto commented = api(row)->commentOnPullRequest(address(row.repoUrl, row.kind), 7, body, {});
        QVERIFY2(commented, errorText(commented));
        const QJsonArray received = m_standIn->comments(row.standIn);
        QCOMPARE(received.size(), 1);
        const CommentRequest expected = commentRequest(row, 7, body);
        QCOMPARE(received.at(0)["path"_L1].toString(), expected.path);
        QCOMPARE(received.at(0)["body"_L1].toObject(), expected.body);
        QCOMPARE(received.at(0)["number"_L1].toInt(), 7);
        QCOMPARE(*commented, QString::number(received.at(0)["id"_L1].toInteger()));
        // One request: the comment, nothing looked up before it.
        QCOMPARE(m_standIn->requests(row.standIn).size(), 1);
    }

    // A body past the forge's limit is cut there, never inside a surrogate pair.
    void longCommentIsCut_data() { addRows(); }
    void longCommentIsCut()
    {
        QFETCH(ForgeRow, row);
        const qsizetype limit = commentRequest(row, 12, {}).limit;
        const QString kept(limit - 1, u'x');
        auto commented = api(row)->commentOnPullRequest(address(row.repoUrl, row.kind), 12,
                                                        kept + u"\U0001F600"_s + QString(100, u'y'), {});
        QVERIFY2(commented, errorText(commented));
        const QJsonArray received = m_standIn->comments(row.standIn);
        QCOMPARE(received.size(), 1);
        QCOMPARE(received.at(0)["body"_L1].toObject(), commentRequest(row, 12, kept).body);
    }

    void commentRefused_data() { addRows(); }
    void commentRefused()
    {
        QFETCH(ForgeRow, row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        auto refused = api(row, {}, WrongToken)->commentOnPullRequest(repo, 7, u"hello"_s, {});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
        QCOMPARE(refused.error().where, u"token"_s);
        QVERIFY2(refused.error().message.contains(u"when asked to comment on the pull requests of"_s),
                 errorText(refused));
        QVERIFY2(holdsNoToken(refused), errorText(refused));

        m_standIn->failFor(row.standIn, row.repoKey, 403);
        auto forbidden = api(row)->commentOnPullRequest(repo, 7, u"hello"_s, {});
        QVERIFY(!forbidden);
        QCOMPARE(forbidden.error().code, ErrorCode::Forbidden);
        QCOMPARE(forbidden.error().where, u"token"_s);
        QVERIFY2(forbidden.error().message.contains(u"lacks the scope to comment on the pull requests of"_s),
                 errorText(forbidden));
        QVERIFY2(forbidden.error().hint.contains(commentRequest(row, 7, {}).scopeWord),
                 qPrintable(forbidden.error().hint));
        QVERIFY2(holdsNoToken(forbidden), errorText(forbidden));
        QCOMPARE(m_standIn->comments(row.standIn).size(), 0);
    }

    // A 404 is the repository's when the token cannot see it, else the pull request's.
    void commentNotFound_data() { addRows(); }
    void commentNotFound()
    {
        QFETCH(ForgeRow, row);
        auto noRepo = api(row)->commentOnPullRequest(address(row.missingUrl, row.kind), 7, u"hello"_s, {});
        QVERIFY(!noRepo);
        QCOMPARE(noRepo.error().code, ErrorCode::NotFound);
        QCOMPARE(noRepo.error().where, u"repo"_s);
        QVERIFY2(noRepo.error().message.contains(u"nothere was not found on"_s), errorText(noRepo));
        QVERIFY2(holdsNoToken(noRepo), errorText(noRepo));

        const RepoAddress repo = address(row.repoUrl, row.kind);
        auto noPull = api(row)->commentOnPullRequest(repo, 99, u"hello"_s, {});
        QVERIFY(!noPull);
        QCOMPARE(noPull.error().code, ErrorCode::NotFound);
        QCOMPARE(noPull.error().where, u"number"_s);
        QVERIFY2(noPull.error().message.contains(u"has no pull request 99 on"_s), errorText(noPull));
        QVERIFY2(holdsNoToken(noPull), errorText(noPull));

        m_standIn->failFor(row.standIn, row.repoKey, 404);
        auto hidden = api(row)->commentOnPullRequest(repo, 7, u"hello"_s, {});
        QCOMPARE(hidden.error().code, ErrorCode::NotFound);
        QCOMPARE(hidden.error().where, u"repo"_s);
        QCOMPARE(m_standIn->comments(row.standIn).size(), 0);
    }

    void commentMeetsTheDeadline_data() { addRows(); }
    void commentMeetsTheDeadline()
    {
        QFETCH(ForgeRow, row);
        QElapsedTimer clock;
        clock.start();
        auto commented = silentApi(row)->commentOnPullRequest(address(row.repoUrl, row.kind), 7, u"hello"_s, {});
        QVERIFY(!commented);
        QCOMPARE(commented.error().code, ErrorCode::Timeout);
        QVERIFY2(commented.error().message.contains(u"did not answer within 400 ms"_s), errorText(commented));
        QVERIFY2(holdsNoToken(commented), errorText(commented));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    }

    // A number no pull request has, or nothing to say, is refused before any request.
    void commentNeedsANumberAndABody_data() { addRows(); }
    void commentNeedsANumberAndABody()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        for (const int number : {0, -3}) {
            auto refused = forge->commentOnPullRequest(repo, number, u"hello"_s, {});
            QVERIFY(!refused);
            QCOMPARE(refused.error().code, ErrorCode::Invalid);
            QCOMPARE(refused.error().where, u"number"_s);
        }
        auto empty = forge->commentOnPullRequest(repo, 7, u" \n"_s, {});
        QCOMPARE(empty.error().code, ErrorCode::Invalid);
        QCOMPARE(empty.error().where, u"body"_s);
        QCOMPARE(m_standIn->requests(row.standIn).size(), 0);
    }

    void refusedToken_data() { addRows(); }
    void refusedToken()
    {
        QFETCH(ForgeRow, row);
        auto listed = api(row, {}, WrongToken)->repositories({});
        QVERIFY(!listed);
        QCOMPARE(listed.error().code, ErrorCode::Unauthorized);
        QCOMPARE(listed.error().where, u"token"_s);
        QVERIFY2(listed.error().message.contains(u"refused the token (expired or revoked?)"_s), errorText(listed));
        QVERIFY(!listed.error().hint.isEmpty());
        QVERIFY2(holdsNoToken(listed), errorText(listed));
    }

    void missingScope_data() { addRows(); }
    void missingScope()
    {
        QFETCH(ForgeRow, row);
        m_standIn->failFor(row.standIn, row.repoKey, 403);
        auto registered =
            api(row)->registerWebhook(address(row.repoUrl, row.kind), u"https://pando.example/h"_s, "s3cret-value", {});
        QVERIFY(!registered);
        QCOMPARE(registered.error().code, ErrorCode::Forbidden);
        QCOMPARE(registered.error().where, u"token"_s);
        QVERIFY2(registered.error().message.contains(u"lacks the scope to manage the webhooks of"_s),
                 errorText(registered));
        QVERIFY2(registered.error().hint.contains(row.scopeWord), qPrintable(registered.error().hint));
        QVERIFY2(holdsNoToken(registered), errorText(registered));
        QVERIFY(!registered.error().text().contains(u"s3cret-value"_s));
    }

    void repositoryNotFound_data() { addRows(); }
    void repositoryNotFound()
    {
        QFETCH(ForgeRow, row);
        auto branches = api(row)->branches(address(row.missingUrl, row.kind), {});
        QVERIFY(!branches);
        QCOMPARE(branches.error().code, ErrorCode::NotFound);
        QCOMPARE(branches.error().where, u"repo"_s);
        QVERIFY2(branches.error().message.contains(u"nothere was not found on"_s), errorText(branches));
        QVERIFY2(branches.error().message.contains(u"not visible to this token"_s), errorText(branches));
        QVERIFY2(holdsNoToken(branches), errorText(branches));

        // A ref of a repository the token cannot see is the repository's error, not the ref's.
        auto resolved = api(row)->resolve(address(row.missingUrl, row.kind), u"main"_s, {});
        QCOMPARE(resolved.error().code, ErrorCode::NotFound);
        QCOMPARE(resolved.error().where, u"repo"_s);
    }

    void forgeThatNeverAnswers_data() { addRows(); }
    void forgeThatNeverAnswers()
    {
        QFETCH(ForgeRow, row);
        QElapsedTimer clock;
        clock.start();
        auto branches = silentApi(row)->branches(address(row.repoUrl, row.kind), {});
        QVERIFY(!branches);
        QCOMPARE(branches.error().code, ErrorCode::Timeout);
        QVERIFY2(branches.error().message.contains(u"did not answer within 400 ms"_s), errorText(branches));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    }

    void repositoryOnAnotherHost_data() { addRows(); }
    void repositoryOnAnotherHost()
    {
        QFETCH(ForgeRow, row);
        auto branches = api(row)->branches(address(u"https://elsewhere.example/acme/api"_s, row.kind), {});
        QCOMPARE(branches.error().code, ErrorCode::Invalid);
        QCOMPARE(branches.error().where, u"repo"_s);
        QVERIFY2(branches.error().message.contains(u"is not on this connection's forge"_s), errorText(branches));
        QCOMPARE(m_standIn->requests(row.standIn).size(), 0);
    }

    void cancelled()
    {
        const ForgeRow row = forgeRows().first();
        CancelToken cancel;
        cancel.cancel();
        auto listed = api(row)->repositories(cancel);
        QCOMPARE(listed.error().code, ErrorCode::Cancelled);
        QCOMPARE(m_standIn->requests(row.standIn).size(), 0);
    }

    // A next page at another address would be sent the token: it is not followed.
    void nextPageElsewhere_data()
    {
        QTest::addColumn<ForgeRow>("row");
        for (const ForgeRow &row : forgeRows()) {
            // Only these forges give the next page as an address; the others give a number or a token.
            if (row.standIn == u"github"_s || row.standIn == u"gitea"_s || row.standIn == u"bitbucket"_s)
                QTest::newRow(qPrintable(rowName(row))) << row;
        }
    }
    void nextPageElsewhere()
    {
        QFETCH(ForgeRow, row);
        m_standIn->nextPagesAt(u"elsewhere.example:8080"_s);
        auto listed = api(row)->repositories({});
        QVERIFY(!listed);
        QCOMPARE(listed.error().code, ErrorCode::Unavailable);
        QVERIFY2(listed.error().message.contains(u"at another address (http://elsewhere.example:8080/"_s),
                 errorText(listed));
        QCOMPARE(m_standIn->gets(row.standIn, row.listPath), 1);
    }

    // A listing is read to maxPages pages and no further: one longer fails saying so, never
    // answering part of it as the whole.
    void pageCap()
    {
        const ForgeRow row = forgeRows().first();
        forgerest::ForgeRestOptions options;
        options.maxPages = 1;
        auto listed = api(row, options)->repositories({});
        QVERIFY(!listed);
        QCOMPARE(listed.error().code, ErrorCode::Failed);
        QVERIFY2(listed.error().message.contains(u"more than 1 pages"_s), errorText(listed));
        QVERIFY2(listed.error().hint.contains(u"--owner"_s), errorText(listed));
        QCOMPARE(m_standIn->gets(row.standIn, row.listPath), 1);
        options.maxPages = 2; // the whole listing: two pages
        listed = api(row, options)->repositories({});
        QVERIFY2(listed, errorText(listed));
        QCOMPARE(listed->size(), 3);
    }

    // An owner narrows the listing: a GitHub organisation, a GitLab group with its subgroups.
    void ownerScope()
    {
        const ForgeRow gitHub = forgeRows().at(0);
        auto forge =
            forgerest::makeApi(ForgeAccount{ForgeScope{ForgeKind::GitHub, gitHub.baseUrl, u"acme"_s}, {}, Token},
                               {.apiBase = m_standIn->base() + gitHub.apiPath});
        auto listed = forge->repositories({});
        QVERIFY2(listed, errorText(listed));
        QCOMPARE(listed->size(), 3);
        QCOMPARE(m_standIn->gets(u"github"_s, u"/orgs/acme/repos"_s), 2);

        const ForgeRow gitLab = forgeRows().at(1);
        forge = forgerest::makeApi(ForgeAccount{ForgeScope{ForgeKind::GitLab, gitLab.baseUrl, u"acme"_s}, {}, Token},
                                   {.apiBase = m_standIn->base() + gitLab.apiPath});
        listed = forge->repositories({});
        QVERIFY2(listed, errorText(listed));
        QCOMPARE(listed->size(), 3);
    }

    // Azure DevOps answers a token it does not take with 203 and its sign-in page.
    void azureSignInPage()
    {
        const ForgeRow row = forgeRows().last();
        m_standIn->failFor(u"azure"_s, u"*"_s, 203);
        auto listed = api(row)->repositories({});
        QCOMPARE(listed.error().code, ErrorCode::Unauthorized);
        QVERIFY2(!listed.error().message.contains(u"<html"_s), errorText(listed));
    }

    void genericHostHasNoApi()
    {
        auto forge =
            makeForgeApi(ForgeAccount{ForgeScope{ForgeKind::Generic, u"https://git.example.com"_s, {}}, {}, Token});
        const RepoAddress repo = address(u"https://git.example.com/acme/api.git"_s, ForgeKind::Generic);
        auto listed = forge->repositories({});
        QCOMPARE(listed.error().code, ErrorCode::Invalid);
        QCOMPARE(listed.error().where, u"kind"_s);
        QVERIFY2(listed.error().message.contains(u"generic git host has no API"_s), errorText(listed));
        QCOMPARE(forge->branches(repo, {}).error().code, ErrorCode::Invalid);
        QCOMPARE(forge->resolve(repo, u"main"_s, {}).error().code, ErrorCode::Invalid);
        QCOMPARE(forge->setCommitStatus(repo, CommitStatus{shaOf("main"), CommitState::Success, Context, {}, {}}, {})
                     .error()
                     .code,
                 ErrorCode::Invalid);
        QCOMPARE(forge->registerWebhook(repo, u"https://pando.example/h"_s, "s", {}).error().where, u"kind"_s);
        auto commented = forge->commentOnPullRequest(repo, 7, u"hello"_s, {});
        QCOMPARE(commented.error().where, u"kind"_s);
        QVERIFY2(commented.error().message.contains(u"comment on pull requests"_s), errorText(commented));
    }

    void unusableAccounts()
    {
        auto noToken = makeForgeApi(ForgeAccount{ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, {}}, {}, {}});
        QCOMPARE(noToken->repositories({}).error().where, u"token"_s);
        auto lineBreak = makeForgeApi(
            ForgeAccount{ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, {}}, {}, "abc\r\nX-Evil: 1"});
        QCOMPARE(lineBreak->repositories({}).error().where, u"token"_s);
        auto plainHttp =
            makeForgeApi(ForgeAccount{ForgeScope{ForgeKind::GitLab, u"http://gitlab.example.com"_s, {}}, {}, Token});
        QCOMPARE(plainHttp->repositories({}).error().where, u"url"_s);
        auto sshOnly =
            makeForgeApi(ForgeAccount{ForgeScope{ForgeKind::Gitea, u"ssh://git.example.com:2222"_s, {}}, {}, Token});
        QCOMPARE(sshOnly->repositories({}).error().where, u"url"_s);
    }

    void defaultApiBase_data()
    {
        QTest::addColumn<ForgeKind>("kind");
        QTest::addColumn<QString>("baseUrl");
        QTest::addColumn<QString>("apiBase");
        QTest::newRow("github.com") << ForgeKind::GitHub << u"https://github.com"_s << u"https://api.github.com"_s;
        QTest::newRow("github over ssh") << ForgeKind::GitHub << u"ssh://git@github.com"_s
                                         << u"https://api.github.com"_s;
        QTest::newRow("github enterprise")
            << ForgeKind::GitHub << u"https://ghe.example.com/"_s << u"https://ghe.example.com/api/v3"_s;
        QTest::newRow("gitlab below a path")
            << ForgeKind::GitLab << u"https://git.example.com/gitlab"_s << u"https://git.example.com/gitlab/api/v4"_s;
        QTest::newRow("gitea") << ForgeKind::Gitea << u"https://gitea.example"_s << u"https://gitea.example/api/v1"_s;
        QTest::newRow("bitbucket cloud") << ForgeKind::Bitbucket << u"https://bitbucket.org"_s
                                         << u"https://api.bitbucket.org/2.0"_s;
        QTest::newRow("bitbucket data center")
            << ForgeKind::Bitbucket << u"https://bitbucket.example/bb"_s << u"https://bitbucket.example/bb"_s;
        QTest::newRow("azure") << ForgeKind::AzureDevOps << u"https://dev.azure.com/acme"_s
                               << u"https://dev.azure.com/acme"_s;
        QTest::newRow("azure, older name")
            << ForgeKind::AzureDevOps << u"https://acme.visualstudio.com"_s << u"https://dev.azure.com/acme"_s;
        QTest::newRow("azure over ssh") << ForgeKind::AzureDevOps << u"ssh://git@ssh.dev.azure.com/v3/acme"_s
                                        << u"https://dev.azure.com/acme"_s;
        QTest::newRow("gitlab over ssh") << ForgeKind::GitLab << u"ssh://git@git.example.com"_s << QString();
        QTest::newRow("generic") << ForgeKind::Generic << u"https://git.example.com"_s << QString();
    }
    void defaultApiBase()
    {
        QFETCH(ForgeKind, kind);
        QFETCH(QString, baseUrl);
        QFETCH(QString, apiBase);
        QCOMPARE(forgerest::detail::defaultApiBase(ForgeScope{kind, baseUrl, {}}), apiBase);
    }
};

QTEST_GUILESS_MAIN(TestForgeApi)
#include "tst_forgeapi.moc"
