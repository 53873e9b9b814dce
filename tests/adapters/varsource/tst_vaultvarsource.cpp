// The vault var source against a stand-in that answers Vault's documented requests
// (tests/support/vaultstandin.h): where a var is looked for, KV versions 1 and 2, the `value`
// field, AppRole login, namespaces, and errors that say what Vault answered without a secret.

#include "adapters/varsource/vault/vaultvarsource.h"
#include "tests/support/vaultstandin.h"

#include <QJsonArray>
#include <QTcpServer>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

class TestVaultVarSource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void lookupFollowsConcoursesOrder()
    {
        const QStringList defaults{u"/{{.Team}}/{{.Pipeline}}/{{.Secret}}"_s, u"/{{.Team}}/{{.Secret}}"_s};
        QCOMPARE(
            vault::lookupPaths(u"/concourse"_s, defaults, {}, u"web"_s, u"db/creds"_s),
            (QStringList{u"/concourse/main/web/db/creds"_s, u"/concourse/main/db/creds"_s, u"/concourse/db/creds"_s}));
        // Without a pipeline the pipeline's template is skipped; a shared path comes before the root.
        QCOMPARE(vault::lookupPaths(u"/kv/ci/"_s, defaults, u"/shared/"_s, {}, u"token"_s),
                 (QStringList{u"/kv/ci/main/token"_s, u"/kv/ci/shared/token"_s, u"/kv/ci/token"_s}));
        QCOMPARE(vault::lookupPaths(u"/secret"_s, {u"/ci/{{.Pipeline}}/{{.Secret}}"_s}, {}, u"p"_s, u"k"_s),
                 (QStringList{u"/secret/ci/p/k"_s, u"/secret/k"_s}));
    }

    void readsVersionTwoWithAToken()
    {
        test::VaultStandIn vault;
        vault.setRootToken(u"root-t0ken-abc"_s);
        vault.mount(u"secret/"_s, 2);
        vault.put(u"secret/ci/main/db"_s, QJsonObject{{u"password"_s, u"pa55"_s}, {u"user"_s, u"app"_s}});
        vault.put(u"secret/ci/main/web/greeting"_s, QJsonObject{{u"value"_s, u"hello"_s}});
        auto source = vault::openVaultSource(QJsonObject{{u"url"_s, vault.url()},
                                                         {u"path_prefix"_s, u"/secret/ci"_s},
                                                         {u"client_token"_s, u"root-t0ken-abc"_s}},
                                             u"web"_s);
        QVERIFY2(source, qPrintable(source ? QString() : source.error().text()));
        CancelToken cancel;
        // A secret with a `value` field is that value; the pipeline's own path is looked at first.
        auto greeting = (*source)->read(u"greeting"_s, cancel);
        QVERIFY2(greeting, qPrintable(greeting ? QString() : greeting.error().text()));
        QCOMPARE(greeting->value_or(QJsonValue()).toString(), u"hello"_s);
        // Without one it is all the fields; found under the team's path after the pipeline's.
        auto db = (*source)->read(u"db"_s, cancel);
        QVERIFY(db && *db);
        QCOMPARE((*db)->toObject().value(u"password"_s).toString(), u"pa55"_s);
        const QStringList asked = vault.requests();
        QVERIFY2(asked.contains(u"GET /v1/secret/data/ci/main/web/db"_s), qPrintable(asked.join(u'\n')));
        QVERIFY2(asked.contains(u"GET /v1/secret/data/ci/main/db"_s), qPrintable(asked.join(u'\n')));
        // The mount is asked about once.
        QCOMPARE(asked.filter(u"sys/internal/ui/mounts"_s).size(), 1);
        // Not there at all: no value, no error.
        auto missing = (*source)->read(u"nothing/here"_s, cancel);
        QVERIFY(missing);
        QVERIFY(!*missing);
        // A path may not climb out of where the source looks.
        QVERIFY(!(*source)->read(u"../../sys/seal"_s, cancel));
    }

    void readsVersionOneAfterAnAppRoleLoginInANamespace()
    {
        test::VaultStandIn vault;
        vault.addAppRole(u"role-1"_s, u"s3cret-id-xyz"_s);
        vault.setNamespace(u"platform"_s);
        vault.mount(u"kv/"_s, 1);
        vault.put(u"kv/team/aws"_s, QJsonObject{{u"key_id"_s, u"AKIA1"_s}});
        const QJsonObject config{
            {u"url"_s, vault.url()},
            {u"path_prefix"_s, u"/kv"_s},
            {u"lookup_templates"_s, QJsonArray{u"/team/{{.Secret}}"_s}},
            {u"namespace"_s, u"platform"_s},
            {u"auth_backend"_s, u"approle"_s},
            {u"auth_params"_s, QJsonObject{{u"role_id"_s, u"role-1"_s}, {u"secret_id"_s, u"s3cret-id-xyz"_s}}}};
        auto source = vault::openVaultSource(config, {});
        QVERIFY(source);
        CancelToken cancel;
        auto aws = (*source)->read(u"aws"_s, cancel);
        QVERIFY2(aws, qPrintable(aws ? QString() : aws.error().text()));
        QVERIFY(*aws);
        QCOMPARE((*aws)->toObject().value(u"key_id"_s).toString(), u"AKIA1"_s);
        QCOMPARE(vault.requests().first(), u"POST /v1/auth/approle/login"_s);
        QVERIFY(vault.requests().contains(u"GET /v1/kv/team/aws"_s));

        // A wrong secret id: the login fails with Vault's words, and the id is nowhere in them.
        QJsonObject wrong = config;
        wrong.insert(u"auth_params"_s, QJsonObject{{u"role_id"_s, u"role-1"_s}, {u"secret_id"_s, u"wrong-id-999"_s}});
        auto refused = (*vault::openVaultSource(wrong, {}))->read(u"aws"_s, cancel);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(u"invalid role or secret ID"_s), qPrintable(refused.error().text()));
        QVERIFY(!refused.error().text().contains(u"wrong-id-999"_s));
        // The wrong namespace is a refusal with a hint, not "not found".
        QJsonObject elsewhere = config;
        elsewhere.insert(u"namespace"_s, u"other"_s);
        auto denied = (*vault::openVaultSource(elsewhere, {}))->read(u"aws"_s, cancel);
        QVERIFY(!denied);
        QVERIFY2(denied.error().message.contains(u"HTTP 403"_s), qPrintable(denied.error().text()));
    }

    void aBadTokenIsRefusedWithoutShowingIt()
    {
        test::VaultStandIn vault;
        vault.setRootToken(u"the-right-one"_s);
        vault.mount(u"secret/"_s, 2);
        auto source = vault::openVaultSource(
            QJsonObject{{u"url"_s, vault.url()}, {u"client_token"_s, u"a-wrong-t0ken"_s}}, u"p"_s);
        QVERIFY(source);
        auto read = (*source)->read(u"x"_s, CancelToken{});
        QVERIFY(!read);
        QCOMPARE(read.error().code, ErrorCode::Forbidden);
        QVERIFY2(read.error().hint.contains(u"policy"_s), qPrintable(read.error().hint));
        QVERIFY(!read.error().text().contains(u"a-wrong-t0ken"_s));
    }

    void unreachableAndLinkLocalServersFailClearly()
    {
        QTcpServer closed;
        QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
        const quint16 port = closed.serverPort();
        closed.close();
        auto source = vault::openVaultSource(
            QJsonObject{{u"url"_s, u"http://127.0.0.1:%1"_s.arg(port)}, {u"client_token"_s, u"t"_s}}, {});
        QVERIFY(source);
        auto read = (*source)->read(u"x"_s, CancelToken{});
        QVERIFY(!read);
        QCOMPARE(read.error().code, ErrorCode::Unavailable);
        QVERIFY2(read.error().hint.contains(u"url"_s), qPrintable(read.error().hint));
        // Where clouds serve instance credentials is never asked.
        auto metadata = vault::openVaultSource(
            QJsonObject{{u"url"_s, u"http://169.254.169.254"_s}, {u"client_token"_s, u"t"_s}}, {});
        QVERIFY(metadata);
        QVERIFY(!(*metadata)->read(u"x"_s, CancelToken{}));
        // A config that cannot work is an error when the source is opened.
        QVERIFY(!vault::openVaultSource(QJsonObject{{u"url"_s, u"ftp://vault"_s}, {u"client_token"_s, u"t"_s}}, {}));
        QVERIFY(!vault::openVaultSource(QJsonObject{{u"url"_s, u"https://vault"_s}}, {}));
        const auto slow = vault::openVaultSource(
            QJsonObject{{u"url"_s, u"https://vault"_s}, {u"client_token"_s, u"t"_s}, {u"query_timeout"_s, u"2h"_s}},
            {});
        QVERIFY(!slow);
        QCOMPARE(slow.error().where, u"query_timeout"_s);
    }
};

QTEST_GUILESS_MAIN(TestVaultVarSource)
#include "tst_vaultvarsource.moc"
