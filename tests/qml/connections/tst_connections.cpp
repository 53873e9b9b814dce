// The Connections and Settings view models against a real API server over TLS (fake adapters):
// pairing links read part by part; ConnectionsModel pairing with a link (the code redeemed over
// TLS with the link's certificate pin, the token kept in a 0600 file, never in QSettings), a
// wrong fingerprint refused naming both, reload and remove, pairing again replacing the token; the
// token's expiry kept (and unknown for installs saved before it was), and the three texts a row
// shows about it against a set clock; RemoteSession's pinning; the
// ConnectedModel listing a teammate's TLS stream; and EmbeddedServer serving this computer's
// engine (an InProcessSession) to a teammate who pairs through its link and then stops.

#include "app/client/apiclient.h"
#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "app/server/tlsidentity.h"
#include "core/accounts/accountservice.h"
#include "core/accounts/pairingbook.h"
#include "qml/connections/connectionsmodel.h"
#include "qml/connections/pairinglink.h"
#include "qml/settings/connectedmodel.h"
#include "qml/settings/embeddedserver.h"
#include "qml/states/displaystate.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/app/server/pipelinefakes.h"

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QFile>
#include <QGuiApplication>
#include <QLocale>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTranslator>
#include <QUrlQuery>
#include <QWebSocket>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestConnections : public QObject {
    Q_OBJECT

    QTemporaryDir m_tlsDir;
    QTemporaryDir m_home;
    server::TlsIdentity m_identity;
    test::TestInstall m_install;
    quint16 m_tlsPort = 0;
    QTranslator m_english; // the plural forms, as pando-desktop loads them

    QString linkFor(const QString &user, const QString &fingerprint = {})
    {
        auto code = m_install.engine->accounts()->pairings().create(user, core::Actor::system(u"test"_s));
        if (!code)
            return {};
        return u"pando://127.0.0.1:%1/pair?fp=%2&token=%3"_s.arg(m_tlsPort).arg(
            fingerprint.isEmpty() ? m_identity.fingerprint : fingerprint, code->secret);
    }

    static constexpr qint64 DayMs = 24LL * 60 * 60 * 1000;
    static constexpr qint64 HourMs = 60LL * 60 * 1000;
    // Noon local time, so the date the row names is the same in every time zone.
    static qint64 expiryNoon() { return QDateTime(QDate(2027, 3, 3), QTime(12, 0)).toMSecsSinceEpoch(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_english.load(u":/i18n/pando_en.qm"_s));
        QCoreApplication::installTranslator(&m_english);
        auto identity = server::loadOrCreateTlsIdentity(m_tlsDir.path(), {});
        QVERIFY2(identity, qPrintable(identity ? QString() : identity.error().text()));
        m_identity = *identity;
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        auto port = m_install.server->listenTls(QHostAddress::LocalHost, 0, m_identity.certificate, m_identity.key);
        QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
        m_tlsPort = *port;
    }

    void pairingLinks_data()
    {
        QTest::addColumn<QString>("link");
        QTest::addColumn<QString>("where"); // "" when the link is good
        const QString fp = QString(64, u'a');
        QTest::newRow("good") << u"pando://pando.lan:7443/pair?fp=%1&token=pandopair_x"_s.arg(fp) << QString();
        QTest::newRow("colons in fp")
            << u"pando://10.0.0.2:7443/pair?fp=%1&token=pandopair_x"_s.arg(
                   QString(fp).replace(QRegularExpression(u"(..)(?!$)"_s), u"\\1:"_s).toUpper())
            << QString();
        QTest::newRow("empty") << u"  "_s << u"link"_s;
        QTest::newRow("https") << u"https://pando.lan:7443/pair?fp=%1&token=pandopair_x"_s.arg(fp) << u"scheme"_s;
        QTest::newRow("no scheme") << u"pando.lan:7443/pair"_s << u"scheme"_s;
        QTest::newRow("no host") << u"pando:///pair?fp=%1&token=pandopair_x"_s.arg(fp) << u"host"_s;
        QTest::newRow("no port") << u"pando://pando.lan/pair?fp=%1&token=pandopair_x"_s.arg(fp) << u"port"_s;
        QTest::newRow("path") << u"pando://pando.lan:7443/join?fp=%1&token=pandopair_x"_s.arg(fp) << u"path"_s;
        QTest::newRow("no fp") << u"pando://pando.lan:7443/pair?token=pandopair_x"_s << u"fp"_s;
        QTest::newRow("short fp") << u"pando://pando.lan:7443/pair?fp=abcd&token=pandopair_x"_s << u"fp"_s;
        QTest::newRow("fp not hex") << u"pando://pando.lan:7443/pair?fp=%1&token=pandopair_x"_s.arg(QString(64, u'g'))
                                    << u"fp"_s;
        QTest::newRow("no token") << u"pando://pando.lan:7443/pair?fp=%1"_s.arg(fp) << u"token"_s;
        QTest::newRow("foreign token") << u"pando://pando.lan:7443/pair?fp=%1&token=pando_x"_s.arg(fp) << u"token"_s;
    }

    void pairingLinks()
    {
        QFETCH(QString, link);
        QFETCH(QString, where);
        const auto parsed = parsePairingLink(link);
        if (where.isEmpty()) {
            QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
            QCOMPARE(parsed->fingerprint, QString(64, u'a'));
            QCOMPARE(parsed->port, 7443);
            QCOMPARE(parsed->token, u"pandopair_x"_s);
            QCOMPARE(parsed->baseUrl().scheme(), u"https"_s);
            return;
        }
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().where, where);
        QVERIFY(!parsed.error().message.isEmpty());
        QVERIFY(!parsed.error().hint.isEmpty());
    }

    void fingerprintArt()
    {
        const QString art = desktop::fingerprintArt(m_identity.fingerprint);
        const QStringList lines = art.split(u'\n');
        QCOMPARE(lines.size(), 11);
        for (const QString &line : lines)
            QCOMPARE(line.size(), 19);
        QVERIFY(art.contains(u'S'));
        QCOMPARE(art, desktop::fingerprintArt(m_identity.fingerprint));
        QVERIFY(art != desktop::fingerprintArt(QString(64, u'0')));
        QVERIFY(desktop::fingerprintArt({}).isEmpty());
    }

    void remoteSessionPinsTheCertificate()
    {
        RemoteSession pinned(QUrl(u"https://127.0.0.1:%1"_s.arg(m_tlsPort)), m_install.token);
        pinned.setPinnedFingerprint(m_identity.fingerprint);
        pinned.open();
        QString why;
        QVERIFY2(test::awaitConnected(pinned, &why, 20000), qPrintable(why));
        auto apps = test::awaitList([&](Session::ListCallback done) { pinned.apps(std::move(done)); });
        QVERIFY2(apps, qPrintable(apps ? QString() : apps.error().text()));

        const QString wrong = QString(64, u'c');
        RemoteSession other(QUrl(u"https://127.0.0.1:%1"_s.arg(m_tlsPort)), m_install.token);
        other.setPinnedFingerprint(wrong);
        other.open();
        QTRY_COMPARE_WITH_TIMEOUT(other.state(), Session::State::Failed, 20000);
        QVERIFY2(other.failure().message.contains(wrong) && other.failure().message.contains(m_identity.fingerprint),
                 qPrintable(other.failure().text()));
    }

    void connectionsModelPairsKeepsAndForgets()
    {
        QSettings settings(m_home.filePath(u"settings.ini"_s), QSettings::IniFormat);
        const QString tokenDir = m_home.filePath(u"tokens"_s);
        ConnectionsModel model(&settings, tokenDir);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0).data(ConnectionsModel::LocalRole).toBool(), true);
        QCOMPARE(model.index(0).data(ConnectionsModel::CurrentRole).toBool(), true);

        // A link with a part wrong says which, before anything goes out.
        model.addFromLink(u"pando://127.0.0.1/pair"_s);
        QVERIFY2(model.error().contains(u"port"_s), qPrintable(model.error()));
        QVERIFY(!model.isBusy());

        // A wrong fingerprint: refused, both fingerprints named, the code not spent.
        const QString wrong = QString(64, u'd');
        const QString wrongLink = linkFor(u"member"_s, wrong);
        model.addFromLink(wrongLink);
        QVERIFY(model.isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!model.isBusy(), 20000);
        QVERIFY2(model.error().contains(wrong) && model.error().contains(m_identity.fingerprint),
                 qPrintable(model.error()));
        QCOMPARE(model.rowCount(), 1);

        QSignalSpy added(&model, &ConnectionsModel::added);
        model.addFromLink(linkFor(u"member"_s), u"Team box"_s);
        QTRY_COMPARE_WITH_TIMEOUT(added.size(), 1, 20000);
        QCOMPARE(model.error(), QString());
        QCOMPARE(model.rowCount(), 2);
        const QModelIndex row = model.index(1);
        QCOMPARE(row.data(ConnectionsModel::NameRole).toString(), u"Team box"_s);
        QCOMPARE(row.data(ConnectionsModel::AddressRole).toString(), u"127.0.0.1:%1"_s.arg(m_tlsPort));
        QCOMPARE(row.data(ConnectionsModel::FingerprintRole).toString(), m_identity.fingerprint);
        QCOMPARE(row.data(ConnectionsModel::AccountRole).toString(), u"member"_s);
        QCOMPARE(row.data(ConnectionsModel::LocalRole).toBool(), false);
        QVERIFY(!row.data(ConnectionsModel::FingerprintArtRole).toString().isEmpty());

        // The token: in a 0600 file, not in the settings; and it works, pinned.
        const auto install = model.installAt(1);
        QVERIFY(install);
        const QString token = model.tokenAt(1);
        QVERIFY(token.startsWith(u"pando_"_s));
        const QString tokenFile = QDir(tokenDir).filePath(install->id + u".token"_s);
        QCOMPARE(QFile::permissions(tokenFile),
                 QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser);
        settings.sync();
        QFile ini(settings.fileName());
        QVERIFY(ini.open(QIODevice::ReadOnly));
        const QByteArray stored = ini.readAll();
        QVERIFY(stored.contains(m_identity.fingerprint.toLatin1()));
        QVERIFY2(!stored.contains(token.toLatin1()), "the token was written into QSettings");
        RemoteSession paired(install->url, token);
        paired.setPinnedFingerprint(install->fingerprint);
        paired.open();
        QString why;
        QVERIFY2(test::awaitConnected(paired, &why, 20000), qPrintable(why));

        // Switching asks the window; the row it marks current follows.
        QSignalSpy switching(&model, &ConnectionsModel::switchRequested);
        model.activate(1);
        QCOMPARE(switching.size(), 1);
        QCOMPARE(switching.first().first().toInt(), 1);
        model.setCurrentRow(1);
        QCOMPARE(model.index(1).data(ConnectionsModel::CurrentRole).toBool(), true);
        QCOMPARE(model.index(0).data(ConnectionsModel::CurrentRole).toBool(), false);

        // Kept across starts.
        {
            ConnectionsModel again(&settings, tokenDir);
            QCOMPARE(again.rowCount(), 2);
            QCOMPARE(again.index(1).data(ConnectionsModel::NameRole).toString(), u"Team box"_s);
            QCOMPARE(again.tokenAt(1), token);
        }

        // Removing the one shown goes back to this computer and deletes the token file.
        model.remove(1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.currentRow(), 0);
        QCOMPARE(switching.last().first().toInt(), 0);
        QVERIFY(!QFile::exists(tokenFile));
        ConnectionsModel after(&settings, tokenDir);
        QCOMPARE(after.rowCount(), 1);
    }

    void pairingAgainReplacesTheToken()
    {
        QSettings settings(m_home.filePath(u"again.ini"_s), QSettings::IniFormat);
        const QString tokenDir = m_home.filePath(u"again-tokens"_s);
        ConnectionsModel model(&settings, tokenDir);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy added(&model, &ConnectionsModel::added);
        const qint64 before = QDateTime::currentMSecsSinceEpoch();
        model.addFromLink(linkFor(u"member"_s), u"Team box"_s);
        QTRY_COMPARE_WITH_TIMEOUT(added.size(), 1, 20000);
        QCOMPARE(model.error(), QString());
        const auto first = model.installAt(1);
        QVERIFY(first);
        const QString firstToken = model.tokenAt(1);

        // The token's expiry comes with it: 90 days from the pairing, and said so in the row.
        const qint64 expires = model.index(1).data(ConnectionsModel::ExpiresMsRole).toLongLong();
        QVERIFY2(expires >= before + 90 * DayMs && expires <= QDateTime::currentMSecsSinceEpoch() + 90 * DayMs,
                 qPrintable(QString::number(expires - before)));
        QCOMPARE(first->expiresMs, expires);
        QVERIFY2(model.index(1).data(ConnectionsModel::AccessTextRole).toString().startsWith(u"access until "_s),
                 qPrintable(model.index(1).data(ConnectionsModel::AccessTextRole).toString()));
        QCOMPARE(model.index(1).data(ConnectionsModel::AccessStateRole).toInt(), int(DisplayState::Healthy));

        // The window shows it; pairing again (no name typed) replaces its token in the same row.
        model.setCurrentRow(1);
        QSignalSpy switching(&model, &ConnectionsModel::switchRequested);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.addFromLink(linkFor(u"member"_s));
        QTRY_COMPARE_WITH_TIMEOUT(added.size(), 2, 20000);
        QCOMPARE(model.error(), QString());
        QCOMPARE(added.last().first().toInt(), 1);
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.currentRow(), 1);
        const auto second = model.installAt(1);
        QVERIFY(second);
        QCOMPARE(second->name, u"Team box"_s);
        QCOMPARE(second->url, first->url);
        QVERIFY(second->expiresMs >= first->expiresMs);
        const QString secondToken = model.tokenAt(1);
        QVERIFY(secondToken.startsWith(u"pando_"_s));
        QVERIFY(secondToken != firstToken);
        QVERIFY(!QFile::exists(QDir(tokenDir).filePath(first->id + u".token"_s)));
        // ... and the window reconnects with the new token.
        QCOMPARE(switching.size(), 1);
        QCOMPARE(switching.first().first().toInt(), 1);

        // One entry across starts, with the new token.
        ConnectionsModel again(&settings, tokenDir);
        QCOMPARE(again.rowCount(), 2);
        QCOMPARE(again.tokenAt(1), secondToken);
        QCOMPARE(again.installAt(1)->expiresMs, second->expiresMs);
        settings.beginGroup(u"connections"_s);
        QCOMPARE(settings.childGroups(), QStringList{second->id});
        settings.endGroup();

        // A new name given when pairing again renames it.
        model.addFromLink(linkFor(u"member"_s), u"Build box"_s);
        QTRY_COMPARE_WITH_TIMEOUT(added.size(), 3, 20000);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(1).data(ConnectionsModel::NameRole).toString(), u"Build box"_s);
    }

    void storeKeepsTheExpiry()
    {
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"settings.ini"_s), QSettings::IniFormat);
        ConnectionStore store(settings, dir.filePath(u"tokens"_s));
        const qint64 expires = expiryNoon();
        auto saved = store.add(
            RemoteInstall{
                {}, u"Team box"_s, QUrl(u"https://pando.lan:7443"_s), QString(64, u'a'), u"member"_s, expires},
            u"pando_new"_s);
        QVERIFY2(saved, qPrintable(saved ? QString() : saved.error().text()));
        QCOMPARE(saved->expiresMs, expires);

        // An install saved before the desktop kept the expiry: no expiresMs in its group.
        settings.beginGroup(u"connections/r00000000000000ff"_s);
        settings.setValue(u"name"_s, u"Old box"_s);
        settings.setValue(u"url"_s, QUrl(u"https://old.lan:7443"_s));
        settings.setValue(u"fingerprint"_s, QString(64, u'b'));
        settings.setValue(u"user"_s, u"member"_s);
        settings.setValue(u"added"_s, QDateTime::currentMSecsSinceEpoch() + 1000);
        settings.endGroup();
        settings.sync();

        const QList<RemoteInstall> read = ConnectionStore(settings, dir.filePath(u"tokens"_s)).installs();
        QCOMPARE(read.size(), 2);
        QCOMPARE(read.at(0).name, u"Team box"_s);
        QCOMPARE(read.at(0).expiresMs, expires);
        QCOMPARE(read.at(1).name, u"Old box"_s);
        QCOMPARE(read.at(1).expiresMs, qint64(0));

        // The model: the old one is not known, never "expired"; this computer has no expiry.
        ConnectionsModel model(&settings, dir.filePath(u"tokens"_s));
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setClock([expires] { return expires + 365 * DayMs; });
        QCOMPARE(model.index(1).data(ConnectionsModel::ExpiresMsRole).toLongLong(), expires);
        QCOMPARE(model.index(1).data(ConnectionsModel::AccessStateRole).toInt(), int(DisplayState::Failed));
        QCOMPARE(model.index(2).data(ConnectionsModel::ExpiresMsRole).toLongLong(), qint64(0));
        QCOMPARE(model.index(2).data(ConnectionsModel::AccessTextRole).toString(), QString());
        QCOMPARE(model.index(2).data(ConnectionsModel::AccessStateRole).toInt(), int(DisplayState::Neutral));
        QCOMPARE(model.index(0).data(ConnectionsModel::ExpiresMsRole).toLongLong(), qint64(0));
        QCOMPARE(model.index(0).data(ConnectionsModel::AccessTextRole).toString(), QString());
        QCOMPARE(model.index(0).data(ConnectionsModel::AccessStateRole).toInt(), int(DisplayState::Neutral));
    }

    void storeKeepsTheOrderTheyWereAddedIn()
    {
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"settings.ini"_s), QSettings::IniFormat);
        ConnectionStore store(settings, dir.filePath(u"tokens"_s));
        // Added faster than the clock ticks: their random ids must not decide the order.
        store.setClock([] { return qint64(1'790'000'000'000); });
        const QStringList names{u"Zeta"_s, u"Alpha"_s, u"Mid"_s, u"Beta"_s, u"Omega"_s, u"Gamma"_s};
        for (const QString &name : names)
            QVERIFY(store.add(
                RemoteInstall{
                    {}, name, QUrl(u"https://%1.lan:7443"_s.arg(name.toLower())), QString(64, u'a'), u"member"_s, 0},
                u"pando_x"_s));
        QStringList read;
        for (const RemoteInstall &install : ConnectionStore(settings, dir.filePath(u"tokens"_s)).installs())
            read << install.name;
        QCOMPARE(read, names);
    }

    void accessTexts_data()
    {
        QTest::addColumn<qint64>("leftMs"); // from the clock to the expiry
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("state");
        const QString ask = u" — ask its administrator for a new pairing link"_s;
        QTest::newRow("weeks") << 30 * DayMs << u"access until 3 Mar 2027"_s << int(DisplayState::Healthy);
        QTest::newRow("a week") << 7 * DayMs << u"access until 3 Mar 2027"_s << int(DisplayState::Healthy);
        QTest::newRow("under a week") << 7 * DayMs - 1 << u"access ends in 6 days"_s + ask
                                      << int(DisplayState::Waiting);
        QTest::newRow("3 days") << 3 * DayMs + 5 * HourMs << u"access ends in 3 days"_s + ask
                                << int(DisplayState::Waiting);
        QTest::newRow("1 day") << DayMs << u"access ends in 1 day"_s + ask << int(DisplayState::Waiting);
        QTest::newRow("hours") << 5 * HourMs + 59 * 60 * 1000 << u"access ends in 5 hours"_s + ask
                               << int(DisplayState::Waiting);
        QTest::newRow("an hour") << HourMs << u"access ends in 1 hour"_s + ask << int(DisplayState::Waiting);
        QTest::newRow("minutes") << qint64(10 * 60 * 1000) << u"access ends in less than an hour"_s + ask
                                 << int(DisplayState::Waiting);
        QTest::newRow("now") << qint64(0) << u"access expired"_s + ask << int(DisplayState::Failed);
        QTest::newRow("past") << -40 * DayMs << u"access expired"_s + ask << int(DisplayState::Failed);
    }

    void accessTexts()
    {
        QFETCH(qint64, leftMs);
        QFETCH(QString, text);
        QFETCH(int, state);
        const QLocale previous;
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedKingdom));
        const auto restore = qScopeGuard([previous] { QLocale::setDefault(previous); });
        const qint64 expires = expiryNoon();
        qint64 now = expires - leftMs; // before the model, which reads it
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"settings.ini"_s), QSettings::IniFormat);
        auto saved =
            ConnectionStore(settings, dir.filePath(u"tokens"_s))
                .add(
                    RemoteInstall{
                        {}, u"Team box"_s, QUrl(u"https://pando.lan:7443"_s), QString(64, u'a'), u"member"_s, expires},
                    u"pando_x"_s);
        QVERIFY(saved);
        ConnectionsModel model(&settings, dir.filePath(u"tokens"_s));
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setClock([&now] { return now; });
        QCOMPARE(model.index(1).data(ConnectionsModel::ExpiresMsRole).toLongLong(), expires);
        QCOMPARE(model.index(1).data(ConnectionsModel::AccessTextRole).toString(), text);
        QCOMPARE(model.index(1).data(ConnectionsModel::AccessStateRole).toInt(), state);

        // The text follows the clock, and the view hears of it.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        now = expires + 1;
        model.setClock([&now] { return now; });
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 1);
        QCOMPARE(model.index(1).data(ConnectionsModel::AccessStateRole).toInt(), int(DisplayState::Failed));
    }

    void accessTextsInGerman()
    {
        QTranslator german;
        QVERIFY(german.load(u":/i18n/pando_de.qm"_s));
        QCoreApplication::installTranslator(&german);
        const QLocale previous;
        QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
        const auto restore = qScopeGuard([&german, previous] {
            QCoreApplication::removeTranslator(&german);
            QLocale::setDefault(previous);
        });
        const qint64 expires = expiryNoon();
        qint64 now = expires - 30 * DayMs;
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"settings.ini"_s), QSettings::IniFormat);
        QVERIFY(
            ConnectionStore(settings, dir.filePath(u"tokens"_s))
                .add(
                    RemoteInstall{
                        {}, u"Team box"_s, QUrl(u"https://pando.lan:7443"_s), QString(64, u'a'), u"member"_s, expires},
                    u"pando_x"_s));
        ConnectionsModel model(&settings, dir.filePath(u"tokens"_s));
        model.setClock([&now] { return now; });
        const auto text = [&model] {
            return model.index(1).data(ConnectionsModel::AccessTextRole).toString();
        };
        QCOMPARE(text(), u"Zugang bis 3. März 2027"_s);
        const QString ask = u" — bitten Sie den Administrator der Installation um einen neuen Kopplungslink"_s;
        now = expires - 3 * DayMs;
        QCOMPARE(text(), u"Zugang endet in 3 Tagen"_s + ask);
        now = expires - DayMs;
        QCOMPARE(text(), u"Zugang endet in 1 Tag"_s + ask);
        now = expires - 2 * HourMs;
        QCOMPARE(text(), u"Zugang endet in 2 Stunden"_s + ask);
        now = expires - 60 * 1000;
        QCOMPARE(text(), u"Zugang endet in weniger als einer Stunde"_s + ask);
        now = expires;
        QCOMPARE(text(), u"Zugang abgelaufen"_s + ask);
    }

    void connectedModelListsTeammates()
    {
        RemoteSession admin(QUrl(m_install.baseUrl()), m_install.token);
        admin.open();
        QString why;
        QVERIFY2(test::awaitConnected(admin, &why, 20000), qPrintable(why));
        ConnectedModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setPollIntervalMs(200);
        model.setSession(&admin);
        model.setActive(true);
        QTest::qWait(500);
        // The administrator's own stream is plain loopback: not a teammate.
        QCOMPARE(model.rowCount(), 0);

        client::ApiClient member(QUrl(u"https://127.0.0.1:%1"_s.arg(m_tlsPort)), m_install.tokens.value(u"member"_s));
        member.setPinnedFingerprint(m_identity.fingerprint);
        QWebSocket *stream = member.follow(
            u"/api/v1/events"_s, [](const QJsonObject &) {}, [](const Status &) {});
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 15000);
        QCOMPARE(model.index(0).data(ConnectedModel::AccountRole).toString(), u"member"_s);
        QCOMPARE(model.index(0).data(ConnectedModel::AddressRole).toString(), u"127.0.0.1"_s);
        QCOMPARE(model.index(0).data(ConnectedModel::StreamRole).toString(), u"/api/v1/events"_s);
        QVERIFY(model.index(0).data(ConnectedModel::SinceTextRole).toString().size() > 0);
        stream->close();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, 15000);
        model.setActive(false);

        // A member may not see who is connected: the model says why.
        RemoteSession viewer(QUrl(m_install.baseUrl()), m_install.tokens.value(u"viewer"_s));
        viewer.open();
        QVERIFY2(test::awaitConnected(viewer, &why, 20000), qPrintable(why));
        ConnectedModel refused;
        refused.setSession(&viewer);
        refused.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!refused.error().isEmpty(), 15000);
    }

    void embeddedServerServesThisComputer()
    {
        QTemporaryDir data;
        InProcessOptions options;
        options.engine.dataDir = data.path();
        options.engine.reconcileIntervalMs = 0;
        options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
        options.engine.workers = 1;
        options.userName = u"owner"_s;
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = std::make_shared<test::FakeRouter>();
        options.source = std::make_shared<test::FakeSource>();
        options.installPipelines = [](core::Engine &engine) -> Status {
            engine.setPipelines(std::make_unique<test::FakePipelineService>(*engine.events()));
            return {};
        };
        InProcessSession local(std::move(options));
        local.open();
        QString why;
        QVERIFY2(test::awaitConnected(local, &why, 60000), qPrintable(why));

        QSettings settings(m_home.filePath(u"embedded.ini"_s), QSettings::IniFormat);
        EmbeddedServer server(&local, &settings);
        QVERIFY(server.isAvailable());
        QCOMPARE(server.isEnabled(), false); // off by default
        QCOMPARE(server.port(), EmbeddedServer::DefaultPort);
        QVERIFY(!server.isRunning());

        // A bad address is said as such, and nothing starts.
        server.setAddress(u"not-an-address"_s);
        server.setEnabled(true);
        QVERIFY2(server.error().contains(u"not-an-address"_s), qPrintable(server.error()));
        QVERIFY(!server.isRunning());

        // Loopback and a free port, for the test.
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const int port = probe.serverPort();
        probe.close();
        server.setAddress(u"127.0.0.1"_s);
        server.setPort(port);
        server.apply();
        QTRY_VERIFY_WITH_TIMEOUT(server.isRunning() || !server.error().isEmpty(), 20000);
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        QCOMPARE(server.fingerprint().size(), 64);
        QVERIFY(server.status().contains(QString::number(port)));
        QCOMPARE(server.fingerprintArt(), desktop::fingerprintArt(server.fingerprint()));
        QCOMPARE(settings.value(u"embeddedServer/enabled"_s).toBool(), true);
        QVERIFY(QFile::exists(QDir(data.path()).filePath(u"tls/server.key"_s)));

        QTRY_VERIFY_WITH_TIMEOUT(server.accounts().contains(u"owner"_s), 15000);
        server.makePairingLink(u"owner"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!server.pairingLink().isEmpty(), 15000);
        QVERIFY2(server.pairingText().contains(u"owner"_s), qPrintable(server.pairingText()));
        const auto link = parsePairingLink(server.pairingLink());
        QVERIFY2(link, qPrintable(link ? QString() : link.error().text()));
        QCOMPARE(link->fingerprint, server.fingerprint());
        QCOMPARE(link->port, port);
        QCOMPARE(link->host, u"127.0.0.1"_s);
        server.copyPairingLink();
        QCOMPARE(QGuiApplication::clipboard()->text(), server.pairingLink());

        // A teammate pairs with it and shows up as connected.
        QSettings teammateSettings(m_home.filePath(u"teammate.ini"_s), QSettings::IniFormat);
        ConnectionsModel teammate(&teammateSettings, m_home.filePath(u"teammate-tokens"_s));
        teammate.addFromLink(server.pairingLink());
        QTRY_COMPARE_WITH_TIMEOUT(teammate.rowCount(), 2, 20000);
        QCOMPARE(teammate.error(), QString());
        RemoteSession remote(teammate.installAt(1)->url, teammate.tokenAt(1));
        remote.setPinnedFingerprint(teammate.installAt(1)->fingerprint);
        remote.open();
        QVERIFY2(test::awaitConnected(remote, &why, 20000), qPrintable(why));
        server.connected()->setPollIntervalMs(200);
        QTRY_COMPARE_WITH_TIMEOUT(server.connected()->rowCount(), 1, 15000);
        QCOMPARE(server.connected()->index(0).data(ConnectedModel::AccountRole).toString(), u"owner"_s);

        // Off: the teammate's stream drops and the port is closed; the setting is remembered.
        server.setEnabled(false);
        QTRY_VERIFY_WITH_TIMEOUT(!server.isRunning() && !server.isBusy(), 15000);
        QCOMPARE(settings.value(u"embeddedServer/enabled"_s).toBool(), false);
        QTRY_VERIFY_WITH_TIMEOUT(remote.state() != Session::State::Connected, 15000);
        QTcpSocket refused;
        refused.connectToHost(QHostAddress::LocalHost, quint16(port));
        QTRY_COMPARE_WITH_TIMEOUT(refused.state(), QAbstractSocket::UnconnectedState, 5000);
        QCOMPARE(refused.error(), QAbstractSocket::ConnectionRefusedError);
    }
};

QTEST_MAIN(TestConnections)
#include "tst_connections.moc"
