// Deploy on push from the outside (docs/autodeploy.md): `pando apps hook-secret` makes the
// webhook's secret, a delivery signed with it as GitHub signs it reaches the API over HTTP and
// queues a deploy, `pando apps hook` shows the webhook and what became of each delivery, and
// what the forge is answered for a wrong signature, a replay and a push to another branch is
// what a user configuring the webhook needs to read.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTemporaryFile>
#include <QTest>
#include <QUuid>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

struct Answer {
    int status = 0;
    QJsonObject body;
};

} // namespace

class TestHookCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void aSignedPushDeploys();
    void theForgeIsToldWhatWentWrong();
    void aChosenSecretIsNotSentBack();

private:
    test::CliRun pando(const QStringList &args, const QByteArray &input = {});
    Answer deliver(const QByteArray &secret, const QString &ref, const QString &id);

    test::TestInstall m_install;
    QTemporaryDir m_config;
    QNetworkAccessManager m_network;
    QByteArray m_secret;
};

void TestHookCli::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    QTemporaryFile spec;
    QVERIFY(spec.open());
    spec.write("name: shop\nsource:\n  repo: https://github.com/acme/shop.git\n  ref: main\n  autodeploy: push\n"
               "run:\n  port: 8080\nhealth:\n  timeout: 1s\n");
    spec.flush();
    const test::CliRun created = pando({u"apps"_s, u"create"_s, u"-f"_s, spec.fileName()});
    QVERIFY2(created.code == 0, qPrintable(created.all()));
}

test::CliRun TestHookCli::pando(const QStringList &args, const QByteArray &input)
{
    return test::runCli(args, test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path()), input);
}

Answer TestHookCli::deliver(const QByteArray &secret, const QString &ref, const QString &id)
{
    const QJsonObject push{
        {u"ref"_s, ref},
        {u"after"_s, u"9a0364b9e99bb480dd25e1f0284c8555a1f2e3d4"_s},
        {u"deleted"_s, false},
        {u"repository"_s, QJsonObject{{u"clone_url"_s, u"https://github.com/acme/shop.git"_s},
                                      {u"ssh_url"_s, u"git@github.com:acme/shop.git"_s},
                                      {u"html_url"_s, u"https://github.com/acme/shop"_s}}},
        {u"pusher"_s, QJsonObject{{u"name"_s, u"octocat"_s}}},
    };
    const QByteArray body = QJsonDocument(push).toJson(QJsonDocument::Compact);
    QNetworkRequest request(QUrl(m_install.baseUrl() + u"/api/v1/hooks/shop"_s));
    request.setRawHeader("Content-Type", "application/json");
    request.setRawHeader("User-Agent", "GitHub-Hookshot/1a2b3c4");
    request.setRawHeader("X-GitHub-Event", "push");
    request.setRawHeader("X-GitHub-Delivery", id.toUtf8());
    request.setRawHeader("X-GitHub-Hook-ID", "421337");
    request.setRawHeader("X-Hub-Signature-256",
                         "sha256=" +
                             QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha256).toHex());
    QNetworkReply *reply = m_network.post(request, body);
    QElapsedTimer waited;
    waited.start();
    while (!reply->isFinished() && waited.elapsed() < 10000)
        QTest::qWait(10);
    Answer answer{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
                  QJsonDocument::fromJson(reply->readAll()).object()};
    reply->deleteLater();
    return answer;
}

