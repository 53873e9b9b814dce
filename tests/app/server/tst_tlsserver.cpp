// The embedded server over TLS, with real TLS clients on loopback: the certificate made with
// libcrypto (P-256, subjectAltName, a 0600 key, reused on restart), a handshake that presents
// exactly it, plain HTTP to the TLS port refused, the API client's certificate pinning (REST and
// WebSocket; a wrong pin names both fingerprints), pairing codes over the API (admins only,
// single use, audited) and the list of who holds a stream open.

#include "fakes.h"

#include "app/client/apiclient.h"
#include "app/server/pairinghandlers.h"
#include "app/server/tlsidentity.h"
#include "core/state/repositories.h"

#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTest>
#include <QUrlQuery>
#include <QWebSocket>

using namespace Qt::StringLiterals;
using namespace pando;

namespace {

struct Answer {
    Result<client::ApiResponse> response = std::unexpected(Error{});
    bool done = false;
};

// One request through the client, waited for.
Result<client::ApiResponse> await(client::ApiClient &client, const QByteArray &method, const QString &path,
                                  const QJsonObject &body = {})
{
    auto answer = std::make_shared<Answer>();
    const QByteArray data = body.isEmpty() ? QByteArray() : QJsonDocument(body).toJson(QJsonDocument::Compact);
    client.request(method, path, data, data.isEmpty() ? QByteArray() : QByteArray("application/json"),
                   [answer](const Result<client::ApiResponse> &r) {
                       answer->response = r;
                       answer->done = true;
                   });
    if (!QTest::qWaitFor([answer] { return answer->done; }, 20000))
        return fail(ErrorCode::Timeout, u"no answer within 20 s"_s);
    return answer->response;
}

QString text(const Result<client::ApiResponse> &r)
{
    return r ? QString::fromUtf8(r->body) : r.error().text();
}

} // namespace

class TestTlsServer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void certificateIsMadeOnceAndReused();
    void handshakePresentsTheCertificate();
    void plainHttpIsRefused();
    void pinnedClientAcceptsOnlyThatCertificate();
    void pinnedWebSocket();
    void pairingOverTheApi();
    void pairingIsForAdmins();
    void connectionsList();
    void stopTlsClosesTheTlsSide();

private:
    std::unique_ptr<client::ApiClient> client(const QString &token, const QString &pin);

    QTemporaryDir m_tlsDir;
    server::TlsIdentity m_identity;
    test::TestInstall m_install;
    quint16 m_tlsPort = 0;
};

void TestTlsServer::initTestCase()
{
    QVERIFY(QSslSocket::supportsSsl());
    auto identity = server::loadOrCreateTlsIdentity(m_tlsDir.path(), {u"pando.test"_s, u"10.1.2.3"_s});
    QVERIFY2(identity, qPrintable(identity ? QString() : identity.error().text()));
    m_identity = *identity;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    auto port = m_install.server->listenTls(QHostAddress::LocalHost, 0, m_identity.certificate, m_identity.key);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    m_tlsPort = *port;
}

std::unique_ptr<client::ApiClient> TestTlsServer::client(const QString &token, const QString &pin)
{
    auto c = std::make_unique<client::ApiClient>(QUrl(u"https://127.0.0.1:%1"_s.arg(m_tlsPort)), token);
    c->setPinnedFingerprint(pin);
    c->setTimeoutMs(15000);
    return c;
}

