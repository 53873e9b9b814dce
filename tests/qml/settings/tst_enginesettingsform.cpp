// EngineSettingsForm: the Settings view's engine settings are checked as pandod checks its flags,
// a wrong one is named and nothing is kept, a good save is kept and says a restart applies it;
// and this computer's engine, started with an approval policy it cannot read, does not start.

#include "app/desktop/session/inprocesssession.h"
#include "app/wiring/install.h"
#include "qml/settings/enginesettingsform.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestEngineSettingsForm : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString write(const QString &name, const QByteArray &text)
    {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    // A Cloudflare API token in a file only its owner may read.
    QString tokenFile()
    {
        const QString path = write(u"cloudflare.token"_s, "Zx9_token-for-tests_0123456789abcdefghij\n");
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
        return path;
    }

private Q_SLOTS:
    void wrongValuesAreNamedAndNothingIsKept_data()
    {
        QTest::addColumn<QStringList>("values"); // app limit, max runs, policy, ttl, sinks, edge
        QTest::addColumn<QString>("setting");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QVariantMap>("edgeOptions");
        const QString typo = write(u"typo.json"_s, R"({"apps": ["x"], "chnages": {}})");
        QTest::newRow("app limit") << QStringList{u"-3"_s, {}, {}, {}, {}, {}} << u"app-limit"_s << u"0 to 100000"_s
                                   << QVariantMap{};
        QTest::newRow("max runs") << QStringList{{}, u"many"_s, {}, {}, {}, {}} << u"max-runs"_s << u"1 to 256"_s
                                  << QVariantMap{};
        QTest::newRow("policy typo") << QStringList{{}, {}, typo, {}, {}, {}} << u"approval-policy"_s
                                     << u"unknown key"_s << QVariantMap{};
        QTest::newRow("ttl") << QStringList{{}, {}, {}, u"30s"_s, {}, {}} << u"approval-ttl"_s << u"at least a minute"_s
                             << QVariantMap{};
        QTest::newRow("sinks missing") << QStringList{{}, {}, {}, {}, m_dir.filePath(u"none.json"_s), {}}
                                       << u"audit-sinks"_s << u"cannot read"_s << QVariantMap{};
        QTest::newRow("sinks kind")
            << QStringList{{}, {}, {}, {}, write(u"sinks.json"_s, R"({"sinks": [{"kind": "ftp"}]})"), {}}
            << u"audit-sinks"_s << u"\"syslog\" or \"https\""_s << QVariantMap{};
        QTest::newRow("edge") << QStringList{{}, {}, {}, {}, {}, u"nginx"_s} << u"edge"_s
                              << u"expected auto, caddy, in-process, traefik or cloudflare, got \"nginx\""_s
                              << QVariantMap{};
        // The chosen edge's own settings, checked as pandod checks its --traefik-* and
        // --cloudflare-* flags.
        const QStringList traefik{{}, {}, {}, {}, {}, u"traefik"_s};
        QTest::newRow("traefik without its directory")
            << traefik << u"traefik-dir"_s << u"needs the directory"_s << QVariantMap{};
        QTest::newRow("traefik resolver")
            << traefik << u"traefik-resolver"_s << u"certificatesResolvers name"_s
            << QVariantMap{{u"traefik-dir"_s, m_dir.path()}, {u"traefik-resolver"_s, u"le prod"_s}};
        const QStringList cloudflare{{}, {}, {}, {}, {}, u"cloudflare"_s};
        const QVariantMap ids{{u"cloudflare-account"_s, u"0123456789abcdef0123456789abcdef"_s},
                              {u"cloudflare-tunnel"_s, u"c1744f8b-faa1-48a4-9e5c-02ac921467fa"_s},
                              {u"cloudflare-zone"_s, u"fedcba9876543210fedcba9876543210"_s}};
        QVariantMap badAccount = ids;
        badAccount[u"cloudflare-account"_s] = u"12345"_s;
        badAccount[u"cloudflare-token-file"_s] = tokenFile();
        QTest::newRow("cloudflare account")
            << cloudflare << u"cloudflare-account"_s << u"32 lower-case hex"_s << badAccount;
        QTest::newRow("cloudflare without a token")
            << cloudflare << u"cloudflare-token-file"_s << u"needs an API token"_s << ids;
        QVariantMap noTunnel = ids;
        noTunnel.remove(u"cloudflare-tunnel"_s);
        QTest::newRow("cloudflare without a tunnel")
            << cloudflare << u"cloudflare-tunnel"_s << u"needs the tunnel's id"_s << noTunnel;
    }
    void wrongValuesAreNamedAndNothingIsKept()
    {
        QFETCH(QStringList, values);
        QFETCH(QString, setting);
        QFETCH(QString, message);
        QFETCH(QVariantMap, edgeOptions);
        QSettings settings(m_dir.filePath(u"wrong.ini"_s), QSettings::IniFormat);
        settings.setValue(u"engine/app-limit"_s, u"7"_s);
        EngineSettingsForm form(&settings, true);
        QCOMPARE(form.appLimit(), u"7"_s);
        QVERIFY(!form.save(values[0], values[1], values[2], values[3], values[4], values[5], edgeOptions));
        QCOMPARE(form.errorSetting(), setting);
        QVERIFY2(form.error().contains(message), qPrintable(form.error()));
        QCOMPARE(settings.value(u"engine/app-limit"_s).toString(), u"7"_s);
        QCOMPARE(EngineSettingsForm::stored(settings).appLimit, u"7"_s);
        QVERIFY(!form.isRestartNeeded());
    }

    void goodValuesAreKeptAndNeedARestart()
    {
        const QString policy = write(u"policy.json"_s, R"({"apps": ["billing-*"]})");
        QSettings settings(m_dir.filePath(u"good.ini"_s), QSettings::IniFormat);
        EngineSettingsForm form(&settings, true);
        QSignalSpy changed(&form, &EngineSettingsForm::savedChanged);
        QVERIFY(form.save(u" 25 "_s, u"2"_s, policy, u"12h"_s, {}, u"in-process"_s));
        QCOMPARE(changed.size(), 1);
        QCOMPARE(form.error(), QString());
        QVERIFY(form.isRestartNeeded());
        const wiring::EngineSettings kept = EngineSettingsForm::stored(settings);
        QCOMPARE(kept.appLimit, u"25"_s);
        QCOMPARE(kept.maxRuns, u"2"_s);
        QCOMPARE(kept.approvalPolicy, policy);
        QCOMPARE(kept.approvalTtl, u"12h"_s);
        QCOMPARE(kept.edge, u"in-process"_s);
        QVERIFY(!settings.contains(u"engine/audit-sinks"_s));

        // What the engine reads at its next start: the same choices pandod's flags would make.
        auto chosen = wiring::checkEngineSettings(kept);
        QVERIFY2(chosen, qPrintable(chosen ? QString() : chosen.error().text()));
        desktop::InProcessOptions options;
        chosen->applyTo(options);
        QCOMPARE(options.appLimit, 25);
        QCOMPARE(options.maxRuns, 2);
        QCOMPARE(options.engine.approvalPolicy.appGlobs, QStringList{u"billing-*"_s});
        QCOMPARE(options.engine.approvalTtlMs, 12LL * 3600 * 1000);
        QCOMPARE(options.edge, wiring::EdgeChoice::InProcess);

        // Cleared again: the defaults, and nothing to restart for.
        QVERIFY(form.save({}, {}, {}, {}, {}, {}));
        QVERIFY(!form.isRestartNeeded());
        QVERIFY(settings.childKeys().isEmpty() && settings.childGroups().isEmpty());
    }

    // The Cloudflare and Traefik edges can be chosen here too: their settings are kept with the
    // rest, and the engine gets the router options pandod's flags would give it.
    void anEdgesOwnSettingsReachTheInstall()
    {
        QSettings settings(m_dir.filePath(u"edges.ini"_s), QSettings::IniFormat);
        EngineSettingsForm form(&settings, true);
        const QVariantMap cloudflare{{u"cloudflare-account"_s, u"0123456789abcdef0123456789abcdef"_s},
                                     {u"cloudflare-tunnel"_s, u"c1744f8b-faa1-48a4-9e5c-02ac921467fa"_s},
                                     {u"cloudflare-zone"_s, u"fedcba9876543210fedcba9876543210"_s},
                                     {u"cloudflare-token-file"_s, tokenFile()},
                                     {u"cloudflare-api"_s, u"http://127.0.0.1:9/client/v4"_s},
                                     {u"traefik-dir"_s, u" kept for later "_s}};
        QVERIFY2(form.save({}, {}, {}, {}, {}, u"cloudflare"_s, cloudflare), qPrintable(form.error()));
        QCOMPARE(form.edgeOptions().value(u"cloudflare-zone"_s).toString(), u"fedcba9876543210fedcba9876543210"_s);
        QCOMPARE(settings.value(u"engine/traefik-dir"_s).toString(), u"kept for later"_s);
        // The token stays in its file: the settings name the file only.
        for (const QString &key : settings.allKeys())
            QVERIFY2(!settings.value(key).toString().contains(u"Zx9_token"_s), qPrintable(key));

        auto chosen = wiring::checkEngineSettings(EngineSettingsForm::stored(settings));
        QVERIFY2(chosen, qPrintable(chosen ? QString() : chosen.error().text()));
        wiring::InstallOptions install;
        chosen->applyTo(install);
        QCOMPARE(install.edge, wiring::EdgeChoice::Cloudflare);
        QCOMPARE(install.cloudflare.accountId, u"0123456789abcdef0123456789abcdef"_s);
        QCOMPARE(install.cloudflare.tunnelId, u"c1744f8b-faa1-48a4-9e5c-02ac921467fa"_s);
        QCOMPARE(install.cloudflare.apiBase, u"http://127.0.0.1:9/client/v4"_s);
        QCOMPARE(install.cloudflare.apiTokenFile, m_dir.filePath(u"cloudflare.token"_s));

        QVERIFY2(form.save({}, {}, {}, {}, {}, u"traefik"_s,
                           {{u"traefik-dir"_s, m_dir.path()}, {u"traefik-resolver"_s, u"letsencrypt"_s}}),
                 qPrintable(form.error()));
        chosen = wiring::checkEngineSettings(EngineSettingsForm::stored(settings));
        QVERIFY2(chosen, qPrintable(chosen ? QString() : chosen.error().text()));
        install = {};
        chosen->applyTo(install);
        QCOMPARE(install.edge, wiring::EdgeChoice::Traefik);
        QCOMPARE(install.traefik.configDir, m_dir.path());
        QCOMPARE(install.traefik.certResolver, u"letsencrypt"_s);
        QVERIFY(!settings.contains(u"engine/cloudflare-account"_s));
    }

    // A policy the engine cannot read stops its start, as it stops pandod's: no engine that lets
    // every deploy through because its file went missing.
    void unreadablePolicyStopsTheEngine()
    {
        desktop::InProcessOptions options;
        options.engine.dataDir = m_dir.filePath(u"data"_s);
        options.engine.reconcileIntervalMs = 0;
        options.engine.healthTickMs = 0;
        options.engine.workers = 1;
        options.userName = u"owner"_s;
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = std::make_shared<test::FakeRouter>();
        options.source = std::make_shared<test::FakeSource>();
        options.services = std::make_shared<test::FakeServiceProvisioner>();
        options.settings.approvalPolicy = m_dir.filePath(u"gone.json"_s);
        InProcessSession session(options);
        session.open();
        QString why;
        QVERIFY(!test::awaitConnected(session, &why));
        QTRY_COMPARE(session.state(), Session::State::Failed);
        QVERIFY2(session.failure().where.startsWith(u"approval-policy"_s), qPrintable(session.failure().text()));
        QVERIFY2(session.failure().hint.contains(u"Settings"_s), qPrintable(session.failure().text()));
    }
};

QTEST_GUILESS_MAIN(TestEngineSettingsForm)
#include "tst_enginesettingsform.moc"