void TestHookCli::aSignedPushDeploys()
{
    const test::CliRun made = pando({u"apps"_s, u"hook-secret"_s, u"shop"_s});
    QVERIFY2(made.code == 0, qPrintable(made.all()));
    const auto match = QRegularExpression(u"secret:\\s+([0-9a-f]{40})\\n"_s).match(made.out);
    QVERIFY2(match.hasMatch(), qPrintable(made.out));
    m_secret = match.captured(1).toLatin1();
    QVERIFY2(made.out.contains(m_install.baseUrl() + u"/api/v1/hooks/shop"_s), qPrintable(made.out));
    QVERIFY(made.out.contains(u"not shown again"_s));

    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const Answer accepted = deliver(m_secret, u"refs/heads/main"_s, id);
    QCOMPARE(accepted.status, 202);
    QCOMPARE(accepted.body.value(u"outcome"_s).toString(), u"accepted"_s);
    QCOMPARE(accepted.body.value(u"id"_s).toString(), id);

    // The deploy is queued right after the answer; `apps hook` shows it.
    QTRY_VERIFY_WITH_TIMEOUT(pando({u"apps"_s, u"hook"_s, u"shop"_s}).out.contains(u"deployed"_s), 10000);
    const test::CliRun shown = pando({u"apps"_s, u"hook"_s, u"shop"_s});
    QCOMPARE(shown.code, 0);
    QVERIFY2(shown.out.contains(u"push, branch main"_s), qPrintable(shown.out));
    QVERIFY2(shown.out.contains(u"set by "_s), qPrintable(shown.out));
    QVERIFY2(shown.out.contains(u"github"_s) && shown.out.contains(u"refs/heads/main"_s), qPrintable(shown.out));
    QVERIFY2(QRegularExpression(u"deploy d[0-9a-f]{12}"_s).match(shown.out).hasMatch(), qPrintable(shown.out));
    QVERIFY(!shown.out.contains(QString::fromLatin1(m_secret)));
    const test::CliRun json = pando({u"--json"_s, u"apps"_s, u"hook"_s, u"shop"_s});
    const QJsonObject hook = QJsonDocument::fromJson(json.out.toUtf8()).object();
    QCOMPARE(hook.value(u"mode"_s).toString(), u"push"_s);
    QCOMPARE(hook.value(u"deliveries"_s).toArray().size(), 1);
    const QString deploy = hook.value(u"deliveries"_s).toArray().at(0).toObject().value(u"deploy"_s).toString();
    const test::CliRun deploys = pando({u"deploys"_s, u"list"_s, u"shop"_s});
    QVERIFY2(deploys.out.contains(deploy), qPrintable(deploys.out));
}

void TestHookCli::theForgeIsToldWhatWentWrong()
{
    QVERIFY(!m_secret.isEmpty());
    const Answer wrong =
        deliver("not-the-hook-secret-000", u"refs/heads/main"_s, QUuid::createUuid().toString(QUuid::WithoutBraces));
    QCOMPARE(wrong.status, 401);
    QVERIFY2(wrong.body.value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"X-Hub-Signature-256"_s),
             QJsonDocument(wrong.body).toJson().constData());
    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const Answer other = deliver(m_secret, u"refs/heads/feature"_s, id);
    QCOMPARE(other.status, 200);
    QCOMPARE(other.body.value(u"outcome"_s).toString(), u"ignored"_s);
    QCOMPARE(other.body.value(u"detail"_s).toString(), u"push to refs/heads/feature; shop follows branch main"_s);
    const Answer replay = deliver(m_secret, u"refs/heads/feature"_s, id);
    QCOMPARE(replay.status, 409);
    // Nobody else's route: the hook's own routes need a token.
    const test::CliRun anonymous =
        test::runCli({u"apps"_s, u"hook"_s, u"shop"_s}, test::cliEnvironment(m_install.baseUrl(), {}, m_config.path()));
    QVERIFY(anonymous.code != 0);
}

void TestHookCli::aChosenSecretIsNotSentBack()
{
    const QByteArray chosen = "a-secret-typed-by-hand-7";
    const test::CliRun set = pando({u"apps"_s, u"hook-secret"_s, u"shop"_s, u"--given"_s}, chosen + "\n");
    QVERIFY2(set.code == 0, qPrintable(set.all()));
    QVERIFY(!set.out.contains(QString::fromLatin1(chosen)));
    QVERIFY2(set.out.contains(u"refused from now on"_s), qPrintable(set.out));
    QCOMPARE(deliver(m_secret, u"refs/heads/main"_s, QUuid::createUuid().toString(QUuid::WithoutBraces)).status, 401);
    QCOMPARE(deliver(chosen, u"refs/heads/main"_s, QUuid::createUuid().toString(QUuid::WithoutBraces)).status, 202);
    const test::CliRun tooShort = pando({u"apps"_s, u"hook-secret"_s, u"shop"_s, u"--given"_s}, "short\n");
    QCOMPARE(tooShort.code, 1);
    QVERIFY2(tooShort.err.contains(u"16 to 256 characters"_s), qPrintable(tooShort.all()));
    QVERIFY(!tooShort.err.contains(u"short\""_s));
}

QTEST_MAIN(TestHookCli)
#include "tst_hookcli.moc"
