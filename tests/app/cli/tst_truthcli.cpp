// What `pando` says must be true, and its exit code must agree: a start that did not start, a
// trigger of a paused pipeline, the runs of a job that does not exist, hints that name only what
// exists, a secret whose scope was not said, a disabled account. Against an install served from
// this test process with the real pipeline service, as pandod wires it.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

using Run = test::CliRun;

namespace {
// What follows a counter type's check: its get writes the version it was given to num/version;
// the resource num of that type is checked only when asked; a job prints what it got.
const QByteArray CounterTail = R"yaml(    in: |
      v=$(sed 's/.*"version":\({[^}]*}\).*/\1/'); echo "$v" > "$1/version"; echo "{\"version\": $v}"
resources:
- name: num
  type: counter
  check_every: never
jobs:
- name: show
  plan:
  - get: num
  - task: print
    config:
      platform: host
      inputs: [{name: num}]
      run: {path: sh, args: ["-c", "echo got $(cat num/version)"]}
)yaml";
// A resource type on the host whose first check finds n 1 (a first check keeps only the newest
// version, as Concourse's does) and whose later ones find 2 and 3 after it.
const QByteArray Counter = R"yaml(resource_types:
- name: counter
  commands:
    check: |
      if grep -q '"n"'; then echo '[{"n": "1"}, {"n": "2"}, {"n": "3"}]'; else echo '[{"n": "1"}]'; fi
)yaml" + CounterTail;
// One whose versions are n 1 to 5: a check from the newest (or none) finds 5 alone, one from n:K
// finds K to 5, as a git resource's check from a commit finds the commits after it.
const QByteArray History = R"yaml(resource_types:
- name: counter
  commands:
    check: |
      from=$(sed -n 's/.*"n": *"\([0-9]*\)".*/\1/p')
      if [ "$from" = 0 ]; then echo "no version 0 in this history" >&2; exit 3; fi
      if [ -z "$from" ]; then from=5; fi
      printf '['; seq "$from" 5 | sed 's/.*/{"n": "&"}/' | paste -sd, | tr -d '\n'; echo ']'
)yaml" + CounterTail;
// Two jobs on the host: one says hello, one waits long enough to be running when it is renamed.
const QByteArray Renamed = R"yaml(jobs:
- name: quick
  plan:
  - task: hello
    config:
      platform: host
      run: {path: sh, args: ["-c", "echo hello"]}
- name: slow
  plan:
  - task: wait
    config:
      platform: host
      run: {path: sleep, args: ["60"]}
)yaml";
// Never run here: a container task, so that no host-execution setting is involved.
const QByteArray OneJob = "jobs:\n- name: unit\n  plan:\n  - task: t\n    config:\n"
                          "      image_resource: {type: registry-image, source: {repository: busybox}}\n"
                          "      run: {path: \"true\"}\n";
} // namespace

class TestTruthCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void aStartThatDidNotStartFails();
    void triggeringAPausedPipelineIsRefused();
    void runsOfAJobThatDoesNotExist();
    void aTakenRoutePortHintsWhatTheSpecTakes();
    void aPasswordInTheRepoHintsWhatExists();
    void aSecretsScopeMustBeSaid();
    void aDisabledAccountIsToldSoOnlyWithItsPassword();
    void aPinnedVersionIsTheOneGetsUse();
    void aCheckFromAnOlderVersionFindsWhatCameAfter();
    void aRenamedPipelineKeepsItsRunsAndSecrets();
    void theConfigDiffShowsTheLastChange();

private:
    Run pando(const QStringList &args, const QByteArray &input = {}, bool withToken = true);
    QString writeFile(const QByteArray &content);
    // An app whose fake container "answers" on this test's API, so that its deploy's health check passes.
    QByteArray servedSpec(const QString &name) const;

    test::TestInstall m_install;
    QTemporaryDir m_config;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
};