void TestTlsServer::certificateIsMadeOnceAndReused()
{
    QVERIFY(m_identity.created);
    QCOMPARE(m_identity.fingerprint.size(), 64);
    QCOMPARE(m_identity.fingerprint,
             QString::fromLatin1(m_identity.certificate.digest(QCryptographicHash::Sha256).toHex()));
    QCOMPARE(m_identity.key.algorithm(), QSsl::Ec);
    QCOMPARE(m_identity.key.length(), 256);
    QCOMPARE(QFile::permissions(m_identity.keyPath),
             QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser);
    const auto names = m_identity.certificate.subjectAlternativeNames();
    QVERIFY(names.values(QSsl::DnsEntry).contains(u"pando.test"_s));
    QVERIFY(names.values(QSsl::DnsEntry).contains(u"localhost"_s));
    QVERIFY(names.values(QSsl::IpAddressEntry).contains(u"10.1.2.3"_s));
    QVERIFY(names.values(QSsl::IpAddressEntry).contains(u"127.0.0.1"_s));
    QCOMPARE(m_identity.certificate.issuerInfo(QSslCertificate::CommonName),
             m_identity.certificate.subjectInfo(QSslCertificate::CommonName));
    QVERIFY(m_identity.certificate.expiryDate() > QDateTime::currentDateTimeUtc().addYears(4));

    // A restart with the same names (or fewer) finds the same certificate.
    auto again = server::loadOrCreateTlsIdentity(m_tlsDir.path(), {u"pando.test"_s});
    QVERIFY(again);
    QVERIFY(!again->created);
    QCOMPARE(again->fingerprint, m_identity.fingerprint);
    // A name it does not carry yet means a new certificate.
    QTemporaryDir other;
    QVERIFY(QFile::copy(m_identity.certificatePath, other.filePath(u"server.crt"_s)));
    QVERIFY(QFile::copy(m_identity.keyPath, other.filePath(u"server.key"_s)));
    auto renamed = server::loadOrCreateTlsIdentity(other.path(), {u"pando.test"_s, u"other.test"_s});
    QVERIFY(renamed);
    QVERIFY(renamed->created);
    QVERIFY(renamed->fingerprint != m_identity.fingerprint);
    // A key that is not the certificate's is not used.
    QVERIFY(QFile::remove(other.filePath(u"server.crt"_s)));
    QVERIFY(QFile::copy(m_identity.certificatePath, other.filePath(u"server.crt"_s)));
    auto mismatched = server::loadOrCreateTlsIdentity(other.path(), {u"pando.test"_s});
    QVERIFY(mismatched);
    QVERIFY(mismatched->created);
    // Nonsense is refused by name.
    auto bad = server::loadOrCreateTlsIdentity(QTemporaryDir().path(), {u"bad name!"_s});
    QVERIFY(!bad);
    QVERIFY2(bad.error().message.contains(u"bad name!"_s), qPrintable(bad.error().text()));

    QCOMPARE(server::normalizeFingerprint(m_identity.fingerprint.toUpper()), m_identity.fingerprint);
    QCOMPARE(server::normalizeFingerprint(u"ab:cd"_s), QString());
}

void TestTlsServer::handshakePresentsTheCertificate()
{
    QSslSocket socket;
    socket.setPeerVerifyMode(QSslSocket::VerifyNone);
    socket.connectToHostEncrypted(u"127.0.0.1"_s, m_tlsPort);
    // The server runs on this thread: wait with the event loop, not with a blocking call.
    QVERIFY2(QTest::qWaitFor([&] { return socket.isEncrypted(); }, 10000), qPrintable(socket.errorString()));
    QCOMPARE(client::certificateFingerprint(socket.peerCertificate()), m_identity.fingerprint);
    QVERIFY(socket.sessionProtocol() >= QSsl::TlsV1_2);
    socket.write("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    QByteArray reply;
    QVERIFY(QTest::qWaitFor(
        [&] {
            reply += socket.readAll();
            return reply.contains("\"status\":\"ok\"") || socket.state() == QAbstractSocket::UnconnectedState;
        },
        10000));
    QVERIFY2(reply.startsWith("HTTP/1.1 200"), reply.constData());
}

void TestTlsServer::plainHttpIsRefused()
{
    QTcpSocket socket;
    socket.connectToHost(u"127.0.0.1"_s, m_tlsPort);
    QVERIFY(QTest::qWaitFor([&] { return socket.state() == QAbstractSocket::ConnectedState; }, 5000));
    socket.write("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    QByteArray reply;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     reply += socket.readAll();
                     return socket.state() == QAbstractSocket::UnconnectedState;
                 },
                 15000),
             "the server kept a plain HTTP connection open on its TLS port");
    QVERIFY2(!reply.contains("HTTP/1.1"), reply.constData());
    QVERIFY(!reply.contains("status"));

    // And the plain API client gets no answer either.
    client::ApiClient plain(QUrl(u"http://127.0.0.1:%1"_s.arg(m_tlsPort)), m_install.token);
    plain.setTimeoutMs(15000);
    auto health = await(plain, "GET", u"/api/v1/health"_s);
    QVERIFY(!health);
    QCOMPARE(health.error().code, ErrorCode::Unavailable);
}

