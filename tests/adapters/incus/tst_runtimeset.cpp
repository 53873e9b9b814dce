// RuntimeSet's routing, with two recording runtimes: builds go where the request says, ids of
// the second runtime come back prefixed and every later call follows them home.
#include "adapters/runtime/set/runtimeset.h"

#include <QTest>

using namespace pando;
using namespace pando::adapters;

namespace {

class Recorder : public Runtime {
public:
    explicit Recorder(QString kind) : m_kind(std::move(kind)) {}
    QStringList calls;
    bool down = false;

    RuntimeCapabilities capabilities() override { return RuntimeCapabilities{.kind = m_kind}; }
    Status ping() override { return {}; }
    Result<QString> build(const BuildRequest &r, const CancelToken &,
                          const std::function<void(const QString &)> &) override
    {
        calls << QStringLiteral("build ") + r.tag;
        return m_kind + QStringLiteral("-image");
    }
    Result<QString> run(const ContainerSpec &spec) override
    {
        calls << QStringLiteral("run ") + spec.image;
        return spec.name;
    }
    Result<ContainerInfo> inspect(const QString &id) override
    {
        calls << QStringLiteral("inspect ") + id;
        return ContainerInfo{.id = id, .name = id};
    }
    Result<QList<ContainerInfo>> containers(const Labels &) override
    {
        if (down)
            return fail(ErrorCode::Unavailable, m_kind + QStringLiteral(" is down"));
        return QList<ContainerInfo>{ContainerInfo{.id = m_kind + QStringLiteral("-c")}};
    }
    Status start(const QString &id) override { return record(QStringLiteral("start ") + id); }
    Status stop(const QString &id, int) override { return record(QStringLiteral("stop ") + id); }
    Status remove(const QString &id) override { return record(QStringLiteral("remove ") + id); }
    QStringList imageTags{QStringLiteral("t")};
    Labels imageLabels;
    Result<QList<ImageInfo>> images(const Labels &filter) override
    {
        for (auto it = filter.cbegin(); it != filter.cend(); ++it)
            if (imageLabels.value(it.key()) != it.value())
                return QList<ImageInfo>{};
        return QList<ImageInfo>{
            ImageInfo{.id = m_kind + QStringLiteral("-image"), .tags = imageTags, .labels = imageLabels}};
    }
    Status removeImage(const QString &idOrTag) override { return record(QStringLiteral("rmi ") + idOrTag); }
    Result<QList<RuntimeRoom>> rooms() override
    {
        if (down)
            return fail(ErrorCode::Unavailable, m_kind + QStringLiteral(" is down"));
        return Runtime::rooms();
    }
    Status logs(const QString &id, int, bool, const CancelToken &,
                const std::function<void(const LogLine &)> &) override
    {
        return record(QStringLiteral("logs ") + id);
    }

private:
    Status record(const QString &call)
    {
        calls << call;
        return {};
    }
    QString m_kind;
};

} // namespace

