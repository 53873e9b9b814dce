// The app detail's Settings and Events tabs' models against a real API server (fake adapters)
// through RemoteSession: the spec text round-trips through the engine, an edit shows its diff
// before anything is sent and saves as a new spec revision, a refused edit carries the engine's
// field, message and hint and changes nothing; secrets are listed by name only; services show
// what the app reaches them by and back up into a file; the Events model lists the app's deploys
// from the audit log, newest first, with who did them, reads older deploys on request, and a
// member is told the audit log is not theirs to read while live events still arrive.

#include "app/desktop/session/remotesession.h"
#include "qml/apps/appcommand.h"
#include "qml/apps/appeventsmodel.h"
#include "qml/apps/appsettings.h"
#include "qml/apps/spectext.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : test::describe(r.error())))

class TestAppSettings : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

    QByteArray appSpec(const QString &name, const QByteArray &extra = {}) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"  env:\n    GREETING: hello\n  resources:\n    memory: 256Mi\n    cpus: 0.5\n"
               u"health:\n  path: /api/v1/health\n"_s.arg(name)
                   .arg(m_install.port)
                   .toUtf8() +
               extra;
    }

    static QStringList changed(const AppSettings &settings)
    {
        QStringList lines;
        for (const QVariant &v : settings.diff()) {
            const QVariantMap line = v.toMap();
            if (line.value(u"kind"_s).toString() != u" "_s)
                lines << line.value(u"kind"_s).toString() + line.value(u"text"_s).toString();
        }
        return lines;
    }

    std::unique_ptr<AppSettings> loaded(const QString &app)
    {
        auto settings = std::make_unique<AppSettings>();
        settings->setSession(m_session.get());
        settings->setApp(app);
        [&] {
            QTRY_VERIFY_WITH_TIMEOUT(!settings->specText().isEmpty() || !settings->error().isEmpty(), 10000);
        }();
        return settings;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
    }

    void lineDiffMarksOnlyWhatChanged()
    {
        const QList<DiffLine> diff = lineDiff(u"a\nb\nc\n"_s, u"a\nB\nc\nd\n"_s);
        const QList<DiffLine> expected{{DiffLine::Kind::Same, u"a"_s},
                                       {DiffLine::Kind::Removed, u"b"_s},
                                       {DiffLine::Kind::Added, u"B"_s},
                                       {DiffLine::Kind::Same, u"c"_s},
                                       {DiffLine::Kind::Added, u"d"_s}};
        QCOMPARE(diff, expected);
        // Strings YAML would read as something else stay strings.
        const QString text = specYaml(QJsonObject{
            {u"run"_s,
             QJsonObject{{u"env"_s, QJsonObject{{u"A"_s, u"8080"_s}, {u"B"_s, u"yes"_s}, {u"C"_s, u"x: y"_s}}}}}});
        QVERIFY2(text.contains(u"A: \"8080\""_s) && text.contains(u"B: \"yes\""_s) && text.contains(u"C: \"x: y\""_s),
                 qPrintable(text));
    }

    void editShowsTheDiffAndSavesARevision()
    {
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"edited"_s), done); }));
        auto settings = loaded(u"edited"_s);
        QVERIFY2(settings->error().isEmpty(), qPrintable(settings->error()));
        QVERIFY(!settings->isModified());
        QCOMPARE(settings->draft().value(u"run.resources.memory"_s).toString(), u"256Mi"_s);
        QCOMPARE(settings->draft().value(u"run.resources.cpus"_s).toString(), u"0.5"_s);
        QVERIFY(!settings->preview()); // nothing changed, nothing to send
        const QString before = settings->specText();
        const QString revision = settings->revisionText();

        // An edit that changes nothing else: the engine's spec read back from the tab's text is
        // the same spec, so only the edited lines differ.
        QCOMPARE(settings->env().size(), 1);
        settings->setEnv(0, u"GREETING"_s, u"hi there"_s);
        settings->addEnv();
        settings->setEnv(1, u"PORT_NAME"_s, u"8080"_s);
        settings->setField(u"health.failures"_s, u"5"_s);
        QVERIFY(settings->isModified());
        QVERIFY(settings->preview());
        QCOMPARE(changed(*settings),
                 QStringList({u"-    GREETING: hello"_s, u"+    GREETING: \"hi there\""_s,
                              u"+    PORT_NAME: \"8080\""_s, u"-  failures: 3"_s, u"+  failures: 5"_s}));
        QCOMPARE(settings->specText(), before); // nothing was sent yet
        QTest::qWait(1100); // the revision is the time of the change, to the minute or the second shown
        QSignalSpy saved(settings.get(), &AppSettings::saved);
        settings->save();
        QVERIFY(saved.wait(10000));
        QVERIFY(!settings->isModified());
        QVERIFY(settings->diff().isEmpty());
        auto app = test::awaitObject([&](auto done) { m_session->app(u"edited"_s, done); });
        VERIFY_OK(app);
        const QJsonObject spec = app->value(u"spec"_s).toObject();
        const QJsonObject env = spec.value(u"run"_s).toObject().value(u"env"_s).toObject();
        QCOMPARE(env.value(u"GREETING"_s).toString(), u"hi there"_s);
        QCOMPARE(env.value(u"PORT_NAME"_s).toString(), u"8080"_s);
        QCOMPARE(spec.value(u"health"_s).toObject().value(u"failures"_s).toInt(), 5);
        QCOMPARE(spec.value(u"run"_s).toObject().value(u"resources"_s).toObject().value(u"memory"_s).toString(),
                 u"256Mi"_s);
        QVERIFY(settings->specText() != before);
        Q_UNUSED(revision);
        QVERIFY(!settings->revisionText().isEmpty());
    }

    void anEnvironmentEditKeepsTheSpecsOwnText()
    {
        // A spec with its writer's comments: changing only variables must not rewrite it.
        const QByteArray written = appSpec(u"commented"_s) + "# keep this note\n";
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(written, done); }));
        auto settings = loaded(u"commented"_s);
        settings->setEnv(0, u"GREETING"_s, u"hi"_s);
        settings->addEnv();
        settings->setEnv(1, u"EXTRA"_s, u"1"_s);
        QVERIFY(settings->preview());
        QSignalSpy saved(settings.get(), &AppSettings::saved);
        settings->save();
        QVERIFY(saved.wait(10000));
        QVERIFY(!settings->isModified());
        auto app = test::awaitObject([&](auto done) { m_session->app(u"commented"_s, done); });
        VERIFY_OK(app);
        QString expected = QString::fromUtf8(written);
        expected.replace(u"    GREETING: hello\n"_s, u"    GREETING: \"hi\"\n    EXTRA: \"1\"\n"_s);
        QCOMPARE(app->value(u"spec_text"_s).toString(), expected);
        // Removing a variable goes the same way.
        const QVariantList rows = settings->env();
        const auto extra = std::find_if(rows.cbegin(), rows.cend(), [](const QVariant &row) {
            return row.toMap().value(u"name"_s).toString() == u"EXTRA"_s;
        });
        QVERIFY(extra != rows.cend());
        settings->removeEnv(int(extra - rows.cbegin()));
        settings->save();
        QVERIFY(saved.wait(10000));
        app = test::awaitObject([&](auto done) { m_session->app(u"commented"_s, done); });
        VERIFY_OK(app);
        QVERIFY(app->value(u"spec_text"_s).toString().endsWith(u"# keep this note\n"_s));
        QVERIFY(!app->value(u"spec_text"_s).toString().contains(u"EXTRA"_s));
        QVERIFY(app->value(u"spec_text"_s).toString().contains(u"GREETING: \"hi\""_s));
    }

    void refusedEditShowsTheEnginesError()
    {
        auto settings = loaded(u"edited"_s);
        const QString before = settings->specText();
        settings->setField(u"health.path"_s, u"no-slash"_s);
        QVERIFY(settings->preview());
        QSignalSpy saveChanged(settings.get(), &AppSettings::saveChanged);
        settings->save();
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isSaving() && !settings->saveError().isEmpty(), 10000);
        QCOMPARE(settings->saveWhere(), u"health.path"_s);
        QVERIFY2(settings->saveError().contains(u"/"_s), qPrintable(settings->saveError()));
        // The draft stays for the user to mend; the engine's spec did not change.
        QVERIFY(settings->isModified());
        auto app = test::awaitObject([&](auto done) { m_session->app(u"edited"_s, done); });
        VERIFY_OK(app);
        QCOMPARE(app->value(u"spec"_s).toObject().value(u"health"_s).toObject().value(u"path"_s).toString(),
                 u"/api/v1/health"_s);
        QCOMPARE(settings->specText(), before);

        // A memory amount the engine cannot read: its words, naming the field.
        settings->discard();
        settings->setField(u"run.resources.memory"_s, u"lots"_s);
        settings->save();
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isSaving() && !settings->saveError().isEmpty(), 10000);
        QCOMPARE(settings->saveWhere(), u"run.resources.memory"_s);

        // Refused here before sending: a value without a name.
        settings->discard();
        settings->addEnv();
        settings->setEnv(settings->env().size() - 1, {}, u"orphan"_s);
        QVERIFY(!settings->preview());
        QCOMPARE(settings->saveWhere(), u"run.env"_s);
    }

    void secretsByNameOnly()
    {
        auto settings = loaded(u"edited"_s);
        QTRY_COMPARE(settings->secrets().size(), 0);
        const QString value = u"value-that-must-not-come-back"_s;
        QSignalSpy set(settings.get(), &AppSettings::secretSet);
        settings->setSecret(u"API_KEY"_s, value);
        QVERIFY(set.wait(10000));
        QTRY_COMPARE(settings->secrets().size(), 1);
        const QVariantMap secret = settings->secrets().first().toMap();
        QCOMPARE(secret.value(u"name"_s).toString(), u"API_KEY"_s);
        QCOMPARE(secret.value(u"injectedAs"_s).toString(), u"env"_s);
        for (const QVariant &field : secret)
            QVERIFY(!field.toString().contains(value));
        // Rotating is setting again; a bad name is the engine's to refuse.
        settings->setSecret(u"API_KEY"_s, u"another value"_s);
        QVERIFY(set.wait(10000));
        settings->setSecret(u"no spaces allowed"_s, value);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->secretError().isEmpty(), 10000);
        QSignalSpy removed(settings.get(), &AppSettings::secretRemoved);
        settings->removeSecret(u"API_KEY"_s);
        QVERIFY(removed.wait(10000));
        QTRY_COMPARE(settings->secrets().size(), 0);
    }

    void servicesAndBackup()
    {
        const QByteArray spec = appSpec(u"withdb"_s, "services:\n  db:\n    kind: postgres\n");
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(spec, done); }));
        auto settings = loaded(u"withdb"_s);
        test::EventLog events(*m_session);
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"withdb"_s, {}, done); });
        VERIFY_OK(queued);
        QVERIFY(!events.waitFor(u"deploy.succeeded"_s, queued->value(u"id"_s).toString()).isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(settings->services().size(), 1, 10000);
        const QVariantMap db = settings->services().first().toMap();
        QCOMPARE(db.value(u"slot"_s).toString(), u"db"_s);
        QCOMPARE(db.value(u"status"_s).toString(), u"running"_s);
        QVERIFY2(db.value(u"variables"_s).toString().contains(u"DB_URL"_s),
                 qPrintable(db.value(u"variables"_s).toString()));
        QTRY_VERIFY(!settings->capacity().isEmpty());
        QVERIFY(!settings->capacity().first().toMap().value(u"memory"_s).toString().isEmpty());

        QTemporaryDir dir;
        const QString path = dir.filePath(u"db.sql"_s);
        QVERIFY(settings->suggestedBackupPath(u"db"_s).endsWith(u".sql"_s));
        settings->backup(u"db"_s, path);
        QVERIFY(settings->isBackupBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        QVERIFY2(!settings->backupFailed(), qPrintable(settings->backupText()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.size(), m_install.services->dumpSize.load());
        QVERIFY(file.readAll().startsWith("-- fake dump of withdb/db"));

        // A dump that breaks off leaves no file behind.
        m_install.services->failAfter = 65536;
        const QString broken = dir.filePath(u"broken.sql"_s);
        settings->backup(u"db"_s, broken);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        m_install.services->failAfter = -1;
        QVERIFY(settings->backupFailed());
        QVERIFY(!QFile::exists(broken));
    }

    // The spec's volumes are listed; one is archived into a file as a dump is (the fake runtime's
    // archive says what it was made of), and one the spec does not have fails, leaving no file.
    void volumesAndTheirBackup()
    {
        const QByteArray spec = u"name: vols\nsource:\n  repo: https://git.example/vols.git\nrun:\n  port: %1\n"
                                u"  volumes:\n    - {name: data, path: /data, size: 64Mi}\n"
                                u"health:\n  path: /api/v1/health\n"_s.arg(m_install.port)
                                    .toUtf8();
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(spec, done); }));
        auto settings = loaded(u"vols"_s);
        QCOMPARE(settings->volumes().size(), 1);
        const QVariantMap data = settings->volumes().first().toMap();
        QCOMPARE(data.value(u"name"_s).toString(), u"data"_s);
        QCOMPARE(data.value(u"path"_s).toString(), u"/data"_s);
        QCOMPARE(data.value(u"size"_s).toString(), u"64Mi"_s);
        test::EventLog events(*m_session);
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"vols"_s, {}, done); });
        VERIFY_OK(queued);
        QVERIFY(!events.waitFor(u"deploy.succeeded"_s, queued->value(u"id"_s).toString()).isEmpty());

        QTemporaryDir dir;
        QVERIFY(settings->suggestedVolumeBackupPath(u"data"_s).endsWith(u".tar"_s));
        const QString path = dir.filePath(u"data.tar"_s);
        settings->backupVolume(u"data"_s, path);
        QVERIFY(settings->isBackupBusy());
        QCOMPARE(settings->backupSlot(), u"volume/data"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        QVERIFY2(!settings->backupFailed(), qPrintable(settings->backupText()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray archive = file.readAll();
        QVERIFY2(archive.startsWith("archive of v-vols-data through ") && archive.endsWith(" at /data\n"),
                 archive.constData());

        const QString none = dir.filePath(u"none.tar"_s);
        settings->backupVolume(u"cache"_s, none);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        QVERIFY(settings->backupFailed());
        QVERIFY2(settings->backupText().contains(u"no volume named cache"_s), qPrintable(settings->backupText()));
        QVERIFY(!QFile::exists(none));

        // That archive restored: the runtime gets exactly its bytes, and the view says so.
        settings->restoreVolume(u"data"_s, QUrl::fromLocalFile(path).toString());
        QVERIFY(settings->isBackupBusy());
        QCOMPARE(settings->backupSlot(), u"volume/data"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        QVERIFY2(!settings->backupFailed(), qPrintable(settings->backupText()));
        QVERIFY2(settings->backupText().contains(u"restored"_s), qPrintable(settings->backupText()));
        QCOMPARE(m_install.runtime->importedVolume(u"v-vols-data"_s), archive);
        // A file that is no archive: the server's refusal, the volume as it was.
        const QString text = dir.filePath(u"notes.txt"_s);
        QFile notes(text);
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("notes\n");
        notes.close();
        settings->restoreVolume(u"data"_s, text);
        QTRY_VERIFY_WITH_TIMEOUT(!settings->isBackupBusy(), 20000);
        QVERIFY(settings->backupFailed());
        QVERIFY2(settings->backupText().contains(u"not a tar archive"_s), qPrintable(settings->backupText()));
        QCOMPARE(m_install.runtime->importedVolume(u"v-vols-data"_s), archive);
        // No file at all: said before anything is sent.
        settings->restoreVolume(u"data"_s, dir.filePath(u"missing.tar"_s));
        QVERIFY(!settings->isBackupBusy());
        QVERIFY(settings->backupFailed());
        QVERIFY2(settings->backupText().contains(u"missing.tar"_s), qPrintable(settings->backupText()));
    }

    // The Run tab: a command line split into words, run in the app's container (the fake
    // runtime's: `cat` gets no input, so it prints nothing and exits 0), its output and exit code;
    // an empty line, an app with nothing running and the runtime's own exit code are said.
    void runACommandInTheApp()
    {
        QCOMPARE(AppCommand::splitWords(u"sh -c 'env | sort'"_s),
                 std::optional<QStringList>({u"sh"_s, u"-c"_s, u"env | sort"_s}));
        QCOMPARE(AppCommand::splitWords(u"echo \"a \\\"b\\\" c\" d\\ e ''"_s),
                 std::optional<QStringList>({u"echo"_s, u"a \"b\" c"_s, u"d e"_s, QString()}));
        QCOMPARE(AppCommand::splitWords(u"echo 'open"_s), std::nullopt);
        AppCommand command;
        command.setSessionObject(m_session.get());
        command.setApp(u"withdb"_s); // deployed by servicesAndBackup
        QVERIFY(!command.run(u"   "_s));
        QVERIFY(!command.error().isEmpty());
        QVERIFY(command.run(u"migrate --to 'v2 final' warn"_s));
        QVERIFY(command.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!command.isRunning(), 10000);
        QCOMPARE(command.error(), QString());
        QCOMPARE(command.exitCode(), 0);
        QVERIFY2(command.output().contains(u"ran: migrate --to v2 final warn\n"_s) &&
                     command.output().contains(u"warned\n"_s),
                 qPrintable(command.output()));
        QVERIFY(command.run(u"exit 5"_s));
        QTRY_VERIFY_WITH_TIMEOUT(!command.isRunning(), 10000);
        QCOMPARE(command.exitCode(), 5);

        // Without input kept open, a command that reads its input finds it ended.
        QVERIFY(!command.sendInput(u"nobody reads this"_s));
        QVERIFY(command.run(u"cat"_s));
        QTRY_VERIFY_WITH_TIMEOUT(!command.isRunning(), 10000);
        QCOMPARE(command.exitCode(), 0);
        QCOMPARE(command.output(), QString());
        // With it, each line typed reaches the command (a line sent before the stream opened too,
        // after the command), is echoed, and End input ends it.
        command.setInteractive(true);
        QVERIFY(command.run(u"cat"_s));
        QVERIFY(command.isInputOpen());
        QVERIFY(command.sendInput(u"first line"_s));
        QTRY_COMPARE_WITH_TIMEOUT(command.output(), u"first line\nfirst line\n"_s, 10000);
        QVERIFY(command.sendInput(u"zweite Zeile ü"_s));
        QTRY_COMPARE_WITH_TIMEOUT(command.output(), u"first line\nfirst line\nzweite Zeile ü\nzweite Zeile ü\n"_s,
                                  10000);
        QVERIFY(command.isRunning());
        command.endInput();
        QVERIFY(!command.isInputOpen());
        QVERIFY(!command.sendInput(u"too late"_s));
        QTRY_VERIFY_WITH_TIMEOUT(!command.isRunning(), 10000);
        QCOMPARE(command.exitCode(), 0);
        QCOMPARE(command.error(), QString());
        command.setInteractive(false);

        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"idle"_s), done); }));
        command.setApp(u"idle"_s);
        QVERIFY(command.run(u"ls"_s));
        QTRY_VERIFY_WITH_TIMEOUT(!command.isRunning(), 10000);
        QVERIFY2(command.error().contains(u"no running version"_s), qPrintable(command.error()));
        QCOMPARE(command.exitCode(), -1);
    }

    void eventsListTheDeploysNewestFirst()
    {
        AppEventsModel events;
        QAbstractItemModelTester tester(&events, QAbstractItemModelTester::FailureReportingMode::QtTest);
        events.setSession(m_session.get());
        events.setApp(u"withdb"_s);
        QTRY_VERIFY_WITH_TIMEOUT(events.isLoaded() && !events.isLoading(), 10000);
        QVERIFY2(events.historyError().isEmpty(), qPrintable(events.historyError()));
        QStringList titles;
        for (int row = 0; row < events.rowCount(); ++row)
            titles << events.index(row).data(AppEventsModel::TitleRole).toString();
        const qsizetype succeeded = titles.indexOf(AppEventsModel::tr("Deploy succeeded"));
        const qsizetype started = titles.indexOf(AppEventsModel::tr("Deploy started"));
        const qsizetype created = titles.indexOf(AppEventsModel::tr("App created"));
        const qsizetype backup = titles.indexOf(AppEventsModel::tr("Backup of %1").arg(u"db"_s));
        QVERIFY2(succeeded >= 0 && started > succeeded && created > started && backup >= 0 && backup < succeeded,
                 qPrintable(titles.join(u" | "_s)));
        QCOMPARE(events.index(int(started)).data(AppEventsModel::ActorRole).toString(), u"admin"_s);
        QVERIFY(!events.index(int(started)).data(AppEventsModel::TimeTextRole).toString().isEmpty());
        for (int row = 1; row < events.rowCount(); ++row)
            QVERIFY(events.index(row - 1).data(AppEventsModel::TimeMsRole).toLongLong() >=
                    events.index(row).data(AppEventsModel::TimeMsRole).toLongLong());

        // A live event goes on top at once.
        // The deploy may already have finished by the time the test looks, so its newest line
        // (started or succeeded) is on top, and its "Deploy started" line is among the live ones.
        const int before = events.rowCount();
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"withdb"_s, {}, done); });
        VERIFY_OK(queued);
        const QString deploy = u"deploy/"_s + queued->value(u"id"_s).toString();
        QTRY_VERIFY_WITH_TIMEOUT(events.rowCount() > before, 10000);
        QVERIFY(events.index(0).data(AppEventsModel::LiveRole).toBool());
        QCOMPARE(events.index(0).data(AppEventsModel::ObjectRole).toString(), deploy);
        bool startedLive = false;
        for (int row = 0; row < events.rowCount() - before; ++row) {
            const QModelIndex index = events.index(row);
            startedLive |= index.data(AppEventsModel::LiveRole).toBool() &&
                           index.data(AppEventsModel::ObjectRole).toString() == deploy &&
                           index.data(AppEventsModel::TitleRole).toString() == AppEventsModel::tr("Deploy started");
        }
        QVERIFY(startedLive);
    }

    // The deploys whose lines the model shows: the objects of its "Deploy started" rows.
    static QStringList startedDeploys(const AppEventsModel &events)
    {
        QStringList deploys;
        for (int row = 0; row < events.rowCount(); ++row) {
            const QModelIndex index = events.index(row);
            if (index.data(AppEventsModel::TitleRole).toString() == AppEventsModel::tr("Deploy started"))
                deploys << index.data(AppEventsModel::ObjectRole).toString();
        }
        return deploys;
    }

    // More deploys than the tab reads at first: the newest Deploys are shown, and "Show older"
    // adds the rest, keeping the rows shown in their order (inserted, not a new list).
    void olderDeploysAreReadOnRequest()
    {
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"busy"_s), done); }));
        const int total = AppEventsModel::Deploys + 5;
        QStringList ids; // oldest first
        test::EventLog log(*m_session);
        for (int i = 0; i < total; ++i) {
            auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"busy"_s, {}, done); });
            VERIFY_OK(queued);
            // One after the other, so each deploy's lines are older than the next one's.
            QVERIFY(!log.waitFor(u"deploy.succeeded"_s, queued->value(u"id"_s).toString()).isEmpty());
            ids << u"deploy/"_s + queued->value(u"id"_s).toString();
        }
        AppEventsModel events;
        QAbstractItemModelTester tester(&events, QAbstractItemModelTester::FailureReportingMode::QtTest);
        events.setSession(m_session.get());
        events.setApp(u"busy"_s);
        QTRY_VERIFY_WITH_TIMEOUT(events.isLoaded() && !events.isLoading(), 10000);
        QStringList shown = startedDeploys(events);
        QCOMPARE(shown.size(), AppEventsModel::Deploys);
        for (const QString &id : ids.mid(total - AppEventsModel::Deploys))
            QVERIFY2(shown.contains(id), qPrintable(id));
        QVERIFY(events.hasOlder());

        // What is shown, to find again: the rows stay, in their order, new ones among them.
        QStringList before;
        for (int row = 0; row < events.rowCount(); ++row)
            before << events.index(row).data(AppEventsModel::ObjectRole).toString() + u' ' +
                          events.index(row).data(AppEventsModel::TitleRole).toString();
        QSignalSpy reset(&events, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&events, &QAbstractItemModel::rowsInserted);
        events.loadOlder();
        QVERIFY(events.isLoading());
        QTRY_VERIFY_WITH_TIMEOUT(!events.isLoading(), 10000);
        shown = startedDeploys(events);
        QCOMPARE(shown.size(), total);
        for (const QString &id : std::as_const(ids))
            QVERIFY2(shown.contains(id), qPrintable(id));
        // The oldest deploy's start is the last one shown.
        QCOMPARE(shown.last(), ids.first());
        QCOMPARE(reset.size(), 0);
        QVERIFY(!inserted.isEmpty());
        qsizetype found = 0;
        for (int row = 0; row < events.rowCount() && found < before.size(); ++row)
            if (events.index(row).data(AppEventsModel::ObjectRole).toString() + u' ' +
                    events.index(row).data(AppEventsModel::TitleRole).toString() ==
                before.at(found))
                ++found;
        QCOMPARE(found, before.size());
        // Every deploy is read: nothing older is offered, and asking again does nothing.
        QVERIFY(!events.hasOlder());
        events.loadOlder();
        QVERIFY(!events.isLoading());
        QCOMPARE(startedDeploys(events).size(), total);
        for (int row = 1; row < events.rowCount(); ++row)
            QVERIFY(events.index(row - 1).data(AppEventsModel::TimeMsRole).toLongLong() >=
                    events.index(row).data(AppEventsModel::TimeMsRole).toLongLong());
    }

    void aMemberIsToldTheAuditLogIsNotTheirs()
    {
        RemoteSession member(QUrl(m_install.baseUrl()), m_install.tokens.value(u"member"_s));
        member.open();
        QString why;
        QVERIFY2(test::awaitConnected(member, &why), qPrintable(why));
        VERIFY_OK(test::awaitObject([&](auto done) { member.createApp(appSpec(u"members"_s), done); }));
        AppEventsModel events;
        events.setSession(&member);
        events.setApp(u"members"_s);
        QTRY_VERIFY_WITH_TIMEOUT(events.isLoaded() && !events.isLoading(), 10000);
        QVERIFY2(events.historyError().contains(u"audit log"_s), qPrintable(events.historyError()));
        QCOMPARE(events.rowCount(), 0);
        VERIFY_OK(test::awaitObject([&](auto done) { member.deploy(u"members"_s, {}, done); }));
        QTRY_VERIFY_WITH_TIMEOUT(events.rowCount() > 0, 10000);
        QCOMPARE(events.index(events.rowCount() - 1).data(AppEventsModel::TitleRole).toString(),
                 AppEventsModel::tr("Deploy started"));
    }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "tst_appsettings.moc"
