// The syslog audit sink: RFC 5424 formatting and escaping, and delivery through auditstream to a
// real rsyslogd (imtcp, plain TCP and TLS via gtls), across an outage of the collector.
#include "adapters/auditsink/syslog/syslogsink.h"
#include "core/audit/auditlog.h"
#include "core/auditstream/auditstream.h"
#include "testpki.h"
#include "tests/support/component.h"
#include "tests/support/ports.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using pando::test::unusedPort;
using namespace pando::adapters;

namespace {

// rsyslogd as a child process with its own configuration: imtcp on 127.0.0.1:port, every
// message's raw text appended to out.log, one line each.
class Rsyslog {
public:
    Rsyslog(QString dir, int port, const pando::test::TestPki *tls = nullptr)
        : m_dir(std::move(dir)), m_port(port), m_tls(tls)
    {}
    ~Rsyslog() { stop(); }

    QString outPath() const { return m_dir + u"/out.log"_s; }

    QString start()
    {
        const QString exe = QStandardPaths::findExecutable(u"rsyslogd"_s, {u"/usr/sbin"_s, u"/sbin"_s});
        if (exe.isEmpty())
            return u"rsyslogd is not installed (Debian package rsyslog)"_s;
        QString conf = u"global(workDirectory=\""_s + m_dir + u"\""_s;
        if (m_tls)
            conf += u" defaultNetstreamDriverCAFile=\""_s + m_tls->caCert + u"\" defaultNetstreamDriverCertFile=\""_s +
                    m_tls->serverCert + u"\" defaultNetstreamDriverKeyFile=\""_s + m_tls->serverKey + u"\""_s;
        conf += u")\n"_s;
        if (m_tls)
            conf += u"module(load=\"imtcp\" streamDriver.name=\"gtls\" streamDriver.mode=\"1\""
                    " streamDriver.authMode=\"anon\")\n"_s;
        else
            conf += u"module(load=\"imtcp\")\n"_s;
        conf += u"input(type=\"imtcp\" address=\"127.0.0.1\" port=\""_s + QString::number(m_port) + u"\")\n"_s;
        conf += u"template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")\n"_s;
        conf += u"action(type=\"omfile\" file=\""_s + outPath() + u"\" template=\"raw\")\n"_s;
        QFile file(m_dir + u"/rsyslog.conf"_s);
        if (!file.open(QIODevice::WriteOnly))
            return u"cannot write the rsyslog configuration"_s;
        file.write(conf.toUtf8());
        file.close();
        m_process = std::make_unique<QProcess>();
        m_process->setProcessChannelMode(QProcess::MergedChannels);
        m_process->start(exe, {u"-n"_s, u"-f"_s, file.fileName(), u"-i"_s, m_dir + u"/rsyslogd.pid"_s});
        if (!m_process->waitForStarted(10'000))
            return u"rsyslogd did not start: "_s + m_process->errorString();
        // Ready once the port takes connections.
        for (int i = 0; i < 100; ++i) {
            QTcpSocket probe;
            probe.connectToHost(QHostAddress::LocalHost, quint16(m_port));
            if (probe.waitForConnected(100)) {
                probe.abort();
                return {};
            }
            if (m_process->state() == QProcess::NotRunning)
                return u"rsyslogd exited: "_s + QString::fromUtf8(m_process->readAll());
            QTest::qWait(50);
        }
        return u"rsyslogd did not listen on port "_s + QString::number(m_port) + u": "_s +
               QString::fromUtf8(m_process->readAll());
    }

    void stop()
    {
        if (!m_process)
            return;
        m_process->terminate();
        if (!m_process->waitForFinished(10'000)) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
        m_process.reset();
    }

    QStringList lines() const
    {
        QFile file(outPath());
        if (!file.open(QIODevice::ReadOnly))
            return {};
        QStringList out = QString::fromUtf8(file.readAll()).split(u'\n', Qt::SkipEmptyParts);
        return out;
    }

    // The seq of every message that arrived, duplicates included.
    QList<qint64> seqs() const
    {
        static const QRegularExpression re(u"\\[pando@32473 seq=\"(\\d+)\""_s);
        QList<qint64> out;
        for (const QString &line : lines()) {
            const auto m = re.match(line);
            if (m.hasMatch())
                out.append(m.captured(1).toLongLong());
        }
        return out;
    }

    qsizetype uniqueSeqs() const
    {
        const QList<qint64> all = seqs();
        return QSet<qint64>(all.begin(), all.end()).size();
    }

private:
    QString m_dir;
    int m_port;
    const pando::test::TestPki *m_tls;
    std::unique_ptr<QProcess> m_process;
};

AuditLine sampleLine()
{
    AuditLine line;
    line.seq = 7;
    line.timeMs = 1'700'000'000'123;
    line.actor = u"user:alice"_s;
    line.action = u"app.create"_s;
    line.object = u"app/hello"_s;
    line.outcome = u"success"_s;
    line.requestId = u"r1"_s;
    line.source = u"127.0.0.1"_s;
    line.hash = u"ab"_s;
    return line;
}

} // namespace

class TestSyslogSink : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_n = 0;

    void write(core::Database &db, int count, const QString &actor = u"user:alice"_s,
               const QString &object = u"app/hello"_s)
    {
        core::AuditLog log(db, core::SystemClock::instance());
        for (int i = 0; i < count; ++i)
            QVERIFY(log.record(core::Actor{actor, u"127.0.0.1"_s, u"req-"_s + QString::number(++m_n)}, u"app.update"_s,
                               object, u"success"_s));
    }

    // Runs lines through auditstream into rsyslogd with an outage in the middle, then checks every
    // seq arrived, exactly once after de-duplication, and no message was split.
    void deliverAcrossOutage(bool tls)
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        pando::test::TestPki pki;
        if (tls) {
            pki = pando::test::makeTestPki(dir.path());
            PANDO_REQUIRE_COMPONENT(pki.error.isEmpty(), pki.error);
        }
        const int port = unusedPort();
        QVERIFY(port > 0);
        Rsyslog rsyslog(dir.path(), port, tls ? &pki : nullptr);
        const QString started = rsyslog.start();
        PANDO_REQUIRE_COMPONENT(started.isEmpty(), started);

        core::Database db(core::DatabaseConfig::fromUrl(u"sqlite://"_s + dir.filePath(u"pando.db"_s)).value());
        QVERIFY(db.open());
        syslog::SyslogSinkConfig config;
        config.name = u"rsyslog"_s;
        config.host = u"127.0.0.1"_s;
        config.port = port;
        config.tls = tls;
        config.caBundle = pki.caCert;
        config.timeoutMs = 3000;
        config.settings.batchSize = 8;
        core::AuditStreamOptions options;
        options.pollMs = 50;
        options.retryDelayMs = 50;
        options.maxRetryDelayMs = 200;
        core::AuditStream stream(db, core::SystemClock::instance(), options);
        QVERIFY(stream.addSink(std::make_shared<syslog::SyslogSink>(config)));
        stream.start();

        write(db, 20);
        // One line whose fields try to break out of its message and its structured data.
        write(db, 1, u"user:mal\r\nory\x1b[31m"_s, u"app/x\"] [evil=\"1\\"_s);
        stream.notify();
        QTRY_COMPARE_WITH_TIMEOUT(rsyslog.seqs().size(), 21, 15'000);

        rsyslog.stop();
        write(db, 20);
        stream.notify();
        QTRY_VERIFY_WITH_TIMEOUT(stream.status(u"rsyslog"_s).value().failures >= 1, 15'000);
        QVERIFY(stream.lag(u"rsyslog"_s).value() > 0);
        QVERIFY(!stream.status(u"rsyslog"_s).value().lastError.isEmpty());
        write(db, 9);
        const QString restarted = rsyslog.start();
        QVERIFY2(restarted.isEmpty(), qPrintable(restarted));
        QTRY_COMPARE_WITH_TIMEOUT(stream.lag(u"rsyslog"_s).value(), 0, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(rsyslog.uniqueSeqs(), 50, 15'000);
        stream.stop();
        rsyslog.stop();

        const QList<qint64> seqs = rsyslog.seqs();
        const QSet<qint64> unique(seqs.begin(), seqs.end());
        for (qint64 s = 1; s <= 50; ++s)
            QVERIFY2(unique.contains(s), qPrintable(u"seq %1 never arrived"_s.arg(s)));
        QCOMPARE(unique.size(), 50);
        // Every line of the output is a whole message: none was split by CR/LF.
        const QStringList lines = rsyslog.lines();
        QCOMPARE(lines.size(), seqs.size());
        for (const QString &line : lines)
            QVERIFY2(line.startsWith(u"<109>1 "_s), qPrintable(line));
        bool sawEvil = false;
        for (const QString &line : lines) {
            if (!line.contains(u"seq=\"21\""_s))
                continue;
            sawEvil = true;
            const QString actor = u"actor=\"user:mal\\u000d\\u000aory\\u001b[31m\""_s;
            const QString object = u"object=\"app/x\\\"\\] [evil=\\\"1\\\\\""_s;
            QVERIFY2(line.contains(actor), qPrintable(line));
            QVERIFY2(line.contains(object), qPrintable(line));
            QVERIFY(!line.contains(QChar(0x1b)));
        }
        QVERIFY(sawEvil);
    }

private Q_SLOTS:
    void escapeSdValue_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("escaped");
        QTest::newRow("plain") << u"app/hello"_s << u"app/hello"_s;
        QTest::newRow("quote") << u"a\"b"_s << u"a\\\"b"_s;
        QTest::newRow("backslash") << u"a\\b"_s << u"a\\\\b"_s;
        QTest::newRow("bracket") << u"a]b"_s << u"a\\]b"_s;
        QTest::newRow("open bracket kept") << u"a[b"_s << u"a[b"_s;
        QTest::newRow("crlf") << u"a\r\nb"_s << u"a\\u000d\\u000ab"_s;
        QTest::newRow("ansi") << u"\x1b[31mred"_s << u"\\u001b[31mred"_s;
        QTest::newRow("nel and line separator") << u"a\u0085b\u2028c"_s << u"a\\u0085b\\u2028c"_s;
        QTest::newRow("literal escape text stays apart") << u"\\u000a"_s << u"\\\\u000a"_s;
        QTest::newRow("unicode kept") << u"größe"_s << u"größe"_s;
    }
    void escapeSdValue()
    {
        QFETCH(QString, value);
        QFETCH(QString, escaped);
        QCOMPARE(syslog::escapeSdValue(value), escaped);
    }

    void messageShape()
    {
        syslog::SyslogSinkConfig config;
        config.hostname = u"host one"_s;
        AuditLine line = sampleLine();
        line.detail = u"{\"note\":\"a\\nb\\u001b\"}"_s;
        line.object = u"app/x\u2028y"_s;
        const QByteArray message = syslog::formatMessage(line, config);
        QVERIFY(!message.contains('\n'));
        QVERIFY(!message.contains('\r'));
        QVERIFY(!message.contains('\x1b'));
        QVERIFY(!message.contains("\xE2\x80\xA8")); // U+2028 escaped in SD and in the JSON
        const QString text = QString::fromUtf8(message);
        // <13*8+5>1 TIMESTAMP HOSTNAME APP PROCID MSGID [SD] BOM MSG
        static const QRegularExpression header(
            u"^<109>1 2023-11-14T22:13:20\\.123Z host_one pando \\d+ app\\.create \\[pando@32473 seq=\"7\" actor=\"user:alice\" action=\"app\\.create\" object=\"app/x\\\\u2028y\" outcome=\"success\" requestId=\"r1\" source=\"127\\.0\\.0\\.1\" hash=\"ab\"\\] \\x{FEFF}\\{"_s);
        QVERIFY2(header.match(text).hasMatch(), qPrintable(text));
        const QString seqKey = u"\"seq\":7"_s;
        QVERIFY(text.contains(seqKey));
        QCOMPARE(syslog::frame("hello"), QByteArray("5 hello"));
        line.outcome = u"denied"_s;
        QVERIFY(syslog::formatMessage(line, config).startsWith("<108>1 "));
        line.action = u"very long action with spaces and more than thirty-two characters"_s;
        QVERIFY(syslog::formatMessage(line, config).contains(" very_long_action_with_spaces_and [pando@32473 "));
    }

    void fieldSelection()
    {
        syslog::SyslogSinkConfig config;
        config.settings.fields = {u"action"_s, u"outcome"_s};
        const QString text = QString::fromUtf8(syslog::formatMessage(sampleLine(), config));
        const QString sd = u"[pando@32473 seq=\"7\" action=\"app.create\" outcome=\"success\"]"_s;
        QVERIFY2(text.contains(sd), qPrintable(text));
        QVERIFY(!text.contains(u"alice"_s));
    }

    void configFromJson()
    {
        auto config = syslog::SyslogSinkConfig::fromJson(
            QJsonObject{{u"name"_s, u"siem"_s}, {u"host"_s, u"collector"_s}, {u"actions"_s, u"app."_s}},
            u"sinks.siem"_s);
        QVERIFY2(config, qPrintable(config ? QString() : config.error().text()));
        QVERIFY(config->tls);
        QCOMPARE(config->port, 6514);
        QCOMPARE(config->settings.actionPrefixes, QStringList{u"app."_s});
        auto plain = syslog::SyslogSinkConfig::fromJson(
            QJsonObject{{u"name"_s, u"siem"_s}, {u"host"_s, u"c"_s}, {u"tls"_s, false}}, u"sinks.siem"_s);
        QCOMPARE(plain->port, 514);
        auto bad = syslog::SyslogSinkConfig::fromJson(QJsonObject{{u"name"_s, u"siem"_s}}, u"sinks.siem"_s);
        QVERIFY(!bad);
        QCOMPARE(bad.error().where, u"sinks.siem.host"_s);
        auto badFormat = syslog::SyslogSinkConfig::fromJson(
            QJsonObject{{u"name"_s, u"s"_s}, {u"host"_s, u"c"_s}, {u"format"_s, u"cef"_s}}, u"sinks.s"_s);
        QCOMPARE(badFormat.error().where, u"sinks.s.format"_s);
    }

    void refusedIsUnavailable()
    {
        syslog::SyslogSinkConfig config;
        config.name = u"nobody"_s;
        config.host = u"127.0.0.1"_s;
        config.port = unusedPort();
        config.tls = false;
        syslog::SyslogSink sink(config);
        auto r = sink.deliver({sampleLine()}, CancelToken());
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Unavailable);
        QVERIFY2(r.error().where.contains(QString::number(config.port)), qPrintable(r.error().text()));
    }

    void rsyslogPlainTcp() { deliverAcrossOutage(false); }
    void rsyslogTls() { deliverAcrossOutage(true); }

    void tlsRefusesUntrustedCollector()
    {
        QTemporaryDir dir;
        auto pki = pando::test::makeTestPki(dir.path());
        PANDO_REQUIRE_COMPONENT(pki.error.isEmpty(), pki.error);
        QTemporaryDir otherDir;
        auto other = pando::test::makeTestPki(otherDir.path());
        QVERIFY(other.error.isEmpty());
        const int port = unusedPort();
        Rsyslog rsyslog(dir.path(), port, &pki);
        const QString started = rsyslog.start();
        PANDO_REQUIRE_COMPONENT(started.isEmpty(), started);
        syslog::SyslogSinkConfig config;
        config.name = u"rsyslog"_s;
        config.host = u"127.0.0.1"_s;
        config.port = port;
        config.caBundle = other.caCert; // a CA that did not sign the collector's certificate
        config.timeoutMs = 3000;
        syslog::SyslogSink sink(config);
        auto r = sink.deliver({sampleLine()}, CancelToken());
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Failed);
    }
};

QTEST_GUILESS_MAIN(TestSyslogSink)
#include "tst_syslogsink.moc"
