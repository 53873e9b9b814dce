// The HTTPS audit sink against a loopback HTTPS receiver this test runs (QTcpServer +
// QSslSocket, a certificate from a throwaway CA trusted through the sink's caBundle): every
// body shape and auth header, and delivery through auditstream across an outage.
#include "adapters/auditsink/https/httpssink.h"
#include "core/audit/auditlog.h"
#include "core/auditstream/auditstream.h"
#include "testpki.h"
#include "tests/support/component.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

namespace {

struct Request {
    QByteArray method, path;
    QMap<QByteArray, QByteArray> headers; // lower-case names
    QByteArray body;
};

// A minimal HTTPS/1.1 server: reads one request per connection, answers `status`, closes.
class Receiver final : public QTcpServer {
public:
    Receiver(QString cert, QString key) : m_cert(std::move(cert)), m_key(std::move(key)) {}
    int status = 200;
    QList<Request> requests;

protected:
    void incomingConnection(qintptr fd) override
    {
        auto *socket = new QSslSocket(this);
        if (!socket->setSocketDescriptor(fd)) {
            delete socket;
            return;
        }
        socket->setLocalCertificate(m_cert);
        socket->setPrivateKey(m_key);
        auto buffer = std::make_shared<QByteArray>();
        connect(socket, &QSslSocket::readyRead, socket, [this, socket, buffer] {
            buffer->append(socket->readAll());
            const qsizetype end = buffer->indexOf("\r\n\r\n");
            if (end < 0)
                return;
            Request request;
            const QList<QByteArray> lines = buffer->left(end).split('\n');
            const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
            request.method = first.value(0);
            request.path = first.value(1);
            for (qsizetype i = 1; i < lines.size(); ++i) {
                const qsizetype colon = lines[i].indexOf(':');
                if (colon > 0)
                    request.headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
            }
            const qsizetype length = request.headers.value("content-length").toLongLong();
            if (buffer->size() < end + 4 + length)
                return;
            request.body = buffer->mid(end + 4, length);
            requests.append(request);
            const QByteArray body = status == 200 ? QByteArray("{\"errors\":false,\"items\":[]}")
                                                  : QByteArray("{\"text\":\"unavailable\"}");
            socket->write("HTTP/1.1 " + QByteArray::number(status) +
                          " X\r\nContent-Type: application/json\r\n"
                          "Connection: close\r\nContent-Length: " +
                          QByteArray::number(body.size()) + "\r\n\r\n" + body);
            socket->disconnectFromHost();
        });
        connect(socket, &QSslSocket::disconnected, socket, &QObject::deleteLater);
        socket->startServerEncryption();
    }

private:
    QString m_cert, m_key;
};

// Runs the blocking deliver() on another thread while this one serves the receiver.
Status deliverServed(AuditSink &sink, const QList<AuditLine> &batch)
{
    Status result = fail(ErrorCode::Internal, u"deliver did not finish"_s);
    std::unique_ptr<QThread> thread(QThread::create([&] { result = sink.deliver(batch, CancelToken()); }));
    thread->start();
    QDeadlineTimer deadline(30'000);
    while (!thread->isFinished() && !deadline.hasExpired())
        QTest::qWait(5);
    thread->wait();
    return result;
}

QList<AuditLine> lines(int count)
{
    QList<AuditLine> out;
    for (int i = 1; i <= count; ++i) {
        AuditLine line;
        line.seq = i;
        line.timeMs = 1'700'000'000'000 + i;
        line.actor = u"user:alice"_s;
        line.action = u"app.create"_s;
        line.object = u"app/a"_s + QString::number(i);
        line.outcome = u"success"_s;
        line.detail = u"{\"k\":\"line\\nbreak\"}"_s;
        line.hash = u"h"_s + QString::number(i);
        out.append(line);
    }
    return out;
}

QList<qint64> seqsOfNdjson(const QByteArray &body)
{
    QList<qint64> out;
    for (const QByteArray &line : body.split('\n'))
        if (!line.isEmpty())
            out.append(QJsonDocument::fromJson(line).object().value(u"seq"_s).toInteger());
    return out;
}

} // namespace

class TestHttpsSink : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    pando::test::TestPki m_pki;
    std::unique_ptr<Receiver> m_receiver;
    int m_port = 0;