void TestTruthCli::initTestCase()
{
    QVERIFY2(QFile::exists(test::pandoBinary()), "no pando binary");
    m_install.realPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

Run TestTruthCli::pando(const QStringList &args, const QByteArray &input, bool withToken)
{
    return test::runCli(
        args, test::cliEnvironment(m_install.baseUrl(), withToken ? m_install.token : QString(), m_config.path()),
        input);
}

QString TestTruthCli::writeFile(const QByteArray &content)
{
    auto file = std::make_shared<QTemporaryFile>();
    if (!file->open())
        return {};
    file->write(content);
    file->flush();
    m_files << file;
    return file->fileName();
}

QByteArray TestTruthCli::servedSpec(const QString &name) const
{
    return u"name: %1\nsource:\n  repo: https://git.example/%1.git\nrun:\n  port: %2\nhealth:\n  path: /api/v1/health\n"_s
        .arg(name)
        .arg(m_install.port)
        .toUtf8();
}

void TestTruthCli::aStartThatDidNotStartFails()
{
    // The fake runtime's "wontstart" containers exit as soon as they are started again.
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile(servedSpec(u"wontstart"_s))}).code, 0);
    const Run deployed = pando({u"deploy"_s, u"wontstart"_s, u"--wait"_s});
    QVERIFY2(deployed.code == 0, qPrintable(deployed.all()));
    auto containers = m_install.runtime->containers({{QString::fromLatin1(adapters::LabelApp), u"wontstart"_s}});
    QVERIFY(containers && containers->size() == 1);
    QVERIFY(m_install.runtime->stop(containers->first().id, 0));

    const Run run = pando({u"apps"_s, u"start"_s, u"wontstart"_s});
    QVERIFY2(run.code == 1, qPrintable(run.all()));
    QVERIFY2(!run.out.contains(u"stopped"_s), qPrintable(run.out));
    QVERIFY2(run.errLines().value(0).contains(u"did not start: its container is exited (exit code 3)"_s),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(u"pando logs wontstart"_s), qPrintable(run.err));

    // One that starts says so, exit 0.
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile(servedSpec(u"starts"_s))}).code, 0);
    QCOMPARE(pando({u"deploy"_s, u"starts"_s, u"--wait"_s}).code, 0);
    containers = m_install.runtime->containers({{QString::fromLatin1(adapters::LabelApp), u"starts"_s}});
    QVERIFY(containers && containers->size() == 1);
    QVERIFY(m_install.runtime->stop(containers->first().id, 0));
    const Run started = pando({u"apps"_s, u"start"_s, u"starts"_s});
    QVERIFY2(started.code == 0, qPrintable(started.all()));
    QCOMPARE(started.out.trimmed(), u"app starts is running"_s);

    // A stop says so and holds; show tells who stopped it; a restart runs it again.
    const Run stopped = pando({u"apps"_s, u"stop"_s, u"starts"_s});
    QVERIFY2(stopped.code == 0, qPrintable(stopped.all()));
    QCOMPARE(stopped.out.trimmed(), u"app starts is stopped; `pando apps start starts` runs it again"_s);
    const Run shown = pando({u"apps"_s, u"show"_s, u"starts"_s});
    QVERIFY2(shown.out.contains(u"stopped (stopped by "_s), qPrintable(shown.out));
    const Run restarted = pando({u"apps"_s, u"restart"_s, u"starts"_s});
    QVERIFY2(restarted.code == 0, qPrintable(restarted.all()));
    QCOMPARE(restarted.out.trimmed(), u"app starts is running"_s);
    // A restart that does not keep running fails as a start does.
    const Run notAgain = pando({u"apps"_s, u"restart"_s, u"wontstart"_s});
    QVERIFY2(notAgain.code == 1, qPrintable(notAgain.all()));
    QVERIFY2(notAgain.errLines().value(0).contains(u"did not start: its container is exited"_s),
             qPrintable(notAgain.err));
    // Stopping an app that was never deployed says what to do.
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile(servedSpec(u"undeployed"_s))}).code, 0);
    const Run nothing = pando({u"apps"_s, u"stop"_s, u"undeployed"_s});
    QVERIFY2(nothing.code == 1 && nothing.err.contains(u"pando deploy undeployed"_s), qPrintable(nothing.all()));
}