void TestTlsServer::pinnedClientAcceptsOnlyThatCertificate()
{
    auto pinned = client(m_install.token, m_identity.fingerprint);
    auto apps = await(*pinned, "GET", u"/api/v1/apps"_s);
    QVERIFY2(apps, qPrintable(text(apps)));
    QCOMPARE(apps->status, 200);

    // Without a pin the self-signed certificate is not trusted.
    auto unpinned = client(m_install.token, {});
    auto refused = await(*unpinned, "GET", u"/api/v1/apps"_s);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unavailable);

    // A wrong pin is refused before the request goes out, naming both fingerprints.
    const QString wrong = QString(64, u'a');
    auto wrongPin = client(m_install.token, wrong);
    auto mismatch = await(*wrongPin, "GET", u"/api/v1/apps"_s);
    QVERIFY(!mismatch);
    QCOMPARE(mismatch.error().code, ErrorCode::Unauthorized);
    QVERIFY2(mismatch.error().message.contains(m_identity.fingerprint), qPrintable(mismatch.error().text()));
    QVERIFY2(mismatch.error().message.contains(wrong), qPrintable(mismatch.error().text()));
    QVERIFY(!mismatch.error().hint.isEmpty());
}

void TestTlsServer::pinnedWebSocket()
{
    auto pinned = client(m_install.token, m_identity.fingerprint);
    bool connected = false;
    std::optional<Status> closedWith;
    QWebSocket *socket = pinned->follow(
        u"/api/v1/events"_s, [](const QJsonObject &) {}, [&](const Status &s) { closedWith = s; });
    connect(socket, &QWebSocket::connected, this, [&] { connected = true; });
    QTRY_VERIFY_WITH_TIMEOUT(connected || closedWith, 15000);
    QVERIFY2(connected, qPrintable(closedWith && !*closedWith ? closedWith->error().text() : QString()));
    socket->close();
    QTRY_VERIFY_WITH_TIMEOUT(closedWith.has_value(), 10000);

    const QString wrong = QString(64, u'b');
    auto wrongPin = client(m_install.token, wrong);
    closedWith.reset();
    connected = false;
    QWebSocket *refused = wrongPin->follow(
        u"/api/v1/events"_s, [](const QJsonObject &) {}, [&](const Status &s) { closedWith = s; });
    connect(refused, &QWebSocket::connected, this, [&] { connected = true; });
    QTRY_VERIFY_WITH_TIMEOUT(closedWith.has_value(), 15000);
    QVERIFY(!connected);
    QVERIFY(!*closedWith);
    QCOMPARE(closedWith->error().code, ErrorCode::Unauthorized);
    QVERIFY2(closedWith->error().message.contains(m_identity.fingerprint) &&
                 closedWith->error().message.contains(wrong),
             qPrintable(closedWith->error().text()));
}