    https::HttpsSinkConfig config(https::HttpsSinkConfig::Body body) const
    {
        https::HttpsSinkConfig c;
        c.name = u"siem"_s;
        c.url = u"https://localhost:"_s + QString::number(m_port) + u"/ingest"_s;
        c.body = body;
        c.caBundle = m_pki.caCert;
        c.timeoutMs = 5000;
        return c;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        PANDO_REQUIRE_COMPONENT(QSslSocket::supportsSsl(), u"a TLS backend for Qt"_s);
        m_pki = pando::test::makeTestPki(m_dir.path());
        PANDO_REQUIRE_COMPONENT(m_pki.error.isEmpty(), m_pki.error);
        m_receiver = std::make_unique<Receiver>(m_pki.serverCert, m_pki.serverKey);
        QVERIFY(m_receiver->listen(QHostAddress::LocalHost, 0));
        m_port = m_receiver->serverPort();
    }
    void init()
    {
        m_receiver->requests.clear();
        m_receiver->status = 200;
    }

    void bodyShapes_data()
    {
        QTest::addColumn<int>("body");
        QTest::addColumn<int>("auth");
        QTest::addColumn<QByteArray>("contentType");
        QTest::addColumn<QByteArray>("authorization");
        using B = https::HttpsSinkConfig::Body;
        using A = https::HttpsSinkConfig::Auth;
        QTest::newRow("ndjson, bearer") << int(B::Ndjson) << int(A::Bearer) << QByteArray("application/x-ndjson")
                                        << QByteArray("Bearer s3cret");
        QTest::newRow("array, basic") << int(B::JsonArray) << int(A::Basic) << QByteArray("application/json")
                                      << QByteArray("Basic ") + QByteArray("bob:pw").toBase64();
        QTest::newRow("hec") << int(B::SplunkHec) << int(A::SplunkHec) << QByteArray("application/json")
                             << QByteArray("Splunk s3cret");
        QTest::newRow("elastic, no auth")
            << int(B::ElasticBulk) << int(A::None) << QByteArray("application/x-ndjson") << QByteArray();
    }
    void bodyShapes()
    {
        QFETCH(int, body);
        QFETCH(int, auth);
        QFETCH(QByteArray, contentType);
        QFETCH(QByteArray, authorization);
        auto c = config(https::HttpsSinkConfig::Body(body));
        c.auth = https::HttpsSinkConfig::Auth(auth);
        c.token = u"s3cret"_s;
        c.user = u"bob"_s;
        c.password = u"pw"_s;
        c.index = u"audit"_s;
        https::HttpsSink sink(c);
        const Status r = deliverServed(sink, lines(3));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(m_receiver->requests.size(), 1);
        const Request request = m_receiver->requests.first();
        QCOMPARE(request.method, QByteArray("POST"));
        QCOMPARE(request.path, QByteArray("/ingest"));
        QCOMPARE(request.headers.value("content-type"), contentType);
        QCOMPARE(request.headers.value("authorization"), authorization);
        const QList<QByteArray> bodyLines = request.body.split('\n');
        switch (https::HttpsSinkConfig::Body(body)) {
        case https::HttpsSinkConfig::Body::Ndjson:
            QCOMPARE(seqsOfNdjson(request.body), (QList<qint64>{1, 2, 3}));
            QCOMPARE(bodyLines.size(), 4); // three lines and the final newline; "\n" in detail stays escaped
            QCOMPARE(QJsonDocument::fromJson(bodyLines[0]).object()[u"detail"_s][u"k"_s].toString(), u"line\nbreak"_s);
            break;
        case https::HttpsSinkConfig::Body::JsonArray: {
            const QJsonArray array = QJsonDocument::fromJson(request.body).array();
            QCOMPARE(array.size(), 3);
            QCOMPARE(array.at(2)[u"seq"_s].toInt(), 3);
            QCOMPARE(array.at(0)[u"action"_s].toString(), u"app.create"_s);
            break;
        }
        case https::HttpsSinkConfig::Body::SplunkHec: {
            QCOMPARE(bodyLines.size(), 4);
            const QJsonObject first = QJsonDocument::fromJson(bodyLines[0]).object();
            QCOMPARE(first[u"event"_s][u"seq"_s].toInt(), 1);
            QCOMPARE(first[u"sourcetype"_s].toString(), u"pando:audit"_s);
            QCOMPARE(first[u"index"_s].toString(), u"audit"_s);
            QCOMPARE(first[u"time"_s].toDouble(), 1'700'000'000.001);
            break;
        }
        case https::HttpsSinkConfig::Body::ElasticBulk: {
            QCOMPARE(bodyLines.size(), 7);
            QVERIFY(request.body.endsWith('\n'));
            const QJsonObject action = QJsonDocument::fromJson(bodyLines[2]).object();
            QCOMPARE(action[u"index"_s][u"_index"_s].toString(), u"audit"_s);
            QCOMPARE(action[u"index"_s][u"_id"_s].toString(), u"h2"_s);
            QCOMPARE(QJsonDocument::fromJson(bodyLines[3]).object()[u"seq"_s].toInt(), 2);
            break;
        }
        }
    }

    void ocsfAndFieldSelection()
    {
        auto c = config(https::HttpsSinkConfig::Body::Ndjson);
        c.settings.fields = {u"action"_s};
        auto batch = lines(2);
        auto body = https::formatBody(batch, c);
        const QJsonObject first = QJsonDocument::fromJson(body.bytes.split('\n').first()).object();
        QCOMPARE(first.keys(), (QStringList{u"action"_s, u"seq"_s}));
        c.settings.format = AuditSinkSettings::Format::Ocsf;
        batch[0].ocsf = QJsonObject{{u"class_uid"_s, 6003}};
        body = https::formatBody(batch, c);
        QCOMPARE(QJsonDocument::fromJson(body.bytes.split('\n').first()).object()[u"class_uid"_s].toInt(), 6003);
    }

    void errorsByStatus()
    {
        https::HttpsSink sink(config(https::HttpsSinkConfig::Body::Ndjson));
        m_receiver->status = 503;
        auto r = deliverServed(sink, lines(1));
        QCOMPARE(r.error().code, ErrorCode::Unavailable);
        QVERIFY2(r.error().message.contains(u"503"_s), qPrintable(r.error().text()));
        m_receiver->status = 401;
        QCOMPARE(deliverServed(sink, lines(1)).error().code, ErrorCode::Unauthorized);
        m_receiver->status = 400;
        QCOMPARE(deliverServed(sink, lines(1)).error().code, ErrorCode::Failed);
    }

    void untrustedCertificate()
    {
        auto c = config(https::HttpsSinkConfig::Body::Ndjson);
        c.caBundle.clear(); // the system CAs do not know the test CA
        https::HttpsSink sink(c);
        auto r = deliverServed(sink, lines(1));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Failed);
        QVERIFY(m_receiver->requests.isEmpty());
    }