void TestTruthCli::triggeringAPausedPipelineIsRefused()
{
    const QString config = writeFile(OneJob);
    QVERIFY(pando({u"pipelines"_s, u"set"_s, u"paused"_s, u"-c"_s, config, u"--yes"_s}).code == 0);
    QCOMPARE(pando({u"pipelines"_s, u"pause"_s, u"paused"_s}).code, 0);

    // --watch used to queue the run and wait for it silently, for ever.
    const Run run = pando({u"jobs"_s, u"trigger"_s, u"paused/unit"_s, u"--watch"_s});
    QVERIFY2(run.code == 1, qPrintable(run.all()));
    QVERIFY2(run.errLines().value(0).contains(u"pipeline paused is paused (paused by "_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"pando pipelines unpause paused"_s), qPrintable(run.err));
    // Nothing was queued.
    const Run runs = pando({u"runs"_s, u"list"_s, u"paused/unit"_s});
    QCOMPARE(runs.code, 0);
    QCOMPARE(runs.out.trimmed(), u"no runs yet"_s);
}

void TestTruthCli::runsOfAJobThatDoesNotExist()
{
    const QString config = writeFile(OneJob);
    QVERIFY(pando({u"pipelines"_s, u"set"_s, u"ci"_s, u"-c"_s, config, u"--yes"_s}).code == 0);
    const Run run = pando({u"runs"_s, u"list"_s, u"ci/NO-SUCH-JOB"_s});
    QVERIFY2(run.code == 1, qPrintable(run.all()));
    QVERIFY2(!run.out.contains(u"no runs yet"_s), qPrintable(run.out));
    QVERIFY2(run.errLines().value(0).contains(u"pipeline ci has no job named NO-SUCH-JOB"_s), qPrintable(run.err));
    // A job that exists and never ran: no runs yet, exit 0.
    const Run none = pando({u"runs"_s, u"list"_s, u"ci/unit"_s});
    QCOMPARE(none.code, 0);
    QCOMPARE(none.out.trimmed(), u"no runs yet"_s);
}

void TestTruthCli::aTakenRoutePortHintsWhatTheSpecTakes()
{
    const QByteArray spec =
        "source:\n  repo: https://git.example/hello.git\nrun:\n  port: 8080\nroute:\n  port: 42100\n";
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile("name: first\n" + spec)}).code, 0);
    const Run run = pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile("name: second\n" + spec)});
    QCOMPARE(run.code, 1);
    // route.port: 0 is refused by the spec: no hint may offer it.
    QVERIFY2(!run.err.contains(u"0 for a free one"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"leave route.port out"_s), qPrintable(run.err));
}

void TestTruthCli::aPasswordInTheRepoHintsWhatExists()
{
    const Run run = pando({u"apps"_s, u"create"_s, u"-f"_s,
                           writeFile("name: withpw\nsource:\n  repo: https://bob:hunter2@git.example/x.git\n"
                                     "run:\n  port: 8080\n")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).contains(u"the spec is not a secret store"_s), qPrintable(run.err));
    // There is no "connection secret"; what does exist is named: source connections.
    QVERIFY2(!run.err.contains(u"connection secret"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"pando connections add"_s), qPrintable(run.err));
    QVERIFY2(!run.err.contains(u"hunter2"_s), qPrintable(run.err));
}

void TestTruthCli::aSecretsScopeMustBeSaid()
{
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, writeFile(test::helloSpec(u"web"_s))}).code, 0);
    // `pando secrets set web` with the secret's name forgotten: refused before anything is sent.
    Run run = pando({u"secrets"_s, u"set"_s, u"web"_s}, "the-value");
    QCOMPARE(run.code, 2);
    QVERIFY2(run.errLines().value(0).contains(u"\"web\" alone does not say whose secret it is"_s), qPrintable(run.err));
    run = pando({u"secrets"_s, u"list"_s, u"--install"_s});
    QCOMPARE(run.code, 0);
    QVERIFY2(!run.out.contains(u"web"_s), qPrintable(run.out));
    run = pando({u"secrets"_s, u"set"_s, u"web"_s, u"--install"_s}, "the-value");
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    run = pando({u"secrets"_s, u"list"_s});
    // NAME and READ BY: the install's secret is there, under its own name.
    const QStringList rows = run.out.trimmed().split(u'\n');
    QVERIFY2(rows.size() == 2 && rows.at(1).startsWith(u"web "_s), qPrintable(run.out));
    QCOMPARE(pando({u"secrets"_s, u"rm"_s, u"web"_s, u"--install"_s}).code, 0);
}

