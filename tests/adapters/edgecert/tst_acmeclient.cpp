// Pando's ACME client against Pebble (Debian's ACME test server) on loopback, with its DNS stub
// sending every name to 127.0.0.1: certificates for two names by HTTP-01 (the challenge served by
// a small HTTP server on the port Pebble validates on), chained to Pebble's issuing root; one
// account for both, kept by a later client, made again when the CA forgot it; refused nonces
// retried; a name Pebble refuses reported with the step and the
// CA's problem; a CA that does not answer reported within the request's deadline; and a CA whose
// TLS root is not the one configured refused.

#include "adapters/edgecert/acme/acmeclient.h"
#include "adapters/edgecert/acme/certstore.h"
#include "tests/support/component.h"
#include "tests/support/httpbackend.h"
#include "tests/support/pebble.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSslCertificate>
#include <QSslKey>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <future>
#include <mutex>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters::edgecert;
using pando::test::Pebble;
using pando::test::PebbleOptions;
using pando::test::unusedPort;

namespace {

// Serves http://NAME/.well-known/acme-challenge/TOKEN from the test's thread (the client runs on
// another), as an edge would.
class ChallengeServer : public QObject, public ChallengeResponder {
public:
    explicit ChallengeServer(int port)
    {
        m_server.listen(QHostAddress::LocalHost, quint16(port));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket] { answer(socket); });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }
    bool listening() const { return m_server.isListening(); }
    Status present(const QString &host, const QString &token, const QString &keyAuthorization) override
    {
        const std::lock_guard guard(m_mutex);
        m_answers.insert(host + u"/.well-known/acme-challenge/"_s + token, keyAuthorization.toLatin1());
        ++m_presented;
        return {};
    }
    void withdraw(const QString &host, const QString &token) override
    {
        const std::lock_guard guard(m_mutex);
        m_answers.remove(host + u"/.well-known/acme-challenge/"_s + token);
    }
    int presented()
    {
        const std::lock_guard guard(m_mutex);
        return m_presented;
    }

private:
    void answer(QTcpSocket *socket)
    {
        const QByteArray request = socket->peek(65536);
        if (!request.contains("\r\n\r\n"))
            return;
        socket->readAll();
        const QList<QByteArray> lines = request.split('\n');
        const QByteArray path = lines.value(0).split(' ').value(1);
        QByteArray host;
        for (const QByteArray &line : lines)
            if (line.toLower().startsWith("host:"))
                host = line.mid(5).trimmed().split(':').value(0);
        QByteArray body;
        {
            const std::lock_guard guard(m_mutex);
            body = m_answers.value(QString::fromLatin1(host + path));
        }
        const QByteArray status = body.isEmpty() ? "404 Not Found" : "200 OK";
        socket->write("HTTP/1.1 " + status + "\r\nContent-Length: " + QByteArray::number(body.size()) +
                      "\r\nConnection: close\r\n\r\n" + body);
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    std::mutex m_mutex;
    QHash<QString, QByteArray> m_answers;
    int m_presented = 0;
};

// Whether openssl verifies the leaf for host against root, with the rest of the chain as
// intermediates.
bool chainsTo(const QList<QSslCertificate> &chain, const QString &root, const QString &host)
{
    QTemporaryDir dir;
    QFile leaf(dir.filePath(u"leaf.pem"_s));
    QFile rest(dir.filePath(u"rest.pem"_s));
    if (!leaf.open(QIODevice::WriteOnly) || !rest.open(QIODevice::WriteOnly))
        return false;
    leaf.write(chain.first().toPem());
    for (const QSslCertificate &certificate : chain.mid(1))
        rest.write(certificate.toPem());
    leaf.close();
    rest.close();
    QProcess openssl;
    openssl.start(u"openssl"_s, {u"verify"_s, u"-CAfile"_s, root, u"-untrusted"_s, rest.fileName(),
                                 u"-verify_hostname"_s, host, leaf.fileName()});
    if (!openssl.waitForFinished(10000) || openssl.exitCode() != 0) {
        qWarning("%s", openssl.readAll().constData());
        return false;
    }
    return true;
}