    void configFromJson()
    {
        qputenv("PANDO_TEST_HEC_TOKEN", "from-env");
        QFile tokenFile(m_dir.filePath(u"token"_s));
        QVERIFY(tokenFile.open(QIODevice::WriteOnly));
        tokenFile.write("from-file\n");
        tokenFile.close();
        QJsonObject json{{u"name"_s, u"splunk"_s},
                         {u"url"_s, u"https://siem:8088/services/collector"_s},
                         {u"body"_s, u"hec"_s},
                         {u"auth"_s, u"hec"_s},
                         {u"token"_s, u"env:PANDO_TEST_HEC_TOKEN"_s},
                         {u"outcomes"_s, QJsonArray{u"denied"_s}}};
        auto c = https::HttpsSinkConfig::fromJson(json, u"sinks.splunk"_s);
        QVERIFY2(c, qPrintable(c ? QString() : c.error().text()));
        QCOMPARE(c->token, u"from-env"_s);
        QCOMPARE(c->settings.outcomes, QStringList{u"denied"_s});
        json[u"token"_s] = QString(u"file:"_s + tokenFile.fileName());
        QCOMPARE(https::HttpsSinkConfig::fromJson(json, u"sinks.splunk"_s)->token, u"from-file"_s);
        json[u"token"_s] = u"env:PANDO_TEST_NOT_SET"_s;
        auto missing = https::HttpsSinkConfig::fromJson(json, u"sinks.splunk"_s);
        QVERIFY(!missing);
        QCOMPARE(missing.error().where, u"sinks.splunk.token"_s);
        json[u"token"_s] = u"inline"_s;
        json[u"url"_s] = u"http://siem/"_s;
        QCOMPARE(https::HttpsSinkConfig::fromJson(json, u"sinks.splunk"_s).error().where, u"sinks.splunk.url"_s);
        json[u"url"_s] = u"https://siem/"_s;
        json[u"body"_s] = u"xml"_s;
        QCOMPARE(https::HttpsSinkConfig::fromJson(json, u"sinks.splunk"_s).error().where, u"sinks.splunk.body"_s);
    }