void TestTruthCli::aDisabledAccountIsToldSoOnlyWithItsPassword()
{
    QVERIFY(pando({u"users"_s, u"create"_s, u"dora"_s, u"--role"_s, u"viewer"_s}, "dora's long password\n").code == 0);
    QCOMPARE(pando({u"users"_s, u"disable"_s, u"dora"_s}).code, 0);
    Run run = pando({u"login"_s, u"--username"_s, u"dora"_s}, "dora's long password\n", false);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).contains(u"the account dora is disabled"_s), qPrintable(run.err));
    QVERIFY2(!run.err.contains(u"wrong"_s), qPrintable(run.err));
    // Without the password nothing is revealed: the same answer as for an account that does not exist.
    run = pando({u"login"_s, u"--username"_s, u"dora"_s}, "not the password\n", false);
    QCOMPARE(run.code, 1);
    const Run nobody = pando({u"login"_s, u"--username"_s, u"nobody"_s}, "not the password\n", false);
    QCOMPARE(run.err, nobody.err);
    QVERIFY2(run.err.contains(u"wrong username or password"_s), qPrintable(run.err));
}

void TestTruthCli::aPinnedVersionIsTheOneGetsUse()
{
    QCOMPARE(
        pando({u"pipelines"_s, u"set"_s, u"pinned"_s, u"-c"_s, writeFile(Counter), u"--unpaused"_s, u"--yes"_s}).code,
        0);
    QVERIFY(m_install.allowHostExecution(u"pinned"_s));
    // Nothing is checked on its own (check_every: never): a check waits for its answer and says
    // what it found: n 1, then 2 and 3.
    const Run checked = pando({u"resources"_s, u"check"_s, u"pinned/num"_s});
    QVERIFY2(checked.code == 0, qPrintable(checked.all()));
    QVERIFY2(checked.out.contains(u"checked num: the newest version is n:1"_s), qPrintable(checked.out));
    const Run again = pando({u"resources"_s, u"check"_s, u"pinned/num"_s});
    QVERIFY2(again.code == 0 && again.out.contains(u"the newest version is n:3"_s), qPrintable(again.all()));
    const Run versions = pando({u"resources"_s, u"versions"_s, u"pinned/num"_s});
    // Newest first.
    QVERIFY2(versions.out.indexOf(u"n:3"_s) < versions.out.indexOf(u"n:1"_s), qPrintable(versions.out));

    // Unpinned, a get takes the newest.
    Run run = pando({u"jobs"_s, u"trigger"_s, u"pinned/show"_s, u"--watch"_s});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(uR"(fetching num at {"n":"3"})"_s), qPrintable(run.out));

    // A version no check found is refused, saying where to look.
    const Run unknown = pando({u"resources"_s, u"pin"_s, u"pinned/num"_s, u"n:9"_s});
    QVERIFY2(unknown.code == 1, qPrintable(unknown.all()));
    QVERIFY2(unknown.err.contains(u"pando resources versions pinned/num"_s), qPrintable(unknown.err));

    const Run pinned = pando({u"resources"_s, u"pin"_s, u"pinned/num"_s, u"n:2"_s});
    QVERIFY2(pinned.code == 0, qPrintable(pinned.all()));
    QVERIFY2(pinned.out.contains(u"pinned num to n:2"_s), qPrintable(pinned.out));
    const Run listed = pando({u"resources"_s, u"list"_s, u"pinned"_s});
    QVERIFY2(listed.out.contains(u"n:2 (by "_s), qPrintable(listed.out));
    run = pando({u"jobs"_s, u"trigger"_s, u"pinned/show"_s, u"--watch"_s});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(uR"(fetching num at {"n":"2"})"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(uR"(got {"n":"2"})"_s), qPrintable(run.out));

    // Unpinned again: the newest once more.
    QCOMPARE(pando({u"resources"_s, u"unpin"_s, u"pinned/num"_s}).code, 0);
    run = pando({u"jobs"_s, u"trigger"_s, u"pinned/show"_s, u"--watch"_s});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(uR"(fetching num at {"n":"3"})"_s), qPrintable(run.out));
    const Run unpinnedAgain = pando({u"resources"_s, u"unpin"_s, u"pinned/num"_s});
    QVERIFY2(unpinnedAgain.code == 1 && unpinnedAgain.err.contains(u"is not pinned"_s),
             qPrintable(unpinnedAgain.all()));
}

