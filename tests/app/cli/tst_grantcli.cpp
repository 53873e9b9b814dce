// `pando grants` and `pando audit sinks` against an install served from this test process.

#include "app/wiring/auditwiring.h"
#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;

using Run = test::CliRun;

class TestGrantCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void usageErrors_data();
    void usageErrors();
    void appGrants();
    void pipelineGrants();
    void auditSinks();

private:
    Run pando(const QStringList &args, const QString &token = {});

    test::TestInstall m_install;
    QTemporaryDir m_config;
    QString m_binary;
};

void TestGrantCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(QStringLiteral("no pando binary at %1").arg(m_binary)));
    m_install.withPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

Run TestGrantCli::pando(const QStringList &args, const QString &token)
{
    return test::runCli(
        args, test::cliEnvironment(m_install.baseUrl(), token.isEmpty() ? m_install.token : token, m_config.path()));
}

void TestGrantCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing role") << QStringList{QStringLiteral("grants"), QStringLiteral("add"),
                                                 QStringLiteral("hello"), QStringLiteral("bob")}
                                  << QStringLiteral("pando: grants add: missing OBJECT USER ROLE");
    QTest::newRow("bad object")
        << QStringList{QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("token/t1")}
        << QStringLiteral(
               "pando: grants list: expected APP, app/APP, pipeline/NAME or connection/NAME, got \"token/t1\"");
    QTest::newRow("empty pipeline")
        << QStringList{QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("pipeline/")}
        << QStringLiteral(
               "pando: grants list: expected APP, app/APP, pipeline/NAME or connection/NAME, got \"pipeline/\"");
}

void TestGrantCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = pando(args);
    QCOMPARE(run.code, 2);
    QCOMPARE(run.err.split(QLatin1Char('\n')).value(0), message);
}

void TestGrantCli::appGrants()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    QTemporaryFile spec;
    QVERIFY(spec.open());
    spec.write(test::helloSpec(QStringLiteral("shared")));
    spec.flush();
    QCOMPARE(
        pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), spec.fileName()}, member).code,
        0);

    Run run = pando({QStringLiteral("grants"), QStringLiteral("add"), QStringLiteral("shared"),
                     QStringLiteral("member2"), QStringLiteral("deployer")},
                    member);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QCOMPARE(run.out.trimmed(), QStringLiteral("member2 now holds deployer on app/shared"));
    // member2 may now deploy it.
    QCOMPARE(pando({QStringLiteral("deploy"), QStringLiteral("shared")}, member2).code, 0);

    run = pando({QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("app/shared")}, member);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.startsWith(QStringLiteral("USER")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\nmember +owner "))), qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\nmember2 +deployer "))), qPrintable(run.out));

    run = pando({QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("shared"), QStringLiteral("--json")},
                member);
    QCOMPARE(run.code, 0);
    const QJsonObject listed = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(listed.value(QStringLiteral("object")).toString(), QStringLiteral("app/shared"));
    QCOMPARE(listed.value(QStringLiteral("grants")).toArray().size(), 2);

    // Errors come from the server, one line each.
    run = pando({QStringLiteral("grants"), QStringLiteral("add"), QStringLiteral("shared"), QStringLiteral("ghost"),
                 QStringLiteral("viewer")},
                member);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.startsWith(QStringLiteral("pando: user: there is no user \"ghost\"")), qPrintable(run.err));
    run = pando({QStringLiteral("grants"), QStringLiteral("add"), QStringLiteral("shared"), QStringLiteral("member2"),
                 QStringLiteral("boss")},
                member);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("the roles are: owner, deployer, viewer")), qPrintable(run.err));
    // Someone else's app.
    run = pando({QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("shared")}, member2);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("needs one of the grants owner on app/shared")), qPrintable(run.err));

    run = pando({QStringLiteral("grants"), QStringLiteral("rm"), QStringLiteral("shared"), QStringLiteral("member2"),
                 QStringLiteral("deployer"), QStringLiteral("--json")},
                member);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QCOMPARE(QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("status")).toString(),
             QStringLiteral("removed"));
    QCOMPARE(pando({QStringLiteral("deploy"), QStringLiteral("shared")}, member2).code, 1);
    run = pando({QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--object"),
                 QStringLiteral("app/shared"), QStringLiteral("--action"), QStringLiteral("grant.remove")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QStringLiteral("grant.remove")), qPrintable(run.out));
}