    void outageThenRecovery()
    {
        QTemporaryDir dir;
        core::Database db(core::DatabaseConfig::fromUrl(u"sqlite://"_s + dir.filePath(u"pando.db"_s)).value());
        QVERIFY(db.open());
        auto c = config(https::HttpsSinkConfig::Body::Ndjson);
        c.settings.batchSize = 6;
        c.timeoutMs = 2000;
        core::AuditStreamOptions options;
        options.pollMs = 50;
        options.retryDelayMs = 50;
        options.maxRetryDelayMs = 200;
        core::AuditStream stream(db, core::SystemClock::instance(), options);
        QVERIFY(stream.addSink(std::make_shared<https::HttpsSink>(c)));
        core::AuditLog log(db, core::SystemClock::instance());
        const auto write = [&](int count) {
            for (int i = 0; i < count; ++i)
                QVERIFY(log.record(core::Actor{}, u"app.update"_s, u"app/x"_s, u"success"_s));
            stream.notify();
        };
        stream.start();
        write(20);
        QTRY_COMPARE_WITH_TIMEOUT(stream.lag(u"siem"_s).value(), 0, 15'000);

        m_receiver->status = 503; // up but refusing
        write(10);
        QTRY_VERIFY_WITH_TIMEOUT(stream.status(u"siem"_s).value().failures >= 1, 15'000);
        QVERIFY(stream.status(u"siem"_s).value().lastError.contains(u"503"_s));
        m_receiver->close(); // down
        write(10);
        QTRY_VERIFY_WITH_TIMEOUT(stream.status(u"siem"_s).value().lastError.contains(u"POST failed"_s), 15'000);
        QCOMPARE(stream.lag(u"siem"_s).value(), 20);
        QVERIFY(m_receiver->listen(QHostAddress::LocalHost, quint16(m_port)));
        m_receiver->status = 200;
        QTRY_COMPARE_WITH_TIMEOUT(stream.lag(u"siem"_s).value(), 0, 15'000);
        stream.stop();

        QList<qint64> seqs;
        for (const Request &r : std::as_const(m_receiver->requests))
            if (r.method == "POST")
                seqs += seqsOfNdjson(r.body);
        const QSet<qint64> unique(seqs.begin(), seqs.end());
        QCOMPARE(unique.size(), 40);
        for (qint64 s = 1; s <= 40; ++s)
            QVERIFY2(unique.contains(s), qPrintable(u"seq %1 never arrived"_s.arg(s)));
    }
};

QTEST_GUILESS_MAIN(TestHttpsSink)
#include "tst_httpssink.moc"
