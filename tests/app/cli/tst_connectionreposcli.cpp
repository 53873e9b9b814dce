// `pando connections repos` and `pando connections branches`: the built binary against an install
// served from this test process whose forge APIs answer from the local stand-in for the forges'
// REST APIs (tests/adapters/forge/forge_api_standin.py) — no forge on the internet is reached.
// The table and --json of each, a repository the connection does not cover, a member without a
// grant, and a token the forge refuses, which no output shows. `pando apps hook-register`
// registers an app's webhook on the forge, refusing an address the forge cannot reach. `pando
// connections add --oauth-client` and `connections authorize` go through the forge's OAuth page
// as a browser would (the stand-in's page acts as the user choosing Authorize or Deny).

#include "adapters/forge/rest/forgerest.h"
#include "adapters/kit/httpkit/httptransport.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

using Run = test::CliRun;

namespace {

const QByteArray Token = "ghp_cli-Repos-Standin-7734";
const QByteArray ClientSecret = "cli-Client-Secret-5150";

} // namespace

class TestConnectionReposCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void repositories();
    void branches();
    void registersTheWebhook();
    void refusals();
    void oauthThroughTheBrowser();
    void opensTheBrowser();

private:
    // Runs pando with args (the client secret on its standard input), plays the browser on the
    // forge's page it prints, and returns how it ended; callback: what the page sent back said.
    // pathFirst: a directory put first on the command's PATH (an xdg-open of the test's).
    Run authorizeInBrowser(const QStringList &args, QByteArray *callback, const QString &pathFirst = {});
    Run pando(const QStringList &args, const QByteArray &input = {}, const QString &user = u"admin"_s);

    std::unique_ptr<test::ForgeStandIn> m_standIn;
    std::unique_ptr<test::TestInstall> m_install;
    QTemporaryDir m_config;
    QString m_binary;
};

void TestConnectionReposCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(u"no pando binary at %1"_s.arg(m_binary)));
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
    m_standIn = std::make_unique<test::ForgeStandIn>(Token);
    QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
    m_install = std::make_unique<test::TestInstall>();
    const QString base = m_standIn->base();
    m_install->forgeApis = [base](const adapters::ForgeAccount &account) {
        return adapters::forgerest::makeApi(account, {.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
    };
    m_install->forgeOAuth = adapters::forgerest::makeOAuth({.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
    QVERIFY2(m_install->start(), qPrintable(m_install->error));
    const Run added = pando({u"connections"_s, u"add"_s, u"gh"_s, u"--url"_s, u"https://github.com"_s, u"--kind"_s,
                             u"github"_s, u"--owner"_s, u"acme"_s},
                            Token + "\n");
    QVERIFY2(added.code == 0, qPrintable(added.err));
}

void TestConnectionReposCli::cleanupTestCase()
{
    m_install.reset();
    m_standIn.reset();
}

Run TestConnectionReposCli::pando(const QStringList &args, const QByteArray &input, const QString &user)
{
    return test::runCli(
        args, test::cliEnvironment(m_install->baseUrl(), m_install->tokens.value(user), m_config.path()), input);
}

void TestConnectionReposCli::repositories()
{
    const Run listed = pando({u"connections"_s, u"repos"_s, u"gh"_s});
    QVERIFY2(listed.code == 0, qPrintable(listed.err));
    const QStringList lines = listed.out.split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);
    QVERIFY2(lines.at(0).contains(u"REPOSITORY"_s) && lines.at(0).contains(u"CLONE URL"_s), qPrintable(listed.out));
    const QStringList api = lines.at(1).simplified().split(u' ');
    QCOMPARE(api, (QStringList{u"acme/api"_s, u"private"_s, u"main"_s, u"https://github.com/acme/api.git"_s}));
    const QStringList web = lines.at(2).simplified().split(u' ');
    QCOMPARE(web, (QStringList{u"acme/web"_s, u"public"_s, u"trunk"_s, u"https://github.com/acme/web.git"_s}));
    QVERIFY(lines.at(3).startsWith(u"acme/tools"_s));

    // --json: the API's answer as it is.
    const Run json = pando({u"--json"_s, u"connections"_s, u"repos"_s, u"gh"_s});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    const QJsonArray repositories =
        QJsonDocument::fromJson(json.out.toUtf8()).object().value(u"repositories"_s).toArray();
    QCOMPARE(repositories.size(), 3);
    const QJsonObject first = repositories.at(0).toObject();
    QCOMPARE(first.value(u"full_name"_s).toString(), u"acme/api"_s);
    QCOMPARE(first.value(u"ssh_url"_s).toString(), u"git@github.com:acme/api.git"_s);
    QCOMPARE(first.value(u"web_url"_s).toString(), u"https://github.com/acme/api"_s);
    QCOMPARE(first.value(u"default_branch"_s).toString(), u"main"_s);
    QCOMPARE(first.value(u"private"_s).toBool(), true);
    QVERIFY(!json.out.contains(QString::fromLatin1(Token)));
}

void TestConnectionReposCli::branches()
{
    const Run listed = pando({u"connections"_s, u"branches"_s, u"gh"_s, u"https://github.com/acme/api.git"_s});
    QVERIFY2(listed.code == 0, qPrintable(listed.err));
    const QStringList lines = listed.out.split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);
    QVERIFY2(lines.at(0).contains(u"BRANCH"_s) && lines.at(0).contains(u"COMMIT"_s), qPrintable(listed.out));
    const QString mainCommit = QString::fromLatin1(QCryptographicHash::hash("main", QCryptographicHash::Sha1).toHex());
    QCOMPARE(lines.at(1).simplified(), u"main "_s + mainCommit.left(12));
    QVERIFY(lines.at(2).startsWith(u"feature/x"_s));

    const Run json = pando({u"--json"_s, u"connections"_s, u"branches"_s, u"gh"_s, u"https://github.com/acme/api"_s});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    const QJsonArray all = QJsonDocument::fromJson(json.out.toUtf8()).object().value(u"branches"_s).toArray();
    QCOMPARE(all.size(), 3);
    QCOMPARE(all.at(0).toObject().value(u"commit"_s).toString(), mainCommit);

    const Run noRepo = pando({u"connections"_s, u"branches"_s, u"gh"_s});
    QCOMPARE(noRepo.code, 2);
    QVERIFY2(noRepo.err.contains(u"missing"_s) && noRepo.err.contains(u"REPO"_s), qPrintable(noRepo.err));
}

void TestConnectionReposCli::registersTheWebhook()
{
    const QByteArray spec = "name: hooked\nsource:\n  repo: https://github.com/acme/web.git\n  ref: trunk\n"
                            "run:\n  port: 8080\n";
    const Run created = pando({u"apps"_s, u"create"_s, u"-f"_s, u"-"_s}, spec);
    QVERIFY2(created.code == 0, qPrintable(created.all()));
    const Run registered =
        pando({u"apps"_s, u"hook-register"_s, u"hooked"_s, u"--public-url"_s, u"https://pando.example.com"_s});
    QVERIFY2(registered.code == 0, qPrintable(registered.all()));
    QVERIFY2(registered.out.contains(u"https://pando.example.com/api/v1/hooks/hooked"_s), qPrintable(registered.out));
    const QJsonArray hooks = m_standIn->hooks(u"github"_s).value(u"acme/web"_s).toArray();
    QCOMPARE(hooks.size(), 1);
    QCOMPARE(hooks.first()[u"config"_s][u"url"_s].toString(), u"https://pando.example.com/api/v1/hooks/hooked"_s);
    // No secret is printed: the forge has it, and Pando.
    const QString secret = hooks.first()[u"config"_s][u"secret"_s].toString();
    QVERIFY(!secret.isEmpty() && !registered.out.contains(secret));
    // Without --public-url the address pando talks to is offered: this machine's loopback, which
    // no forge reaches.
    const Run loopback = pando({u"apps"_s, u"hook-register"_s, u"hooked"_s});
    QCOMPARE(loopback.code, 1);
    QVERIFY2(loopback.err.contains(u"cannot reach 127.0.0.1"_s) &&
                 loopback.err.contains(u"the address the forge reaches Pando at"_s),
             qPrintable(loopback.err));
}

void TestConnectionReposCli::refusals()
{
    // Another owner's repository: the connection (owner acme) does not cover it.
    const Run other = pando({u"connections"_s, u"branches"_s, u"gh"_s, u"https://github.com/evil/api.git"_s});
    QCOMPARE(other.code, 1);
    QVERIFY2(other.err.contains(u"does not cover"_s), qPrintable(other.err));

    // A member without a grant: no such connection.
    const Run member = pando({u"connections"_s, u"repos"_s, u"gh"_s}, {}, u"member"_s);
    QCOMPARE(member.code, 1);
    QVERIFY2(member.err.contains(u"no connection named gh"_s), qPrintable(member.err));

    // The forge refuses the token: said, and the token is nowhere.
    m_standIn->failFor(u"github"_s, u"*"_s, 401);
    const Run refused = pando({u"connections"_s, u"repos"_s, u"gh"_s});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.contains(u"refused the token"_s), qPrintable(refused.err));
    QVERIFY(!refused.err.contains(QString::fromLatin1(Token)) && !refused.out.contains(QString::fromLatin1(Token)));
    m_standIn->reset();
}