// Serves no challenge at all.
class Nobody : public ChallengeResponder {
public:
    Status present(const QString & /*host*/, const QString & /*token*/, const QString & /*answer*/) override
    {
        return {};
    }
    void withdraw(const QString & /*host*/, const QString & /*token*/) override {}
};

// issue() blocks: it runs on another thread while this one serves the challenges.
Result<IssuedCertificate> issueServing(AcmeClient &client, const QString &host, ChallengeResponder &responder)
{
    auto pending = std::async(std::launch::async, [&] { return client.issue(host, responder); });
    QElapsedTimer timer;
    timer.start();
    while (pending.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready && timer.elapsed() < 150000)
        QTest::qWait(20);
    return pending.get();
}

} // namespace

class TestAcmeClient : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Pebble> m_pebble;
    int m_http = 0;

    bool startPebble(PebbleOptions options = {})
    {
        options.httpPort = m_http;
        options.tlsPort = unusedPort();
        m_pebble = std::make_unique<Pebble>(options);
        return m_pebble->start();
    }
    AcmeOptions acme() const
    {
        return {.directoryUrl = m_pebble->directoryUrl(),
                .caRootFile = m_pebble->listenerRootFile(),
                .contactEmail = u"ops@example.com"_s,
                .pollIntervalMs = 200};
    }

