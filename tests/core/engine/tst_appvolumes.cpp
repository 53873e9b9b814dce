// Persistent volumes (AppSpec run.volumes) on real Docker: what an app writes to its volume is
// there again after a redeploy, a rollback and a removal that kept its data; removing an app asks
// what becomes of its volumes; a member may not pick up another app's kept volumes by taking its
// name; deleting the data removes them. The app counts its own starts in /data/boots and serves
// that file, so what it serves is what the volume held.

#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/tarfiles.h"

#include <QDir>
#include <QFileInfo>
#include <QScopeGuard>
#include <QTemporaryDir>

#include <QTest>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;

namespace {

// busybox httpd serving /www, whose boots file is /data/boots after one more line.
GitFiles countingApp(const QByteArray &version)
{
    GitFiles files;
    files.insert(u"Dockerfile"_s,
                 GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 8080\n"
                         "CMD [\"/bin/sh\", \"-c\", \"echo " +
                         version +
                         " >> /data/boots && cp /data/boots /www/boots && exec /bin/httpd -f -p 8080 -h /www\"]\n"});
    files.insert(u"www/index.html"_s, GitFile{version + "\n"});
    return files;
}

QByteArray spec(const QString &repo)
{
    return u"name: notes\nsource:\n  repo: %1\n  ref: main\nrun:\n  port: 8080\n  volumes:\n"
           u"    - {name: data, path: /data, size: 64Mi}\nhealth:\n  path: /boots\n  timeout: 20s\n"_s.arg(repo)
               .toUtf8();
}

} // namespace

class TestAppVolumes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void filesSurviveRedeploysAndRollbacks();
    void backupHoldsTheVolumesFiles();
    void vanishedContainerComesBackWithItsVolume();
    void restoreReplacesTheVolumesFiles();
    void badArchivesTouchNothing();
    void removalAsksAndKeptVolumesComeBack();
    void deletingTheDataRemovesTheVolume();

private:
    QString deployAndWait(const QString &ref = {});
    QByteArray boots();
    QString servingContainer();
    int runInApp(const QString &script); // its exit code
    int auditCount(const QString &action, const QString &outcome);

    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
    QString m_first;
};

void TestAppVolumes::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    m_repo = m_fx->git().createRepository(u"notes"_s);
    QVERIFY(!m_repo.isEmpty());
    m_first = m_fx->git().commit(u"notes"_s, u"main"_s, countingApp("v1"));
    QVERIFY(!m_first.isEmpty());
    QVERIFY(m_fx->start());
}

void TestAppVolumes::cleanupTestCase()
{
    if (m_fx) {
        if (auto volumes = m_fx->docker().volumes(m_fx->installLabels()))
            for (const adapters::VolumeInfo &volume : std::as_const(*volumes))
                discardResult(m_fx->docker().removeVolume(volume.id), "cleaning up after the test");
        m_fx->cleanDocker();
    }
    m_fx.reset();
}

QString TestAppVolumes::deployAndWait(const QString &ref)
{
    auto deploy = m_fx->engine().deploy(u"notes"_s, ref, core::Actor{});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    const core::DeployView view = m_fx->waitDeploy(deploy->id);
    if (view.record.status != core::DeployStatus::Succeeded)
        qWarning("deploy %s: %s", qPrintable(view.record.id), qPrintable(view.record.error));
    return view.record.status == core::DeployStatus::Succeeded ? view.record.id : QString();
}

QByteArray TestAppVolumes::boots()
{
    auto view = m_fx->engine().app(u"notes"_s);
    if (!view)
        return {};
    return httpGet(QUrl(view->url + u"/boots"_s)).body;
}

QString TestAppVolumes::servingContainer()
{
    auto view = m_fx->engine().app(u"notes"_s);
    if (!view)
        return {};
    auto containers = m_fx->docker().containers(m_fx->installLabels(u"notes"_s, view->record.currentDeploy));
    return containers && containers->size() == 1 ? containers->first().id : QString();
}

int TestAppVolumes::runInApp(const QString &script)
{
    auto code = m_fx->docker().exec(servingContainer(), adapters::ExecRequest{{u"/bin/sh"_s, u"-c"_s, script}},
                                    CancelToken(), nullptr, [](int, QByteArrayView) {});
    if (!code)
        qWarning("%s: %s", qPrintable(script), qPrintable(code.error().text()));
    return code ? *code : -1;
}

int TestAppVolumes::auditCount(const QString &action, const QString &outcome)
{
    core::AuditRepository::Filter filter;
    filter.action = action;
    auto lines = m_fx->engine().auditLines(filter);
    if (!lines)
        return -1;
    return int(std::count_if(lines->cbegin(), lines->cend(),
                             [&outcome](const core::AuditRecord &line) { return line.outcome == outcome; }));
}