class TestRuntimeSet : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void routesByKindAndId()
    {
        auto docker = std::make_shared<Recorder>(QStringLiteral("docker"));
        auto incus = std::make_shared<Recorder>(QStringLiteral("incus"));
        RuntimeSet set;
        set.add(QStringLiteral("docker"), docker);
        set.add(QStringLiteral("incus"), incus);
        QCOMPARE(set.defaultKind(), QStringLiteral("docker"));
        QCOMPARE(set.kinds(), (QStringList{QStringLiteral("docker"), QStringLiteral("incus")}));

        QCOMPARE(set.capabilitiesOf({})->kind, QStringLiteral("docker"));
        QCOMPARE(set.capabilitiesOf(QStringLiteral("incus"))->kind, QStringLiteral("incus"));
        auto none = set.capabilitiesOf(QStringLiteral("kubernetes"));
        QVERIFY(!none);
        QCOMPARE(none.error().code, ErrorCode::NotFound);
        QVERIFY(none.error().text().contains(QStringLiteral("docker, incus")));

        // The default runtime's ids are left alone; the other's carry its kind.
        CancelToken cancel;
        QCOMPARE(*set.build(BuildRequest{.tag = QStringLiteral("a")}, cancel, {}), QStringLiteral("docker-image"));
        const QString incusImage =
            *set.build(BuildRequest{.runtime = QStringLiteral("incus"), .tag = QStringLiteral("b")}, cancel, {});
        QCOMPARE(incusImage, QStringLiteral("incus:incus-image"));
        QCOMPARE(docker->calls, QStringList{QStringLiteral("build a")});
        QCOMPARE(incus->calls, QStringList{QStringLiteral("build b")});

        // run() follows the image; the container id it returns leads back.
        ContainerSpec spec{.name = QStringLiteral("pando-web-d1"), .image = incusImage};
        const QString id = *set.run(spec);
        QCOMPARE(id, QStringLiteral("incus:pando-web-d1"));
        QCOMPARE(incus->calls.last(), QStringLiteral("run incus-image"));
        QCOMPARE(set.inspect(id)->id, id);
        QVERIFY(set.stop(id, 1) && set.start(id) && set.remove(id));
        QVERIFY(set.logs(id, 0, false, cancel, {}));
        QCOMPARE(incus->calls.mid(2),
                 (QStringList{QStringLiteral("inspect pando-web-d1"), QStringLiteral("stop pando-web-d1"),
                              QStringLiteral("start pando-web-d1"), QStringLiteral("remove pando-web-d1"),
                              QStringLiteral("logs pando-web-d1")}));
        // A Docker image id ("sha256:...") is not mistaken for a kind.
        QCOMPARE(*set.run(ContainerSpec{.name = QStringLiteral("d"), .image = QStringLiteral("sha256:abc")}),
                 QStringLiteral("d"));
        QCOMPARE(docker->calls.last(), QStringLiteral("run sha256:abc"));

        // Listings merge both, prefixed; images by tag go to every runtime.
        auto all = set.containers({});
        QVERIFY(all);
        QCOMPARE(all->size(), 2);
        QCOMPARE(all->at(1).id, QStringLiteral("incus:incus-c"));
        QCOMPARE(set.images({})->at(1).id, QStringLiteral("incus:incus-image"));
        QVERIFY(set.removeImage(QStringLiteral("pando/web:d1")));
        QCOMPARE(docker->calls.last(), QStringLiteral("rmi pando/web:d1"));
        QCOMPARE(incus->calls.last(), QStringLiteral("rmi pando/web:d1"));
        QVERIFY(set.removeImage(QStringLiteral("incus:fp")));
        QCOMPARE(incus->calls.last(), QStringLiteral("rmi fp"));

        // Incus as the default: builds without a kind go there, ids keep their routing.
        QVERIFY(!set.setDefaultKind(QStringLiteral("kubernetes")));
        QVERIFY(set.setDefaultKind(QStringLiteral("incus")));
        QCOMPARE(set.capabilities().kind, QStringLiteral("incus"));
        QCOMPARE(*set.build(BuildRequest{.tag = QStringLiteral("c")}, cancel, {}), QStringLiteral("incus:incus-image"));
        QCOMPARE(set.inspect(QStringLiteral("plain"))->id, QStringLiteral("plain"));
        QCOMPARE(docker->calls.last(), QStringLiteral("inspect plain"));

        // One runtime down: the listing fails rather than show half the containers.
        incus->down = true;
        auto partial = set.containers({});
        QVERIFY(!partial);
        QVERIFY(partial.error().text().contains(QStringLiteral("incus is down")));
    }

    // An install removes only its own image, though the other runtime has one with the same tag.
    void removesOnlyItsOwnImages()
    {
        auto docker = std::make_shared<Recorder>(QStringLiteral("docker"));
        auto incus = std::make_shared<Recorder>(QStringLiteral("incus"));
        const QString tag = QStringLiteral("pando/web:d1");
        docker->imageTags = incus->imageTags = {tag};
        docker->imageLabels = {{QString::fromLatin1(LabelInstall), QStringLiteral("a")}};
        incus->imageLabels = {{QString::fromLatin1(LabelInstall), QStringLiteral("b")}};
        RuntimeSet set;
        set.add(QStringLiteral("docker"), docker);
        set.add(QStringLiteral("incus"), incus);
        const Labels a{{QString::fromLatin1(LabelInstall), QStringLiteral("a")}};

        auto removed = set.removeOwnImage(tag, a);
        QVERIFY(removed);
        QVERIFY(*removed);
        QCOMPARE(docker->calls, QStringList{QStringLiteral("rmi ") + tag});
        QCOMPARE(incus->calls, QStringList{});
        // By id, only the runtime that handed it out is asked, and it checks the owner too.
        auto foreign = set.removeOwnImage(QStringLiteral("incus:incus-image"), a);
        QVERIFY(foreign);
        QVERIFY(!*foreign);
        QCOMPARE(incus->calls, QStringList{});
        auto none = set.removeOwnImage(QStringLiteral("pando/web:d2"), a);
        QVERIFY(none && !*none);
    }

    // One runtime not answering shows as unreachable, with why, beside the other's room (the
    // desktop's status line and `pando capacity` say so).
    void roomsSayWhichRuntimeIsUnreachable()
    {
        auto docker = std::make_shared<Recorder>(QStringLiteral("docker"));
        auto incus = std::make_shared<Recorder>(QStringLiteral("incus"));
        incus->down = true;
        RuntimeSet set;
        set.add(QStringLiteral("docker"), docker);
        set.add(QStringLiteral("incus"), incus);
        auto rooms = set.rooms();
        QVERIFY(rooms);
        QCOMPARE(rooms->size(), 2);
        QCOMPARE(rooms->at(0).kind, QStringLiteral("docker"));
        QVERIFY(rooms->at(0).reachable);
        QCOMPARE(rooms->at(1).kind, QStringLiteral("incus"));
        QVERIFY(!rooms->at(1).reachable);
        QVERIFY2(rooms->at(1).note.contains(QStringLiteral("incus is down")), qPrintable(rooms->at(1).note));
    }
};

QTEST_GUILESS_MAIN(TestRuntimeSet)
#include "tst_runtimeset.moc"
