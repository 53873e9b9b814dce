// The Docker side of turning a Docker image into an Incus image, against a real Docker engine
// (no incusd needed): a conversion cleans up the export containers its own install left behind
// and never another install's, which may be exporting at that moment.
#include "adapters/kit/dockerapi/dockerclient.h"
#include "adapters/runtime/incus/imageconvert.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

namespace {

const QString TestLabel = u"dev.pando.test"_s;

} // namespace

class TestImageConvert : public QObject {
    Q_OBJECT

private:
    dockerapi::DockerClient m_docker;
    QString m_run;

    // A container as an export of install makes it (created, never started).
    Result<QString> exportContainer(const QString &install)
    {
        const QJsonObject create{{u"Image"_s, test::DockerHarness::baseImage()},
                                 {u"Cmd"_s, QJsonArray{u"/.pando-export"_s}},
                                 {u"Labels"_s, QJsonObject{{u"dev.pando.export"_s, u"true"_s},
                                                           {QString::fromLatin1(LabelInstall), install},
                                                           {TestLabel, m_run}}}};
        auto created = m_docker.post(u"/containers/create"_s, {}, QJsonDocument(create).toJson(QJsonDocument::Compact));
        if (!created)
            return std::unexpected(created.error());
        return created->json().object().value(u"Id"_s).toString();
    }

    bool exists(const QString &id) { return m_docker.get(u"/containers/"_s + id + u"/json"_s).has_value(); }

    QStringList exportsOf(const QString &install)
    {
        const QString filters = QString::fromUtf8(
            QJsonDocument(
                QJsonObject{{u"label"_s, QJsonArray{u"dev.pando.export=true"_s,
                                                    QString(QString::fromLatin1(LabelInstall) + u'=' + install)}}})
                .toJson(QJsonDocument::Compact));
        auto listed = m_docker.get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, filters}});
        QStringList ids;
        if (listed)
            for (const QJsonValue &v : listed->json().array())
                ids << v.toObject().value(u"Id"_s).toString();
        return ids;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(test::DockerHarness::available(&why), u"Docker Engine: "_s + why);
        auto base = test::DockerHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        m_run = QString::number(QRandomGenerator::global()->generate() % 1000000);
    }

    void cleanupTestCase()
    {
        if (m_run.isEmpty())
            return;
        const QString filters =
            QString::fromUtf8(QJsonDocument(QJsonObject{{u"label"_s, QJsonArray{QString(TestLabel + u'=' + m_run)}}})
                                  .toJson(QJsonDocument::Compact));
        if (auto listed = m_docker.get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, filters}})) {
            for (const QJsonValue &v : listed->json().array()) {
                dockerapi::Request remove;
                remove.method = "DELETE";
                remove.path = u"/containers/"_s + v.toObject().value(u"Id"_s).toString();
                remove.addQuery(u"force"_s, u"1"_s);
                discardResult(m_docker.call(remove), "clean-up: a leftover shows in the next run");
            }
        }
    }

    void cleansUpOnlyItsOwnExports()
    {
        const QString mine = u"convert-a-"_s + m_run;
        const QString theirs = u"convert-b-"_s + m_run;
        auto left = exportContainer(mine);
        QVERIFY2(left, qPrintable(left ? QString() : left.error().text()));
        auto running = exportContainer(theirs);
        QVERIFY2(running, qPrintable(running ? QString() : running.error().text()));

        // Every export container counts as stale here, so only the install label decides.
        incus::ConvertRequest request;
        request.dockerImage = test::DockerHarness::baseImage();
        request.busybox = u"/bin/busybox"_s;
        request.description = u"test"_s;
        request.properties = {{QString::fromLatin1(LabelInstall), mine}};
        request.staleExportSeconds = 0;
        auto tarball = incus::convertDockerImage(m_docker, request, CancelToken());
        QVERIFY2(tarball, qPrintable(tarball ? QString() : tarball.error().text()));
        QVERIFY((*tarball)->size() > 0);

        QVERIFY2(!exists(*left), "this install's leftover export stayed");
        QVERIFY2(exists(*running), "another install's export was removed");
        // Its own export's container went when the export ended.
        QCOMPARE(exportsOf(mine), QStringList{});
        QCOMPARE(exportsOf(theirs), QStringList{*running});

        // Without an install id a conversion cannot tell whose an export is, and removes none.
        auto unlabelled = exportContainer(mine);
        QVERIFY(unlabelled);
        request.properties.clear();
        QVERIFY(incus::convertDockerImage(m_docker, request, CancelToken()));
        QVERIFY(exists(*unlabelled));
        QVERIFY(exists(*running));
    }
};

QTEST_GUILESS_MAIN(TestImageConvert)
#include "tst_imageconvert.moc"