void TestGrantCli::pipelineGrants()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    const QByteArray pipeline = "resources:\n- name: repo\n  type: git\njobs:\n- name: unit\n  plan:\n  - get: repo\n";
    QTemporaryFile config;
    QVERIFY(config.open());
    config.write(pipeline);
    config.flush();
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"),
                    config.fileName(), QStringLiteral("--unpaused"), QStringLiteral("--yes")})
                 .code,
             0);
    m_install.pipelines->setAutoPlay(false);
    QCOMPARE(pando({QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/unit")}, member).code, 1);
    Run run = pando({QStringLiteral("grants"), QStringLiteral("add"), QStringLiteral("pipeline/ci"),
                     QStringLiteral("member"), QStringLiteral("operator")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QCOMPARE(run.out.trimmed(), QStringLiteral("member now holds operator on pipeline/ci"));
    QCOMPARE(pando({QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/unit")}, member).code, 0);
    run = pando({QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("pipeline/ci")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\nmember +operator "))), qPrintable(run.out));
    run = pando({QStringLiteral("grants"), QStringLiteral("rm"), QStringLiteral("pipeline/ci"),
                 QStringLiteral("member"), QStringLiteral("operator")});
    QCOMPARE(run.code, 0);
    QCOMPARE(run.out.trimmed(), QStringLiteral("member no longer holds operator on pipeline/ci"));
    // Left: the administrator who set it owns it.
    run = pando({QStringLiteral("grants"), QStringLiteral("list"), QStringLiteral("pipeline/ci")});
    QCOMPARE(run.code, 0);
    const QStringList rows = run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 2);
    QVERIFY2(rows[1].contains(QRegularExpression(QStringLiteral("^admin +owner "))), qPrintable(run.out));
}

void TestGrantCli::auditSinks()
{
    Run run = pando({QStringLiteral("audit"), QStringLiteral("sinks")});
    QCOMPARE(run.code, 0);
    QCOMPARE(run.out.trimmed(), QStringLiteral("no audit sinks (pandod --audit-sinks FILE starts them)"));

    // A collector that refuses connections: the sink falls behind and says why.
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }
    QTemporaryFile file;
    QVERIFY(file.open());
    file.write(QStringLiteral(R"({"sinks":[{"kind":"syslog","name":"siem","host":"127.0.0.1","port":%1,"tls":false,)"
                              R"("timeoutMs":1000}]})")
                   .arg(port)
                   .toUtf8());
    file.flush();
    auto stream = wiring::startAuditSinks(*m_install.engine, file.fileName());
    QVERIFY2(stream, qPrintable(stream ? QString() : stream.error().text()));
    const auto sink = [this] {
        const Run r = pando({QStringLiteral("audit"), QStringLiteral("sinks"), QStringLiteral("--json")});
        return QJsonDocument::fromJson(r.out.toUtf8())
            .object()
            .value(QStringLiteral("sinks"))
            .toArray()
            .first()
            .toObject();
    };
    QTRY_VERIFY_WITH_TIMEOUT(!sink().value(QStringLiteral("last_error")).toString().isEmpty(), 15000);
    run = pando({QStringLiteral("audit"), QStringLiteral("sinks")});
    QCOMPARE(run.code, 0);
    const QStringList lines = run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].contains(
                 QRegularExpression(QStringLiteral("^NAME +KIND +CURSOR +NEWEST +LAG +LAST DELIVERY +LAST ERROR"))),
             qPrintable(run.out));
    const QRegularExpressionMatch row =
        QRegularExpression(QStringLiteral("^siem +syslog +0 +(\\d+) +(\\d+) +- +\\S")).match(lines[1]);
    QVERIFY2(row.hasMatch(), qPrintable(run.out));
    QVERIFY(row.captured(2).toLongLong() > 0);
    QCOMPARE(row.captured(1), row.captured(2));

    // The collector comes up: the backlog goes out.
    QTcpServer collector;
    QVERIFY2(collector.listen(QHostAddress::LocalHost, port), qPrintable(collector.errorString()));
    connect(&collector, &QTcpServer::newConnection, this, [&collector] {
        while (QTcpSocket *socket = collector.nextPendingConnection())
            connect(socket, &QTcpSocket::readyRead, socket, [socket] { socket->readAll(); });
    });
    QTRY_VERIFY_WITH_TIMEOUT(sink().value(QStringLiteral("lag")).toInteger() == 0, 30000);
    const QJsonObject up = sink();
    QVERIFY(up.value(QStringLiteral("last_error")).isNull());
    QVERIFY(up.value(QStringLiteral("last_delivery_ms")).toInteger() > 0);
    (*stream)->stop();
}

QTEST_GUILESS_MAIN(TestGrantCli)
#include "tst_grantcli.moc"