void TestTruthCli::aCheckFromAnOlderVersionFindsWhatCameAfter()
{
    QCOMPARE(
        pando({u"pipelines"_s, u"set"_s, u"history"_s, u"-c"_s, writeFile(History), u"--unpaused"_s, u"--yes"_s}).code,
        0);
    QVERIFY(m_install.allowHostExecution(u"history"_s));
    const Run first = pando({u"resources"_s, u"check"_s, u"history/num"_s});
    QVERIFY2(first.code == 0 && first.out.contains(u"the newest version is n:5"_s), qPrintable(first.all()));
    QVERIFY2(!pando({u"resources"_s, u"versions"_s, u"history/num"_s}).out.contains(u"n:3"_s), "only the newest yet");

    // As fly check-resource --from: the versions after n:2 are found (the check starts at n:2,
    // which it was not asked to find), and n:5 stays the newest.
    const Run from = pando({u"resources"_s, u"check"_s, u"history/num"_s, u"n:2"_s});
    QVERIFY2(from.code == 0, qPrintable(from.all()));
    QVERIFY2(from.out.contains(u"checking num from n:2"_s), qPrintable(from.out));
    QVERIFY2(from.out.contains(u"the newest version is n:5"_s), qPrintable(from.out));
    const QString versions = pando({u"resources"_s, u"versions"_s, u"history/num"_s}).out;
    const qsizetype five = versions.indexOf(u"n:5"_s), four = versions.indexOf(u"n:4"_s),
                    three = versions.indexOf(u"n:3"_s);
    QVERIFY2(five >= 0 && five < four && four < three, qPrintable(versions));
    QVERIFY2(!versions.contains(u"n:2"_s) && !versions.contains(u"n:1"_s), qPrintable(versions));
    const Run run = pando({u"jobs"_s, u"trigger"_s, u"history/show"_s, u"--watch"_s});
    QVERIFY2(run.code == 0 && run.out.contains(uR"(fetching num at {"n":"5"})"_s), qPrintable(run.all()));

    // A check that fails says why and exits 1; so does a word that is no version field.
    const Run broken = pando({u"resources"_s, u"check"_s, u"history/num"_s, u"n:0"_s});
    QVERIFY2(broken.code == 1, qPrintable(broken.all()));
    QVERIFY2(broken.err.contains(u"the check failed"_s) && broken.err.contains(u"no version 0"_s),
             qPrintable(broken.err));
    const Run bad = pando({u"resources"_s, u"check"_s, u"history/num"_s, u"n2"_s});
    QVERIFY2(bad.code == 2, qPrintable(bad.all())); // a usage error, before anything is sent
    QVERIFY2(bad.err.contains(u"expected KEY:VALUE, got \"n2\""_s), qPrintable(bad.err));
    // --async returns once it is asked for.
    const Run async = pando({u"resources"_s, u"check"_s, u"history/num"_s, u"--async"_s});
    QVERIFY2(async.code == 0 && async.out.contains(u"checking num;"_s), qPrintable(async.all()));
}