void TestTlsServer::pairingOverTheApi()
{
    auto admin = client(m_install.token, m_identity.fingerprint);
    auto created = await(*admin, "POST", u"/api/v1/users/member2/pairings"_s);
    QVERIFY2(created, qPrintable(text(created)));
    QCOMPARE(created->status, 201);
    const QString code = created->json.value(u"token"_s).toString();
    QVERIFY(code.startsWith(u"pandopair_"_s));
    QCOMPARE(created->json.value(u"user"_s).toString(), u"member2"_s);
    // Over TLS the answer carries the whole link.
    const QUrl link(created->json.value(u"link"_s).toString());
    QCOMPARE(link.scheme(), u"pando"_s);
    QCOMPARE(link.host(), u"127.0.0.1"_s);
    QCOMPARE(link.port(), int(m_tlsPort));
    QCOMPARE(link.path(), u"/pair"_s);
    QCOMPARE(QUrlQuery(link).queryItemValue(u"fp"_s), m_identity.fingerprint);
    QCOMPARE(QUrlQuery(link).queryItemValue(u"token"_s), code);
    QCOMPARE(server::pairingapi::pairingLink(u"127.0.0.1"_s, m_tlsPort, m_identity.fingerprint, code), link.toString());

    // Redeemed without a bearer: a token for member2, named after the device.
    auto anonymous = client({}, m_identity.fingerprint);
    auto redeemed =
        await(*anonymous, "POST", u"/api/v1/pairings/redeem"_s, {{u"token"_s, code}, {u"name"_s, u"bob's laptop"_s}});
    QVERIFY2(redeemed, qPrintable(text(redeemed)));
    QCOMPARE(redeemed->status, 201);
    QCOMPARE(redeemed->json.value(u"user"_s).toString(), u"member2"_s);
    QCOMPARE(redeemed->json.value(u"name"_s).toString(), u"paired: bob's laptop"_s);
    const QString token = redeemed->json.value(u"token"_s).toString();
    auto paired = client(token, m_identity.fingerprint);
    auto apps = await(*paired, "GET", u"/api/v1/apps"_s);
    QVERIFY2(apps, qPrintable(text(apps)));
    auto tokens = await(*paired, "GET", u"/api/v1/tokens"_s);
    QVERIFY2(tokens, qPrintable(text(tokens)));
    QVERIFY(QJsonDocument(tokens->json).toJson().contains("paired: bob's laptop"));

    // Single use.
    auto again = await(*anonymous, "POST", u"/api/v1/pairings/redeem"_s, {{u"token"_s, code}});
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Unauthorized);
    // A body without the code says what is missing.
    auto empty = await(*anonymous, "POST", u"/api/v1/pairings/redeem"_s);
    QVERIFY(!empty);
    QCOMPARE(empty.error().code, ErrorCode::Invalid);
    QCOMPARE(empty.error().where, u"token"_s);

    // Audited: who made it, its redemption, the token it made, the failed second try.
    auto audit = m_install.engine->auditLines({.limit = 1000});
    QVERIFY(audit);
    QStringList actions;
    for (const core::AuditRecord &line : *audit)
        actions.append(line.actor + u' ' + line.action + u' ' + line.object + u' ' + line.outcome);
    const QString all = actions.join(u'\n');
    QVERIFY2(all.contains(u"user:admin/token:"_s) && all.contains(u"pairing.create user/member2 success"_s),
             qPrintable(all));
    QVERIFY2(all.contains(u"pairing.redeem user/member2 success"_s), qPrintable(all));
    QVERIFY2(all.contains(u"pairing pairing.failed pairing denied"_s), qPrintable(all));
}

void TestTlsServer::pairingIsForAdmins()
{
    for (const QString &who : {u"operator"_s, u"member"_s, u"viewer"_s}) {
        auto c = client(m_install.tokens.value(who), m_identity.fingerprint);
        auto refused = await(*c, "POST", u"/api/v1/users/%1/pairings"_s.arg(who));
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Forbidden);
    }
    auto admin = client(m_install.token, m_identity.fingerprint);
    auto unknown = await(*admin, "POST", u"/api/v1/users/nobody/pairings"_s);
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);
}