void TestAppVolumes::filesSurviveRedeploysAndRollbacks()
{
    auto created = m_fx->engine().createApp(spec(m_repo), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    QVERIFY(!deployAndWait().isEmpty());
    QCOMPARE(boots(), QByteArray("v1\n"));
    // The volume is the app's, labelled so.
    auto volumes = m_fx->docker().volumes(m_fx->installLabels(u"notes"_s));
    QVERIFY(volumes);
    QCOMPARE(volumes->size(), 1);
    QCOMPARE(volumes->first().name, u"data"_s);

    QVERIFY(!m_fx->git().commit(u"notes"_s, u"main"_s, countingApp("v2")).isEmpty());
    QVERIFY(!deployAndWait().isEmpty());
    QCOMPARE(boots(), QByteArray("v1\nv2\n"));

    auto back = m_fx->engine().rollback(u"notes"_s, {}, core::Actor{});
    QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
    QCOMPARE(m_fx->waitDeploy(back->id).record.status, core::DeployStatus::Succeeded);
    QCOMPARE(boots(), QByteArray("v1\nv2\nv1\n"));
}

// A backup is a tar of the volume's files, read through the serving container, in a private
// file of the data directory that the caller then owns; audited. A volume the spec does not have
// is refused naming run.volumes.
void TestAppVolumes::backupHoldsTheVolumesFiles()
{
    auto backup = m_fx->engine().backupVolumeToFile(u"notes"_s, u"data"_s, CancelToken(), core::Actor{});
    QVERIFY2(backup, qPrintable(backup ? QString() : backup.error().text()));
    const auto removeFile = qScopeGuard([&backup] { QFile::remove(backup->path); });
    QCOMPARE(QFileInfo(backup->path).permissions() & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());
    QVERIFY2(backup->fileName.startsWith(u"notes-data-"_s) && backup->fileName.endsWith(u".tar"_s),
             qPrintable(backup->fileName));
    QCOMPARE(backup->bytes, QFileInfo(backup->path).size());
    const QMap<QString, QByteArray> files = tarFiles(backup->path);
    QCOMPARE(files.value(u"data/boots"_s), QByteArray("v1\nv2\nv1\n"));

    auto unknown = m_fx->engine().backupVolumeToFile(u"notes"_s, u"cache"_s, CancelToken(), core::Actor{});
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);
    QCOMPARE(unknown.error().where, u"run.volumes"_s);
    core::AuditRepository::Filter filter;
    filter.action = u"volume.backup"_s;
    auto lines = m_fx->engine().auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(lines->first().object, u"app/notes/volume/data"_s);
    QCOMPARE(lines->first().outcome, u"success"_s);
}

