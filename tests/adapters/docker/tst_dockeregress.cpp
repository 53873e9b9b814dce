// DockerRuntime's egress on the real engine (ContainerSpec::egress, docs/appspec.md
// network.egress): a container without egress reaches nothing off its install's internal network,
// the network is shared by an install's containers and made once under concurrent starts, and a
// container without an install cannot be cut off. Every object carries this run's label.
#include "tests/adapters/docker/dockerruntimetest.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QTcpSocket>
#include <QThread>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using pando::adapters::docker::DockerRuntime;
using pando::test::DockerHarness;

class TestDockerEgress : public pando::test::DockerRuntimeTest {
    Q_OBJECT

private:
    // The install the containers belong to: their network is named after it.
    QString install() const { return QStringLiteral("test-") + m_run; }

    // The ids of the networks carrying this run's install label.
    QStringList installNetworks()
    {
        const QString filters = QStringLiteral("{\"label\":[\"%1=%2\"]}").arg(QLatin1String(LabelInstall), install());
        auto response = m_runtime.client().get(QStringLiteral("/networks"), {{QStringLiteral("filters"), filters}});
        QStringList ids;
        if (!response)
            return {QStringLiteral("error: ") + response.error().text()};
        for (const QJsonValue &v : response->json().array())
            ids.append(v.toObject().value(QLatin1String("Id")).toString());
        return ids;
    }

    QJsonObject rawInspect(const QString &id)
    {
        auto raw = m_runtime.client().get(QStringLiteral("/containers/") + id + QStringLiteral("/json"));
        return raw ? raw->json().object() : QJsonObject();
    }

    // What `GET /` on address:8080 answers from this host, polling for up to timeoutMs.
    QByteArray fetchFromHost(const QString &address, int timeoutMs = 10000)
    {
        QByteArray reply;
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs && !reply.contains("hello from pando")) {
            reply.clear();
            QTcpSocket socket;
            socket.connectToHost(address, 8080);
            if (socket.waitForConnected(1000)) {
                socket.write("GET /index.html HTTP/1.0\r\nHost: test\r\n\r\n");
                while (socket.waitForReadyRead(2000))
                    reply += socket.readAll();
            } else {
                QThread::msleep(50);
            }
        }
        return reply;
    }

    // A container that serves /www on 8080 and, once, tries to fetch target:8080 itself (busybox
    // nc: its wget crashes here), printing REACHED <status line> or UNREACHED, then PROBE-DONE.
    ContainerSpec prober(const QString &what, bool egress, const QString &target)
    {
        ContainerSpec spec;
        spec.name = name(what);
        spec.image = DockerHarness::baseImage();
        const QString script =
            QStringLiteral("httpd -p 8080 -h /www; ok=; for i in 1 2 3; do "
                           "line=$(printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | busybox nc -w 3 %1 8080 | head -1); "
                           "case \"$line\" in HTTP/*) echo \"REACHED $line\"; ok=1; break;; esac; sleep 1; done; "
                           "[ -n \"$ok\" ] || echo UNREACHED; echo PROBE-DONE; exec sleep 300")
                .arg(target);
        spec.command = {QStringLiteral("sh"), QStringLiteral("-c"), script};
        spec.labels = labels(what);
        spec.labels.insert(QString::fromLatin1(LabelInstall), install());
        spec.port = 8080;
        spec.egress = egress;
        return spec;
    }

    // The prober's verdict line (REACHED ... or UNREACHED) once it printed PROBE-DONE.
    QString probeResult(const QString &id, int timeoutMs = 30000)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs) {
            QString verdict;
            bool done = false;
            for (const LogLine &l : allLogs(id)) {
                if (l.text.startsWith(QLatin1String("REACHED")) || l.text == QLatin1String("UNREACHED"))
                    verdict = l.text;
                done = done || l.text == QLatin1String("PROBE-DONE");
            }
            if (done)
                return verdict;
            QThread::msleep(200);
        }
        return QStringLiteral("(no verdict within %1 ms)").arg(timeoutMs);
    }