void TestTlsServer::connectionsList()
{
    auto admin = client(m_install.token, m_identity.fingerprint);
    auto before = await(*admin, "GET", u"/api/v1/connections"_s);
    QVERIFY2(before, qPrintable(text(before)));
    QCOMPARE(before->json.value(u"connections"_s).toArray().size(), 0);

    // member watches the event stream over TLS, viewer over plain HTTP.
    auto member = client(m_install.tokens.value(u"member"_s), m_identity.fingerprint);
    bool memberOpen = false;
    QWebSocket *watching = member->follow(
        u"/api/v1/events"_s, [](const QJsonObject &) {}, [](const Status &) {});
    connect(watching, &QWebSocket::connected, this, [&] { memberOpen = true; });
    client::ApiClient viewer(QUrl(m_install.baseUrl()), m_install.tokens.value(u"viewer"_s));
    bool viewerOpen = false;
    QWebSocket *plain = viewer.follow(
        u"/api/v1/events"_s, [](const QJsonObject &) {}, [](const Status &) {});
    connect(plain, &QWebSocket::connected, this, [&] { viewerOpen = true; });
    QTRY_VERIFY_WITH_TIMEOUT(memberOpen && viewerOpen, 15000);

    QJsonArray list;
    QTRY_VERIFY_WITH_TIMEOUT(
        (list = (*await(*admin, "GET", u"/api/v1/connections"_s)).json.value(u"connections"_s).toArray()).size() == 2,
        10000);
    QCOMPARE(m_install.server->connections().size(), 2);
    QJsonObject memberRow, viewerRow;
    for (const QJsonValue &row : std::as_const(list)) {
        if (row[u"user"_s] == u"member"_s)
            memberRow = row.toObject();
        if (row[u"user"_s] == u"viewer"_s)
            viewerRow = row.toObject();
    }
    QCOMPARE(memberRow.value(u"address"_s).toString(), u"127.0.0.1"_s);
    QCOMPARE(memberRow.value(u"stream"_s).toString(), u"/api/v1/events"_s);
    QCOMPARE(memberRow.value(u"tls"_s).toBool(), true);
    QVERIFY(memberRow.value(u"principal"_s).toString().startsWith(u"user:member/token:"_s));
    QVERIFY(memberRow.value(u"sinceMs"_s).toInteger() > 0);
    QVERIFY(memberRow.value(u"id"_s).toString().startsWith(u'c'));
    QCOMPARE(viewerRow.value(u"tls"_s).toBool(), false);

    // Admins only.
    auto refused = await(*member, "GET", u"/api/v1/connections"_s);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Forbidden);

    // A closed stream leaves the list.
    watching->close();
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->connections().size(), 1, 10000);
    plain->close();
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->connections().size(), 0, 10000);
    auto after = await(*admin, "GET", u"/api/v1/connections"_s);
    QVERIFY(after);
    QCOMPARE(after->json.value(u"connections"_s).toArray().size(), 0);
}

void TestTlsServer::stopTlsClosesTheTlsSide()
{
    auto member = client(m_install.tokens.value(u"member"_s), m_identity.fingerprint);
    bool open = false;
    std::optional<Status> closed;
    QWebSocket *watching = member->follow(
        u"/api/v1/events"_s, [](const QJsonObject &) {}, [&](const Status &s) { closed = s; });
    connect(watching, &QWebSocket::connected, this, [&] { open = true; });
    QTRY_VERIFY_WITH_TIMEOUT(open, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->connections().size(), 1, 10000);

    m_install.server->stopTls();
    QTRY_VERIFY_WITH_TIMEOUT(closed.has_value(), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->connections().size(), 0, 10000);
    auto refused = await(*member, "GET", u"/api/v1/apps"_s);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unavailable);
    // The plain listener goes on, and a pairing code made now carries no link.
    client::ApiClient plain(QUrl(m_install.baseUrl()), m_install.token);
    auto created = await(plain, "POST", u"/api/v1/users/member/pairings"_s);
    QVERIFY2(created, qPrintable(text(created)));
    QVERIFY(!created->json.contains(u"link"_s));
}

QTEST_GUILESS_MAIN(TestTlsServer)
#include "tst_tlsserver.moc"