Run TestConnectionReposCli::authorizeInBrowser(const QStringList &args, QByteArray *callback, const QString &pathFirst)
{
    QProcess process;
    QProcessEnvironment env =
        test::cliEnvironment(m_install->baseUrl(), m_install->tokens.value(u"admin"_s), m_config.path());
    if (!pathFirst.isEmpty())
        env.insert(u"PATH"_s, pathFirst + u':' + env.value(u"PATH"_s));
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    QByteArray err;
    connect(&process, &QProcess::readyReadStandardError, this, [&] { err += process.readAllStandardError(); });
    process.start(m_binary, args);
    process.write(ClientSecret + "\n");
    process.closeWriteChannel();
    static const QRegularExpression page(u"(http://127\\.0\\.0\\.1:\\d+/github/login/oauth/authorize\\?\\S+)"_s);
    QRegularExpressionMatch match;
    const auto shown = [&] {
        match = page.match(QString::fromUtf8(err));
        return match.hasMatch() && err.contains("waiting for the forge");
    };
    // When the page never shows, the command's exit and output say why.
    if (QTest::qWaitFor([&] { return shown() || !finished.isEmpty(); }, 15000) && match.hasMatch()) {
        // The browser: the forge's page sends it back to the loopback address, which answers it.
        const QString back = test::ForgeStandIn::authorizationRedirect(match.captured(1));
        adapters::httpkit::Request request;
        request.timeoutMs = 10000;
        const auto answer = adapters::httpkit::perform({.baseUrl = back.toUtf8()}, request);
        *callback = answer.body;
    }
    if (finished.isEmpty() && !finished.wait(15000))
        process.kill(); // still waiting: Run's code -1 says so
    err += process.readAllStandardError();
    return Run{finished.isEmpty() ? -1 : process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
               QString::fromUtf8(err)};
}