private Q_SLOTS:
    void init()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(Pebble::available(&why), why);
        m_dir = std::make_unique<QTemporaryDir>();
        m_http = unusedPort();
    }
    void cleanup() { m_pebble.reset(); }

    void issuesForTwoNamesByHttp01()
    {
        // One refused nonce in five: the client tries again with the nonce the refusal carries.
        QVERIFY2(startPebble(), qPrintable(m_pebble->error()));
        ChallengeServer challenges(m_http);
        QVERIFY(challenges.listening());
        CertStore store(m_dir->filePath(u"certs"_s));
        QVERIFY(store.prepare());
        auto key = store.accountKey();
        QVERIFY(key);
        AcmeClient client(acme(), *key);
        const QString root = m_pebble->issuingRootFile();
        QVERIFY2(!root.isEmpty(), qPrintable(m_pebble->error()));

        for (const QString &host : {u"shop.example.com"_s, u"blog.example.com"_s}) {
            const auto issued = issueServing(client, host, challenges);
            QVERIFY2(issued, qPrintable(issued ? QString() : issued.error().text()));
            const QList<QSslCertificate> chain = QSslCertificate::fromData(issued->chainPem, QSsl::Pem);
            QVERIFY(!chain.isEmpty());
            QCOMPARE(chain.first().subjectAlternativeNames().values(QSsl::DnsEntry), QStringList{host});
            QVERIFY2(chain.first().issuerDisplayName().contains(u"Pebble"_s),
                     qPrintable(chain.first().issuerDisplayName()));
            QCOMPARE(issued->notAfter, chain.first().expiryDate());
            QVERIFY(!QSslKey(issued->keyPem, QSsl::Ec).isNull());
            // The chain leads to Pebble's issuing root.
            QVERIFY2(chainsTo(chain, root, host), qPrintable(host));
        }
        QCOMPARE(challenges.presented(), 2);
        QVERIFY(client.accountUrl().startsWith(u"https://127.0.0.1:"_s));

        // A client made later with the account's URL goes on with the same account.
        AcmeClient again(acme(), *key, client.accountUrl());
        const auto third = issueServing(again, u"www.example.com"_s, challenges);
        QVERIFY2(third, qPrintable(third ? QString() : third.error().text()));
        QCOMPARE(again.accountUrl(), client.accountUrl());

        // An account URL the CA does not know (it was reset): a new account, and the order goes on.
        const QString forgotten = client.accountUrl().section(u'/', 0, 2) + u"/my-account/forgotten"_s;
        AcmeClient stale(acme(), *key, forgotten);
        const auto fourth = issueServing(stale, u"docs.example.com"_s, challenges);
        QVERIFY2(fourth, qPrintable(fourth ? QString() : fourth.error().text()));
        QVERIFY(stale.accountUrl() != forgotten);
    }

    void refusedNameSaysStepAndProblem()
    {
        QVERIFY2(startPebble({.refuse = {u"refused.example.com"_s}}), qPrintable(m_pebble->error()));
        ChallengeServer challenges(m_http);
        auto key = adapters::jose::EcKey::generate();
        QVERIFY(key);
        AcmeClient client(acme(), *key);
        const auto refused = issueServing(client, u"refused.example.com"_s, challenges);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"ACME newOrder"_s);
        QVERIFY2(refused.error().message.contains(u"urn:ietf:params:acme:error:rejectedIdentifier"_s),
                 qPrintable(refused.error().message));
        QVERIFY2(!refused.error().text().contains(u"PRIVATE KEY"_s), qPrintable(refused.error().text()));
        QCOMPARE(challenges.presented(), 0);
    }

    void refusedNoncesAreRetried()
    {
        // Pebble refuses three good nonces in ten: each refusal carries a fresh nonce to go on with.
        // (Pebble is asked for refusals only where no order is polled: it can stall a poll of an
        // order whose nonce it refused.)
        QVERIFY2(startPebble({.refuse = {u"refused.example.com"_s}, .nonceRejectPercent = 30}),
                 qPrintable(m_pebble->error()));
        ChallengeServer challenges(m_http);
        int retried = 0;
        for (int run = 0; run < 12; ++run) {
            auto key = adapters::jose::EcKey::generate();
            QVERIFY(key);
            AcmeClient client(acme(), *key);
            const auto refused = issueServing(client, u"refused.example.com"_s, challenges);
            QVERIFY(!refused);
            // Past newAccount to the CA's real answer, never stopped by a refused nonce.
            QCOMPARE(refused.error().where, u"ACME newOrder"_s);
            QVERIFY2(refused.error().message.contains(u"rejectedIdentifier"_s), qPrintable(refused.error().message));
            retried += client.badNonceRetries();
        }
        QVERIFY(retried > 0);
    }

    void unansweredChallengeSaysWhy()
    {
        QVERIFY2(startPebble(), qPrintable(m_pebble->error()));
        // Nothing serves the challenge: the CA's validation fails with its own words.
        auto key = adapters::jose::EcKey::generate();
        QVERIFY(key);
        Nobody nobody;
        AcmeClient client(acme(), *key);
        const auto failed = issueServing(client, u"shop.example.com"_s, nobody);
        QVERIFY(!failed);
        QCOMPARE(failed.error().where, u"ACME authorization"_s);
        QVERIFY2(failed.error().message.contains(u"urn:ietf:params:acme:error:"_s), qPrintable(failed.error().message));
    }

    void deadlinesAndTheCasRoot()
    {
        // A "CA" that accepts connections and never answers.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        auto key = adapters::jose::EcKey::generate();
        QVERIFY(key);
        Nobody nobody;
        AcmeClient client({.directoryUrl = u"https://127.0.0.1:%1/dir"_s.arg(silent.serverPort()),
                           .requestTimeoutMs = 700,
                           .issueTimeoutMs = 5000},
                          *key);
        QElapsedTimer timer;
        timer.start();
        const auto timedOut = client.issue(u"shop.example.com"_s, nobody);
        QVERIFY(!timedOut);
        QVERIFY2(timer.elapsed() < 4000, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(timedOut.error().where, u"ACME directory"_s);
        QCOMPARE(timedOut.error().code, ErrorCode::Timeout);

        // Pebble's listener with the system's roots instead of its own: refused.
        QVERIFY2(startPebble(), qPrintable(m_pebble->error()));
        AcmeOptions untrusted = acme();
        untrusted.caRootFile.clear();
        AcmeClient wrongRoot(untrusted, *key);
        const auto refused = wrongRoot.issue(u"shop.example.com"_s, nobody);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"ACME directory"_s);
        QCOMPARE(refused.error().code, ErrorCode::Unavailable);
    }
};

QTEST_GUILESS_MAIN(TestAcmeClient)
#include "tst_acmeclient.moc"
