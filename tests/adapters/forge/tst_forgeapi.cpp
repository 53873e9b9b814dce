// The forge REST API adapter against a local stand-in for six forges' APIs
// (forge_api_standin.py), which answers the documented requests with the documented shapes,
// status codes, error bodies and paging, checks each forge's auth header, keeps the statuses,
// hooks (with their events) and pull request comments it is sent, and can be told to refuse (401,
// 403, 404, Azure's 203) or never answer. Every case runs for every forge. No forge on the internet can be reached from
// here: what the real APIs do beyond their references (and the stand-in's reading of them) is not tested.

#include "tests/adapters/forge/forgeapitest.h"

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using namespace pando::test::forgeapi;

class TestForgeApi : public ForgeApiTest {
    Q_OBJECT

private Q_SLOTS:

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