// A container that vanished is made again by the reconciler with the volume mounted, as the
// deploy made it: the app counts on where it left off.
void TestAppVolumes::vanishedContainerComesBackWithItsVolume()
{
    const QString gone = servingContainer();
    QVERIFY(!gone.isEmpty());
    QVERIFY(m_fx->docker().remove(gone));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY2(changes && changes->join(u'\n').contains(u"recreated notes"_s),
             qPrintable(changes ? changes->join(u'\n') : changes.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(boots(), QByteArray("v1\nv2\nv1\nv1\n"), 10000);
}

// A restore puts the volume's files back as the backup had them: what was written since is gone,
// also a file the backup did not have, and the app runs again on the restored files.
void TestAppVolumes::restoreReplacesTheVolumesFiles()
{
    auto backup = m_fx->engine().backupVolumeToFile(u"notes"_s, u"data"_s, CancelToken(), core::Actor{});
    QVERIFY2(backup, qPrintable(backup ? QString() : backup.error().text()));
    const auto removeFile = qScopeGuard([&backup] { QFile::remove(backup->path); });
    const QByteArray saved = tarFiles(backup->path).value(u"data/boots"_s);
    QCOMPARE(saved, QByteArray("v1\nv2\nv1\nv1\n"));

    // Written since: two more starts and a file of its own.
    for (int i = 0; i < 2; ++i) {
        auto restarted = m_fx->engine().restartApp(u"notes"_s, core::Actor{});
        QVERIFY2(restarted, qPrintable(restarted ? QString() : restarted.error().text()));
    }
    QTRY_COMPARE_WITH_TIMEOUT(boots(), saved + "v1\nv1\n", 10000);
    QCOMPARE(runInApp(u"echo x > /data/extra"_s), 0);

    auto restored =
        m_fx->engine().restoreVolumeFromFile(u"notes"_s, u"data"_s, backup->path, CancelToken(), core::Actor{});
    QVERIFY2(restored, qPrintable(restored ? QString() : restored.error().text()));
    // The restored count and the one start since.
    QTRY_COMPARE_WITH_TIMEOUT(boots(), saved + "v1\n", 10000);
    QCOMPARE(runInApp(u"test -e /data/extra"_s), 1);
    QCOMPARE(auditCount(u"volume.restore"_s, u"success"_s), 1);
    // What the restore kept for the time being is gone with it.
    QCOMPARE(QDir(m_fx->dataDir()).entryList({u"restore-backup-*"_s}), QStringList());
}

// An archive that would land outside the volume, or is none, is refused before anything is
// touched: the same container serves the same files.
void TestAppVolumes::badArchivesTouchNothing()
{
    const QString container = servingContainer();
    const QByteArray before = boots();
    QVERIFY(!before.isEmpty());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString escaping = dir.filePath(u"escaping.tar"_s);
    QVERIFY(writeTar(escaping, {{"data/", TarEntry::Type::Directory},
                                {"data/../../etc/cron.d/x", TarEntry::Type::File, "* * * * * root sh\n"}}));
    auto refused = m_fx->engine().restoreVolumeFromFile(u"notes"_s, u"data"_s, escaping, CancelToken(), core::Actor{});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QCOMPARE(refused.error().where, u"archive entry data/../../etc/cron.d/x"_s);

    const QString text = dir.filePath(u"notes.txt"_s);
    QFile file(text);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not an archive\n");
    file.close();
    auto notArchive = m_fx->engine().restoreVolumeFromFile(u"notes"_s, u"data"_s, text, CancelToken(), core::Actor{});
    QVERIFY(!notArchive);
    QCOMPARE(notArchive.error().code, ErrorCode::Invalid);
    QVERIFY2(notArchive.error().message.contains(u"not a tar archive"_s), qPrintable(notArchive.error().text()));

    auto unknown = m_fx->engine().restoreVolumeFromFile(u"notes"_s, u"cache"_s, escaping, CancelToken(), core::Actor{});
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);
    QCOMPARE(unknown.error().where, u"run.volumes"_s);

    QCOMPARE(servingContainer(), container);
    QCOMPARE(boots(), before);
    QCOMPARE(auditCount(u"volume.restore"_s, u"failure"_s), 2);
}

void TestAppVolumes::removalAsksAndKeptVolumesComeBack()
{
    // Without a decision nothing is removed.
    auto asked = m_fx->engine().removeApp(u"notes"_s, core::Actor{});
    QVERIFY(!asked);
    QCOMPARE(asked.error().code, ErrorCode::Invalid);
    QVERIFY2(asked.error().message.contains(u"volumes"_s), qPrintable(asked.error().text()));
    QVERIFY(m_fx->engine().app(u"notes"_s));

    QVERIFY(m_fx->engine().removeApp(u"notes"_s, core::Actor{}, core::Engine::ServiceData::Keep));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(u"notes"_s), 60000);
    auto kept = m_fx->docker().volumes(m_fx->installLabels(u"notes"_s));
    QVERIFY(kept);
    QCOMPARE(kept->size(), 1);

    // Someone who is not an administrator (even one the install lets deploy local repositories)
    // may not take the name and with it the files.
    auto access = m_fx->engine().appAccess();
    QVERIFY(access);
    access->localRepositories = true;
    QVERIFY(m_fx->engine().setAppAccess(*access, core::Actor{}));
    core::Actor member{u"session:mallory"_s, u"127.0.0.1"_s, {}};
    member.userId = u"u-mallory"_s;
    member.role = core::accounts::Role::Member;
    auto taken = m_fx->engine().createApp(spec(m_repo), member);
    QVERIFY(!taken);
    QCOMPARE(taken.error().code, ErrorCode::Conflict);
    QVERIFY2(taken.error().message.contains(u"volumes kept"_s), qPrintable(taken.error().text()));

    // The install's own authority makes it again, and the files are there.
    auto again = m_fx->engine().createApp(spec(m_repo), core::Actor{});
    QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
    QVERIFY(!deployAndWait().isEmpty());
    QVERIFY2(boots().startsWith("v1\nv2\nv1\n"), boots().constData());
}

void TestAppVolumes::deletingTheDataRemovesTheVolume()
{
    QVERIFY(m_fx->engine().removeApp(u"notes"_s, core::Actor{}, core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(u"notes"_s), 60000);
    auto left = m_fx->docker().volumes(m_fx->installLabels(u"notes"_s));
    QVERIFY(left);
    QVERIFY(left->isEmpty());
}

QTEST_GUILESS_MAIN(TestAppVolumes)
#include "tst_appvolumes.moc"