private Q_SLOTS:
    void initTestCase() { beginRun(); }

    void cleanupTestCase()
    {
        if (m_run.isEmpty())
            return;
        removeRunObjects();
        // Removing the containers took their network along; anything still here is a leak.
        const QStringList networks = installNetworks();
        for (const QString &id : networks) {
            dockerapi::Request r;
            r.method = "DELETE";
            r.path = QStringLiteral("/networks/") + id;
            discardResult(m_runtime.client().call(r), "clean-up; a network left behind fails the check below");
        }
        QVERIFY2(networks.isEmpty(), qPrintable(networks.join(u' ')));
    }

    void egressNoneIsCutOff()
    {
        // The target serves HTTP on the default bridge, where ordinary containers live.
        ContainerSpec target;
        target.name = name(QStringLiteral("target"));
        target.image = DockerHarness::baseImage();
        target.command = {QStringLiteral("httpd"), QStringLiteral("-f"), QStringLiteral("-p"),
                          QStringLiteral("8080"),  QStringLiteral("-h"), QStringLiteral("/www")};
        target.labels = labels(QStringLiteral("target"));
        target.port = 8080;
        auto targetId = m_runtime.run(target);
        QVERIFY2(targetId, qPrintable(targetId ? QString() : targetId.error().text()));
        auto targetInfo = m_runtime.inspect(*targetId);
        QVERIFY(targetInfo && !targetInfo->address.isEmpty());
        QVERIFY(fetchFromHost(targetInfo->address).contains("hello from pando"));
        QVERIFY(installNetworks().isEmpty());

        auto openId = m_runtime.run(prober(QStringLiteral("open"), true, targetInfo->address));
        QVERIFY2(openId, qPrintable(openId ? QString() : openId.error().text()));
        auto closedId = m_runtime.run(prober(QStringLiteral("closed"), false, targetInfo->address));
        QVERIFY2(closedId, qPrintable(closedId ? QString() : closedId.error().text()));

        // The isolated container sits on the install's internal network and nowhere else.
        const QStringList networks = installNetworks();
        QCOMPARE(networks.size(), 1);
        auto network = m_runtime.client().get(QStringLiteral("/networks/") + networks.first());
        QVERIFY(network);
        const QJsonObject net = network->json().object();
        QCOMPARE(net[u"Name"_qs].toString(), DockerRuntime::noEgressNetworkName(install()));
        QCOMPARE(net[u"Name"_qs].toString(), QStringLiteral("pando-%1-noegress").arg(install()));
        QVERIFY(net[u"Internal"_qs].toBool());
        QCOMPARE(net[u"Options"_qs][u"com.docker.network.bridge.enable_icc"_qs].toString(), QStringLiteral("false"));
        QCOMPARE(net[u"Labels"_qs][QString::fromLatin1(LabelInstall)].toString(), install());
        const QJsonObject closedNetworks = rawInspect(*closedId)[u"NetworkSettings"_qs][u"Networks"_qs].toObject();
        QCOMPARE(closedNetworks.keys(), QStringList{DockerRuntime::noEgressNetworkName(install())});
        const QJsonObject openNetworks = rawInspect(*openId)[u"NetworkSettings"_qs][u"Networks"_qs].toObject();
        QCOMPARE(openNetworks.keys(), QStringList{QStringLiteral("bridge")});

        const QString openVerdict = probeResult(*openId);
        QVERIFY2(openVerdict.startsWith(QLatin1String("REACHED HTTP/1.")), qPrintable(openVerdict));
        const QString closedVerdict = probeResult(*closedId);
        QCOMPARE(closedVerdict, QStringLiteral("UNREACHED"));

        // What the router needs: this host reaches the isolated container at its address.
        auto closedInfo = m_runtime.inspect(*closedId);
        QVERIFY(closedInfo);
        QCOMPARE(closedInfo->address,
                 closedNetworks.value(DockerRuntime::noEgressNetworkName(install()))[u"IPAddress"_qs].toString());
        QVERIFY(!closedInfo->address.isEmpty());
        const QByteArray reply = fetchFromHost(closedInfo->address);
        QVERIFY2(reply.startsWith("HTTP/1.") && reply.contains("hello from pando"), reply.constData());

        // Nor do two isolated apps of the install reach each other on their shared network.
        auto peerId = m_runtime.run(prober(QStringLiteral("peer"), false, closedInfo->address));
        QVERIFY2(peerId, qPrintable(peerId ? QString() : peerId.error().text()));
        QCOMPARE(installNetworks(), networks);
        QCOMPARE(probeResult(*peerId), QStringLiteral("UNREACHED"));
        QVERIFY(m_runtime.remove(*peerId));

        // A stopped container still needs its network to start again; its removal takes it.
        QVERIFY(m_runtime.stop(*closedId, 0));
        QVERIFY(m_runtime.remove(*openId));
        QCOMPARE(installNetworks(), networks);
        QVERIFY(m_runtime.start(*closedId));
        QVERIFY(m_runtime.remove(*closedId));
        QVERIFY2(installNetworks().isEmpty(), qPrintable(installNetworks().join(u' ')));
        QVERIFY(m_runtime.remove(*targetId));
    }

    void egressNetworkSharedAndReused()
    {
        // A network left behind (a crash between create and remove) is simply used again.
        const QJsonObject leftover{{u"Name"_qs, DockerRuntime::noEgressNetworkName(install())},
                                   {u"Internal"_qs, true},
                                   {u"CheckDuplicate"_qs, true},
                                   {u"Labels"_qs, QJsonObject{{QString::fromLatin1(LabelInstall), install()}}}};
        auto made = m_runtime.client().post(QStringLiteral("/networks/create"), {},
                                            QJsonDocument(leftover).toJson(QJsonDocument::Compact));
        QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
        const QString leftoverId = made->json().object()[u"Id"_qs].toString();
        // And a second one by the same name, as a race on an engine before API 1.44 can leave:
        // the engine then refuses to start a container that names its network only by name.
        QJsonObject duplicate = leftover;
        duplicate[u"CheckDuplicate"_qs] = false;
        auto dup = m_runtime.client().post(QStringLiteral("/networks/create"), {},
                                           QJsonDocument(duplicate).toJson(QJsonDocument::Compact));
        QVERIFY2(dup, qPrintable(dup ? QString() : dup.error().text()));
        QCOMPARE(installNetworks().size(), 2);

        // Two runtimes (as two processes: separate locks) start isolated containers at once.
        DockerRuntime other;
        Result<QString> a = QString(), b = QString();
        std::thread first([&] { a = m_runtime.run(prober(QStringLiteral("a"), false, QStringLiteral("127.0.0.1"))); });
        std::thread second([&] { b = other.run(prober(QStringLiteral("b"), false, QStringLiteral("127.0.0.1"))); });
        first.join();
        second.join();
        QVERIFY2(a, qPrintable(a ? QString() : a.error().text()));
        QVERIFY2(b, qPrintable(b ? QString() : b.error().text()));
        const QString netName = DockerRuntime::noEgressNetworkName(install());
        QCOMPARE(rawInspect(*a)[u"NetworkSettings"_qs][u"Networks"_qs][netName][u"NetworkID"_qs].toString(),
                 leftoverId);
        QCOMPARE(rawInspect(*b)[u"NetworkSettings"_qs][u"Networks"_qs][netName][u"NetworkID"_qs].toString(),
                 leftoverId);
        QVERIFY(m_runtime.stop(*a, 0));
        QVERIFY(m_runtime.start(*a)); // as the reconciler restarts a stopped app

        QVERIFY(other.remove(*b));                            // the unused duplicate goes with it
        QCOMPARE(installNetworks(), QStringList{leftoverId}); // a still uses it
        QVERIFY(m_runtime.remove(*a));
        QVERIFY2(installNetworks().isEmpty(), qPrintable(installNetworks().join(u' ')));

        // Without a leftover, concurrent first uses in one process (concurrent deploys of one
        // install) share one network.
        const auto networkOf = [&](const QString &id) {
            return rawInspect(id)[u"NetworkSettings"_qs][u"Networks"_qs][netName][u"NetworkID"_qs].toString();
        };
        a = QString();
        b = QString();
        std::thread third([&] { a = m_runtime.run(prober(QStringLiteral("c"), false, QStringLiteral("127.0.0.1"))); });
        std::thread fourth([&] { b = m_runtime.run(prober(QStringLiteral("d"), false, QStringLiteral("127.0.0.1"))); });
        third.join();
        fourth.join();
        QVERIFY2(a, qPrintable(a ? QString() : a.error().text()));
        QVERIFY2(b, qPrintable(b ? QString() : b.error().text()));
        QVERIFY(!networkOf(*a).isEmpty());
        QCOMPARE(networkOf(*b), networkOf(*a));
        QCOMPARE(installNetworks(), QStringList{networkOf(*a)});
        QVERIFY(m_runtime.remove(*a));
        QVERIFY(m_runtime.remove(*b));
        QVERIFY2(installNetworks().isEmpty(), qPrintable(installNetworks().join(u' ')));

        // Two processes racing may both get past the engine's best-effort duplicate check (API
        // 1.41); then each container is bound to its network by id, so both still start, stay
        // isolated, and no network outlives its containers.
        for (int round = 0; round < 3; ++round) {
            a = QString();
            b = QString();
            std::thread fifth(
                [&] { a = m_runtime.run(prober(QStringLiteral("e"), false, QStringLiteral("127.0.0.1"))); });
            std::thread sixth([&] { b = other.run(prober(QStringLiteral("f"), false, QStringLiteral("127.0.0.1"))); });
            fifth.join();
            sixth.join();
            QVERIFY2(a, qPrintable(a ? QString() : a.error().text()));
            QVERIFY2(b, qPrintable(b ? QString() : b.error().text()));
            for (const QString &id : {*a, *b}) {
                auto net = m_runtime.client().get(QStringLiteral("/networks/") + networkOf(id));
                QVERIFY2(net, qPrintable(net ? QString() : net.error().text()));
                QVERIFY(net->json().object()[u"Internal"_qs].toBool());
                QCOMPARE(m_runtime.inspect(id)->state, QStringLiteral("running"));
            }
            QVERIFY(m_runtime.stop(*b, 0)); // a restart finds its network by id even if two share the name
            QVERIFY(other.start(*b));
            QVERIFY(m_runtime.remove(*a));
            QVERIFY(other.remove(*b));
            QVERIFY2(installNetworks().isEmpty(), qPrintable(installNetworks().join(u' ')));
        }
    }

    void egressNoneNeedsInstall()
    {
        ContainerSpec spec = prober(QStringLiteral("noinstall"), false, QStringLiteral("127.0.0.1"));
        spec.labels.remove(QString::fromLatin1(LabelInstall));
        auto id = m_runtime.run(spec);
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Invalid);
        QVERIFY2(id.error().message.contains(QLatin1String(LabelInstall)), qPrintable(id.error().text()));
        auto left =
            m_runtime.containers({{TestLabel, m_run}, {QString::fromLatin1(LabelApp), QStringLiteral("noinstall")}});
        QVERIFY(left && left->isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestDockerEgress)
#include "tst_dockeregress.moc"