void TestConnectionReposCli::oauthThroughTheBrowser()
{
    m_standIn->oauthApp(u"Iv1.cli"_s, ClientSecret, 3600);
    const QStringList add{u"connections"_s, u"add"_s,         u"gh-oauth"_s, u"--url"_s, u"https://github.com"_s,
                          u"--kind"_s,      u"github"_s,      u"--owner"_s,  u"acme"_s,  u"--oauth-client"_s,
                          u"Iv1.cli"_s,     u"--no-browser"_s};
    QByteArray page;
    const Run added = authorizeInBrowser(add, &page);
    QVERIFY2(added.code == 0, qPrintable(added.err));
    QVERIFY2(page.contains("Pando is authorized"), page.constData());
    QVERIFY2(added.out.contains(u"added connection gh-oauth (github at https://github.com, oauth)"_s),
             qPrintable(added.out));
    QVERIFY(!added.err.contains(QString::fromLatin1(ClientSecret)));
    const Run shown = pando({u"connections"_s, u"show"_s, u"gh-oauth"_s});
    QVERIFY2(shown.out.contains(u"Iv1.cli"_s) && shown.out.contains(u"oauth"_s), qPrintable(shown.out));
    QVERIFY(!shown.out.contains(QString::fromLatin1(ClientSecret)) && !shown.out.contains(QString::fromLatin1(Token)));
    // Its token reads the forge's API.
    const Run listed = pando({u"connections"_s, u"repos"_s, u"gh-oauth"_s});
    QVERIFY2(listed.code == 0 && listed.out.contains(u"acme/api"_s), qPrintable(listed.err + listed.out));

    // Authorized again; then the user chooses Deny: the command fails saying so.
    const Run again = authorizeInBrowser({u"connections"_s, u"authorize"_s, u"gh-oauth"_s, u"--no-browser"_s}, &page);
    QVERIFY2(again.code == 0 && again.out.contains(u"authorized connection gh-oauth"_s), qPrintable(again.all()));
    m_standIn->oauthApp(u"Iv1.cli"_s, ClientSecret, 3600, true);
    const Run denied = authorizeInBrowser({u"connections"_s, u"authorize"_s, u"gh-oauth"_s, u"--no-browser"_s}, &page);
    QCOMPARE(denied.code, 1);
    QVERIFY2(denied.err.contains(u"refused on the forge's page"_s), qPrintable(denied.err));
    QVERIFY2(page.contains("did not authorize"), page.constData());

    // Only OAuth connections are authorized; a forge without OAuth apps is refused at once.
    const Run token = pando({u"connections"_s, u"authorize"_s, u"gh"_s, u"--no-browser"_s});
    QCOMPARE(token.code, 1);
    QVERIFY2(token.err.contains(u"not an OAuth"_s), qPrintable(token.err));
    const Run azure = pando({u"connections"_s, u"add"_s, u"az"_s, u"--url"_s, u"https://dev.azure.com/acme"_s,
                             u"--kind"_s, u"azure-devops"_s, u"--oauth-client"_s, u"x"_s, u"--no-browser"_s},
                            ClientSecret + "\n");
    QCOMPARE(azure.code, 1);
    QVERIFY2(azure.err.contains(u"kind"_s), qPrintable(azure.err));
    QVERIFY(pando({u"connections"_s, u"rm"_s, u"gh-oauth"_s}).code == 0);
}

// Without --no-browser the command hands the forge's page to xdg-open (here one of the test's
// that writes down what it was given), says so, and still prints the address.
void TestConnectionReposCli::opensTheBrowser()
{
    m_standIn->oauthApp(u"Iv1.open"_s, ClientSecret, 3600);
    QByteArray page;
    const Run added =
        authorizeInBrowser({u"connections"_s, u"add"_s, u"gh-open"_s, u"--url"_s, u"https://github.com"_s, u"--kind"_s,
                            u"github"_s, u"--oauth-client"_s, u"Iv1.open"_s, u"--no-browser"_s},
                           &page);
    QVERIFY2(added.code == 0, qPrintable(added.all()));

    QTemporaryDir bin;
    QVERIFY(bin.isValid());
    QFile opener(bin.filePath(u"xdg-open"_s));
    QVERIFY(opener.open(QIODevice::WriteOnly));
    opener.write("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/opened.tmp\"\n"
                 "mv \"$(dirname \"$0\")/opened.tmp\" \"$(dirname \"$0\")/opened\"\n");
    opener.close();
    QVERIFY(opener.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    const Run opened = authorizeInBrowser({u"connections"_s, u"authorize"_s, u"gh-open"_s}, &page, bin.path());
    QVERIFY2(opened.code == 0 && opened.out.contains(u"authorized connection gh-open"_s), qPrintable(opened.all()));
    QVERIFY2(opened.err.contains(u"opened the forge's page in your browser"_s), qPrintable(opened.err));
    QVERIFY2(page.contains("Pando is authorized"), page.constData());
    // xdg-open was given the one address the command printed, and nothing else.
    QFile given(bin.filePath(u"opened"_s));
    QTRY_VERIFY(given.exists());
    QVERIFY(given.open(QIODevice::ReadOnly));
    const QList<QByteArray> words = given.readAll().trimmed().split('\n');
    QCOMPARE(words.size(), 1);
    QVERIFY2(words.first().startsWith("http://127.0.0.1:") && words.first().contains("/login/oauth/authorize?") &&
                 opened.err.contains(QString::fromUtf8(words.first())),
             words.first().constData());
    QVERIFY(!words.first().contains(ClientSecret));
    QVERIFY(pando({u"connections"_s, u"rm"_s, u"gh-open"_s}).code == 0);
}

QTEST_GUILESS_MAIN(TestConnectionReposCli)
#include "tst_connectionreposcli.moc"