void TestTruthCli::aRenamedPipelineKeepsItsRunsAndSecrets()
{
    QCOMPARE(
        pando({u"pipelines"_s, u"set"_s, u"first-name"_s, u"-c"_s, writeFile(Renamed), u"--unpaused"_s, u"--yes"_s})
            .code,
        0);
    QVERIFY(m_install.allowHostExecution(u"first-name"_s));
    const Run quick = pando({u"jobs"_s, u"trigger"_s, u"first-name/quick"_s, u"--watch"_s});
    QVERIFY2(quick.code == 0 && quick.out.contains(u"hello"_s), qPrintable(quick.all()));
    QCOMPARE(pando({u"secrets"_s, u"set"_s, u"api-key"_s, u"--pipeline"_s, u"first-name"_s}, "s3cret\n").code, 0);

    // Not while a run of it runs: it keeps the name it started under.
    const Run slow = pando({u"jobs"_s, u"trigger"_s, u"first-name/slow"_s, u"--json"_s});
    QVERIFY2(slow.code == 0, qPrintable(slow.all()));
    const QString slowId = QJsonDocument::fromJson(slow.out.toUtf8()).object().value(u"id"_s).toString();
    QVERIFY2(!slowId.isEmpty(), qPrintable(slow.out));
    QTRY_VERIFY_WITH_TIMEOUT(pando({u"runs"_s, u"show"_s, slowId}).out.contains(u"running"_s), 20000);
    const Run busy = pando({u"pipelines"_s, u"rename"_s, u"first-name"_s, u"second-name"_s});
    QVERIFY2(busy.code == 1, qPrintable(busy.all()));
    QVERIFY2(busy.err.contains(u"is running"_s) && busy.err.contains(u"pando runs abort "_s + slowId),
             qPrintable(busy.err));
    QCOMPARE(pando({u"runs"_s, u"abort"_s, slowId}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(pando({u"runs"_s, u"show"_s, slowId}).out.contains(u"aborted"_s), 30000);

    // Renamed: its runs, its secret and its history are there under the new name, none under the old.
    const Run renamed = pando({u"pipelines"_s, u"rename"_s, u"first-name"_s, u"second-name"_s});
    QVERIFY2(renamed.code == 0, qPrintable(renamed.all()));
    QVERIFY2(renamed.out.contains(u"renamed pipeline first-name to second-name"_s), qPrintable(renamed.out));
    QCOMPARE(pando({u"pipelines"_s, u"show"_s, u"first-name"_s}).code, 1);
    const Run runs = pando({u"runs"_s, u"list"_s, u"second-name"_s});
    QVERIFY2(runs.code == 0 && runs.out.contains(u"quick"_s) && runs.out.contains(u"slow"_s), qPrintable(runs.all()));
    const Run secrets = pando({u"secrets"_s, u"list"_s, u"--pipeline"_s, u"second-name"_s});
    QVERIFY2(secrets.code == 0 && secrets.out.contains(u"api-key"_s), qPrintable(secrets.all()));
    const Run again = pando({u"jobs"_s, u"trigger"_s, u"second-name/quick"_s, u"--watch"_s});
    QVERIFY2(again.code == 0 && again.out.contains(u"hello"_s), qPrintable(again.all()));
    QVERIFY2(again.out.contains(u"#2"_s), qPrintable(again.out)); // numbered on from its runs
    const Run audit = pando({u"audit"_s, u"list"_s, u"--action"_s, u"pipeline.rename"_s});
    QVERIFY2(audit.out.contains(u"pipeline/first-name"_s), qPrintable(audit.all()));

    // A name in use, or no name at all, is refused saying so.
    const Run taken = pando({u"pipelines"_s, u"rename"_s, u"second-name"_s, u"pinned"_s});
    QVERIFY2(taken.code == 1 && taken.err.contains(u"a pipeline named pinned exists"_s), qPrintable(taken.all()));
    const Run bad = pando({u"pipelines"_s, u"rename"_s, u"second-name"_s, u"../x"_s});
    QVERIFY2(bad.code == 1 && bad.err.contains(u"must be 1-100 of"_s), qPrintable(bad.all()));
}

void TestTruthCli::theConfigDiffShowsTheLastChange()
{
    const QByteArray before = OneJob;
    QByteArray after = OneJob;
    after.replace("name: unit", "name: unit-tests");
    QCOMPARE(pando({u"pipelines"_s, u"set"_s, u"diffed"_s, u"-c"_s, writeFile(before), u"--yes"_s}).code, 0);
    Run diff = pando({u"pipelines"_s, u"config"_s, u"diffed"_s, u"--diff"_s});
    QVERIFY2(diff.code == 0 && diff.out.contains(u"was not changed since it was created"_s), qPrintable(diff.all()));

    QCOMPARE(pando({u"pipelines"_s, u"set"_s, u"diffed"_s, u"-c"_s, writeFile(after), u"--yes"_s}).code, 0);
    diff = pando({u"pipelines"_s, u"config"_s, u"diffed"_s, u"--diff"_s});
    QVERIFY2(diff.code == 0, qPrintable(diff.all()));
    QVERIFY2(diff.out.contains(u"\n- - name: unit\n"_s), qPrintable(diff.out));
    QVERIFY2(diff.out.contains(u"\n+ - name: unit-tests\n"_s), qPrintable(diff.out));
    // The config as set, to save and set again.
    const Run yaml = pando({u"pipelines"_s, u"config"_s, u"diffed"_s});
    QCOMPARE(yaml.out, QString::fromUtf8(after));
}

QTEST_GUILESS_MAIN(TestTruthCli)
#include "tst_truthcli.moc"
