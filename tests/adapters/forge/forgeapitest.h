#pragma once
// What the forge API adapter's tests share (tst_forgeapi.cpp, tst_forgepullrequests.cpp): the
// six forges as rows (their kinds, addresses, the paths and bodies the stand-in sees), helpers
// reading what it kept, and ForgeApiTest, the fixture that starts the stand-in for each test and
// makes a forge API pointed at it.

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

namespace pando::test::forgeapi {

using namespace Qt::StringLiterals;
using namespace pando::adapters;

inline const QByteArray Token = "forge-token-Vq7xK2pLm9";
inline const QByteArray WrongToken = "forge-token-revoked-Zt4w";
inline const QString BitbucketUser = u"jdoe"_s;

inline QString shaOf(const char *text)
{
    return QString::fromLatin1(QCryptographicHash::hash(text, QCryptographicHash::Sha1).toHex());
}

template<class R> inline QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

// Neither token in anything an error says.
template<class R> inline bool holdsNoToken(const R &result)
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

inline const QString Context = u"pando/shop"_s;
inline const QString Description = QString(150, u'd');
inline const QString Clipped = QString(140, u'd');
inline const QString Target = u"https://pando.example/deploys/7"_s;

inline QList<ForgeRow> forgeRows()
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

inline CommentRequest commentRequest(const ForgeRow &row, int number, const QString &text)
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

// What editPullRequestComment() sends each forge to replace comment id's text: the documented
// path and body (Data Center's with the version it read: edits before this one).
inline CommentRequest editRequest(const ForgeRow &row, int number, const QString &id, const QString &text,
                                  int earlierEdits = 0)
{
    const QString n = QString::number(number);
    if (row.standIn == u"github"_s || row.standIn == u"gitea"_s)
        return {u"/%1/repos/acme/api/issues/comments/%2"_s.arg(row.standIn, id), {{"body"_L1, text}}};
    if (row.standIn == u"gitlab"_s)
        return {u"/gitlab/projects/acme%2Fplatform%2Fapi/merge_requests/"_s + n + u"/notes/"_s + id,
                {{"body"_L1, text}}};
    if (row.standIn == u"bitbucket"_s)
        return {u"/bitbucket/repositories/acme/api/pullrequests/"_s + n + u"/comments/"_s + id,
                {{"content"_L1, QJsonObject{{"raw"_L1, text}}}}};
    if (row.standIn == u"bbdc"_s)
        return {u"/bbdc/rest/api/1.0/projects/acme/repos/api/pull-requests/"_s + n + u"/comments/"_s + id,
                {{"text"_L1, text}, {"version"_L1, earlierEdits}}};
    return {u"/azure/acme/shop/_apis/git/repositories/api/pullRequests/"_s + n + u"/threads/"_s + id + u"/comments/1"_s,
            {{"content"_L1, text}}};
}

// The events registerWebhook() subscribes a forge's hook to, sorted as the stand-in shows them.
inline QJsonArray hookEventsOf(const ForgeRow &row)
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
inline qsizetype hooksPerUrl(const ForgeRow &row)
{
    return row.standIn == u"azure"_s ? 3 : 1;
}

inline QString rowName(const ForgeRow &row)
{
    return row.username == u"oauth2"_s                               ? u"gitlab-bearer"_s
           : row.standIn == u"bitbucket"_s && row.username.isEmpty() ? u"bitbucket-bearer"_s
                                                                     : row.standIn;
}

inline RepoAddress address(const QString &url, ForgeKind kind)
{
    auto parsed = parseRepoAddress(url, kind);
    if (!parsed)
        qFatal("test address %s does not parse", qPrintable(url));
    return *parsed;
}

inline QJsonValue at(QJsonValue value, const QStringList &path)
{
    for (const QString &key : path)
        value = value[key];
    return value;
}

// The fixture: a fresh stand-in for each test function (init/cleanup are found by name).
class ForgeApiTest : public QObject {
    Q_OBJECT

protected:
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
                                u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
        m_standIn = std::make_unique<StandIn>(Token, BitbucketUser);
        QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
    }

    void cleanup() { m_standIn.reset(); }
};

} // namespace pando::test::forgeapi

Q_DECLARE_METATYPE(pando::test::forgeapi::ForgeRow)
Q_DECLARE_METATYPE(pando::adapters::ForgeKind)
