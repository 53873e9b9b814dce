// The forge REST API adapter and pull requests, against the local stand-in (forge_api_standin.py,
// see tst_forgeapi.cpp): the webhook Pando registers is for pushes and pull requests on every
// forge (an older push-only hook gets the pull request events), and a comment on a pull request
// reaches each forge's documented path with its documented body, cut at its limit, refused,
// not found, out of time or never sent when there is nothing to send. No forge on the internet
// is reached.

#include "tests/adapters/forge/forgeapitest.h"

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using namespace pando::test::forgeapi;

class TestForgePullRequests : public ForgeApiTest {
    Q_OBJECT

private Q_SLOTS:
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

    // A comment's text is replaced in place at each forge's documented address, as often as asked
    // (Data Center: each edit names the version the one before it made).
    void editComment_data() { addRows(); }
    void editComment()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        auto commented = forge->commentOnPullRequest(repo, 7, u"Building `1a2b3c4`…"_s, {});
        QVERIFY2(commented, errorText(commented));
        for (int edit = 0; edit < 2; ++edit) {
            const QString body = u"Serving `1a2b3c4` at https://pr-7.shop.pando.example (edit %1)"_s.arg(edit);
            auto edited = forge->editPullRequestComment(repo, 7, *commented, body, {});
            QVERIFY2(edited, errorText(edited));
            const QJsonArray received = m_standIn->comments(row.standIn);
            QCOMPARE(received.size(), 1);
            const CommentRequest expected = editRequest(row, 7, *commented, body, edit);
            QCOMPARE(received.at(0)["edit_path"_L1].toString(), expected.path);
            QCOMPARE(received.at(0)["body"_L1].toObject(), expected.body);
            QCOMPARE(received.at(0)["edits"_L1].toInt(), edit + 1);
        }
    }

    // A comment deleted on the forge is NotFound at "comment" (a new one is then posted); a
    // comment of another pull request is not this one's; an id that is not a forge's is refused
    // before any request, as a number or an empty body are.
    void editMissingComment_data() { addRows(); }
    void editMissingComment()
    {
        QFETCH(ForgeRow, row);
        auto forge = api(row);
        const RepoAddress repo = address(row.repoUrl, row.kind);
        auto commented = forge->commentOnPullRequest(repo, 7, u"hello"_s, {});
        QVERIFY2(commented, errorText(commented));
        if (row.standIn != u"github"_s && row.standIn != u"gitea"_s) { // theirs is the repository's, by id alone
            auto elsewhere = forge->editPullRequestComment(repo, 12, *commented, u"moved"_s, {});
            QVERIFY(!elsewhere);
            QCOMPARE(elsewhere.error().code, ErrorCode::NotFound);
            QCOMPARE(elsewhere.error().where, u"comment"_s);
        }
        m_standIn->deleteComment(row.standIn, *commented);
        auto gone = forge->editPullRequestComment(repo, 7, *commented, u"still there?"_s, {});
        QVERIFY(!gone);
        QCOMPARE(gone.error().code, ErrorCode::NotFound);
        QCOMPARE(gone.error().where, u"comment"_s);
        QVERIFY2(gone.error().message.contains(u"is no longer on its pull request"_s), errorText(gone));
        QVERIFY2(holdsNoToken(gone), errorText(gone));

        auto noRepo = forge->editPullRequestComment(address(row.missingUrl, row.kind), 7, *commented, u"x"_s, {});
        QCOMPARE(noRepo.error().code, ErrorCode::NotFound);
        QCOMPARE(noRepo.error().where, u"repo"_s);

        m_standIn->reset();
        for (const QString &id : {QString(), u"../../hooks"_s, u"12 "_s}) {
            auto refused = forge->editPullRequestComment(repo, 7, id, u"x"_s, {});
            QCOMPARE(refused.error().code, ErrorCode::Invalid);
            QCOMPARE(refused.error().where, u"comment"_s);
        }
        QCOMPARE(forge->editPullRequestComment(repo, 0, u"5"_s, u"x"_s, {}).error().where, u"number"_s);
        QCOMPARE(forge->editPullRequestComment(repo, 7, u"5"_s, u" "_s, {}).error().where, u"body"_s);
        QCOMPARE(m_standIn->requests(row.standIn).size(), 0);
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
};

QTEST_GUILESS_MAIN(TestForgePullRequests)
#include "tst_forgepullrequests.moc"
