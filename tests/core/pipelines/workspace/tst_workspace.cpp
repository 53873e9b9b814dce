// Step workspaces: inputs copied from the run's artifacts through input_mapping, outputs as
// empty directories and published back through output_mapping, symlinks copied as symlinks
// (never followed out of the tree), bad layouts refused with nothing left behind.

#include "core/pipelines/treedigest/treedigest.h"
#include "core/pipelines/wire/treefs.h"
#include "core/pipelines/workspace/workspace.h"

#include <QDir>
#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <unistd.h>

using namespace pando;
using namespace pando::core;
using namespace Qt::StringLiterals;

namespace {

void put(const QString &path, const QByteArray &data, mode_t mode = 0644)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
    f.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode), 0);
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// The link as stored, not resolved against where it sits.
QByteArray rawLink(const QString &path)
{
    char buf[4096];
    const ssize_t n = ::readlink(QFile::encodeName(path).constData(), buf, sizeof buf);
    return n < 0 ? QByteArray("<not a link>") : QByteArray(buf, n);
}

} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void inputsOutputsAndMapping();
    void openToTaskUser();
    void symlinksAreCopiedNotFollowed();
    void inPlaceOutputStartsAsTheInput();
    void missingInputs();
    void badLayoutsAreRefused_data();
    void badLayoutsAreRefused();
    void copyTreeKeepsEverything();
    void removeRunDoesNotFollowLinks();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Workspace> m_ws;
};

void TestWorkspace::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    m_ws = std::make_unique<Workspace>(m_tmp->filePath(u"ws"_s));
}

void TestWorkspace::inputsOutputsAndMapping()
{
    auto repo = m_ws->createArtifact(u"run1"_s, u"repo"_s);
    QVERIFY(repo);
    put(*repo + u"/src/main.c"_s, "int main;");
    put(*repo + u"/build.sh"_s, "#!/bin/sh", 0755);

    StepLayout layout;
    layout.inputs = {{u"source"_s, u"src-code"_s, false}};
    layout.outputs = {{u"binary"_s, u"out/bin"_s}};
    layout.inputMapping = {{u"source"_s, u"repo"_s}};
    layout.outputMapping = {{u"binary"_s, u"built"_s}};
    CopyStats stats;
    auto step = m_ws->createStep(u"run1"_s, u"compile"_s, layout, &stats);
    QVERIFY2(step, qPrintable(step ? QString() : step.error().text()));
    QCOMPARE(step->dir, m_ws->stepDir(u"run1"_s, u"compile"_s));
    QCOMPARE(step->inputs.value(u"source"_s), step->dir + u"/src-code"_s);
    QCOMPARE(step->outputs.value(u"binary"_s), step->dir + u"/out/bin"_s);
    QCOMPARE(readAll(step->dir + u"/src-code/src/main.c"_s), QByteArray("int main;"));
    QVERIFY(QFileInfo(step->dir + u"/src-code/build.sh"_s).isExecutable());
    QCOMPARE(*treeDigest(step->dir + u"/src-code"_s), *treeDigest(*repo));
    QCOMPARE(stats.files, qint64(2));
    QCOMPARE(stats.cloned + stats.ranged + stats.plain, qint64(2));
    qInfo() << "copies: cloned" << stats.cloned << "in-kernel" << stats.ranged << "plain" << stats.plain;
    QVERIFY(QDir(step->outputs.value(u"binary"_s)).isEmpty());

    // The step's edits to its input copy do not reach the artifact.
    put(step->dir + u"/src-code/src/main.c"_s, "changed");
    QCOMPARE(readAll(*repo + u"/src/main.c"_s), QByteArray("int main;"));

    put(step->outputs.value(u"binary"_s) + u"/app"_s, "ELF", 0755);
    QVERIFY(m_ws->collectOutputs(u"run1"_s, *step, layout));
    QVERIFY(m_ws->hasArtifact(u"run1"_s, u"built"_s));

    StepLayout next;
    next.inputs = {{u"built"_s, {}, false}};
    auto step2 = m_ws->createStep(u"run1"_s, u"test"_s, next);
    QVERIFY(step2);
    QCOMPARE(readAll(step2->inputs.value(u"built"_s) + u"/app"_s), QByteArray("ELF"));
    QVERIFY(m_ws->removeStep(u"run1"_s, u"test"_s));
    QVERIFY(!QFileInfo::exists(step2->dir));
    QCOMPARE(m_ws->runs(), QStringList{u"run1"_s});
}

// Under Pando's umask 077 a container task of another user reaches nothing unless the step says
// so; then every directory of the step is 0777 and every file readable and writable by all, while
// the artifact it was copied from keeps its modes.
void TestWorkspace::openToTaskUser()
{
    const mode_t before = ::umask(077);
    const auto restore = qScopeGuard([before] { ::umask(before); });
    auto repo = m_ws->createArtifact(u"run1"_s, u"repo"_s);
    QVERIFY(repo);
    put(*repo + u"/src/main.c"_s, "int main;", 0600);
    put(*repo + u"/build.sh"_s, "#!/bin/sh", 0700);
    const auto mode = [](const QString &path) {
        struct stat st {};
        return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? int(st.st_mode & 07777) : -1;
    };
    StepLayout layout;
    layout.inputs = {{u"repo"_s, u"in/repo"_s, false}};
    layout.outputs = {{u"out"_s, u"deep/out"_s}};

    auto closed = m_ws->createStep(u"run1"_s, u"closed"_s, layout);
    QVERIFY(closed);
    QCOMPARE(mode(closed->dir), 0700);
    QCOMPARE(mode(closed->dir + u"/in/repo/src/main.c"_s), 0600);

    layout.openToTaskUser = true;
    auto open = m_ws->createStep(u"run1"_s, u"open"_s, layout);
    QVERIFY2(open, qPrintable(open ? QString() : open.error().text()));
    for (const QString &dir :
         QStringList{open->dir, open->dir + u"/in"_s, open->dir + u"/in/repo"_s, open->dir + u"/in/repo/src"_s,
                     open->dir + u"/deep"_s, open->dir + u"/deep/out"_s})
        QVERIFY2(mode(dir) == 0777, qPrintable(dir + u" "_s + QString::number(mode(dir), 8)));
    QCOMPARE(mode(open->dir + u"/in/repo/src/main.c"_s), 0666);
    QCOMPARE(mode(open->dir + u"/in/repo/build.sh"_s), 0777);
    QCOMPARE(mode(*repo + u"/src/main.c"_s), 0600);
    // The workspace around the step stays private.
    QCOMPARE(mode(m_ws->runDir(u"run1"_s)), 0700);

    // A cache directory, when asked, is opened itself; its parents are not.
    auto cache = makeDirBeneath(m_tmp->filePath(u"cache"_s), u"a/b"_s, true);
    QVERIFY(cache);
    QCOMPARE(mode(*cache), 0777);
    QCOMPARE(mode(m_tmp->filePath(u"cache/a"_s)), 0700);
}

void TestWorkspace::symlinksAreCopiedNotFollowed()
{
    put(m_tmp->filePath(u"outside/secret"_s), "secret");
    auto repo = m_ws->createArtifact(u"r"_s, u"repo"_s);
    QVERIFY(repo);
    put(*repo + u"/file"_s, "f");
    QVERIFY(QFile::link(m_tmp->filePath(u"outside"_s), *repo + u"/escape"_s));
    QCOMPARE(::symlink("../../../../outside/secret", QFile::encodeName(*repo + u"/rel-escape"_s).constData()), 0);
    QVERIFY(QFile::link(u"file"_s, *repo + u"/inside"_s));
    StepLayout layout;
    layout.inputs = {{u"repo"_s, {}, false}};
    auto step = m_ws->createStep(u"r"_s, u"s"_s, layout);
    QVERIFY2(step, qPrintable(step ? QString() : step.error().text()));
    const QString in = step->inputs.value(u"repo"_s);
    for (const QString &name : {u"escape"_s, u"rel-escape"_s, u"inside"_s}) {
        const QFileInfo copy(in + u'/' + name);
        QVERIFY2(copy.isSymLink(), qPrintable(name));
        QCOMPARE(rawLink(in + u'/' + name), rawLink(*repo + u'/' + name));
    }
    auto entries = walkTree(in);
    QVERIFY(entries);
    QCOMPARE(entries->size(), 4); // nothing from outside came in
    QCOMPARE(*treeDigest(in), *treeDigest(*repo));

    // An artifact that is itself a symlink is not copied through.
    QVERIFY(removeTree(*repo));
    QVERIFY(QFile::link(m_tmp->filePath(u"outside"_s), *repo));
    QVERIFY(!m_ws->hasArtifact(u"r"_s, u"repo"_s));
    QVERIFY(!copyTree(*repo, m_tmp->filePath(u"copy"_s)));
    QVERIFY(!QFileInfo::exists(m_tmp->filePath(u"copy"_s)));
}

void TestWorkspace::inPlaceOutputStartsAsTheInput()
{
    auto repo = m_ws->createArtifact(u"r"_s, u"repo"_s);
    put(*repo + u"/a"_s, "a");
    StepLayout layout;
    layout.inputs = {{u"repo"_s, {}, false}};
    layout.outputs = {{u"repo"_s, {}}};
    auto step = m_ws->createStep(u"r"_s, u"s"_s, layout);
    QVERIFY(step);
    QCOMPARE(step->outputs.value(u"repo"_s), step->inputs.value(u"repo"_s));
    QCOMPARE(readAll(step->outputs.value(u"repo"_s) + u"/a"_s), QByteArray("a"));
    put(step->outputs.value(u"repo"_s) + u"/b"_s, "b");
    QVERIFY(m_ws->collectOutputs(u"r"_s, *step, layout));
    QCOMPARE(readAll(m_ws->artifactDir(u"r"_s, u"repo"_s) + u"/b"_s), QByteArray("b"));
}

void TestWorkspace::missingInputs()
{
    StepLayout layout;
    layout.inputs = {{u"maybe"_s, {}, true}, {u"needed"_s, {}, false}};
    auto step = m_ws->createStep(u"r"_s, u"s"_s, layout);
    QVERIFY(!step);
    QCOMPARE(step.error().code, ErrorCode::NotFound);
    QCOMPARE(step.error().where, u"inputs.needed"_s);
    QVERIFY(!QFileInfo::exists(m_ws->stepDir(u"r"_s, u"s"_s)));

    QVERIFY(m_ws->createArtifact(u"r"_s, u"needed"_s));
    step = m_ws->createStep(u"r"_s, u"s"_s, layout);
    QVERIFY(step);
    QVERIFY(!step->inputs.contains(u"maybe"_s));
    QVERIFY(!QFileInfo::exists(step->dir + u"/maybe"_s));
    QVERIFY(step->inputs.contains(u"needed"_s));
}

void TestWorkspace::badLayoutsAreRefused_data()
{
    QTest::addColumn<QString>("inputPath");
    QTest::addColumn<QString>("outputPath");
    QTest::addColumn<QString>("where");
    QTest::newRow("dotdot input") << u"../escape"_s << u"out"_s << u"inputs.in"_s;
    QTest::newRow("absolute input") << u"/etc"_s << u"out"_s << u"inputs.in"_s;
    QTest::newRow("nested dotdot output") << u"in"_s << u"a/../../x"_s << u"outputs.out"_s;
    QTest::newRow("absolute output") << u"in"_s << u"/tmp/x"_s << u"outputs.out"_s;
    QTest::newRow("output inside input") << u"in"_s << u"in/sub"_s << u"outputs.out"_s;
    QTest::newRow("input inside output") << u"a/b"_s << u"a"_s << u"outputs.out"_s;
    QTest::newRow("dot only") << u"."_s << u"out"_s << u"inputs.in"_s;
}

void TestWorkspace::badLayoutsAreRefused()
{
    QFETCH(QString, inputPath);
    QFETCH(QString, outputPath);
    QFETCH(QString, where);
    QVERIFY(m_ws->createArtifact(u"r"_s, u"in"_s));
    StepLayout layout;
    layout.inputs = {{u"in"_s, inputPath, false}};
    layout.outputs = {{u"out"_s, outputPath}};
    auto step = m_ws->createStep(u"r"_s, u"s"_s, layout);
    QVERIFY(!step);
    QCOMPARE(step.error().code, ErrorCode::Invalid);
    QCOMPARE(step.error().where, where);
    QVERIFY(!QFileInfo::exists(m_ws->stepDir(u"r"_s, u"s"_s)));
    QVERIFY(!m_ws->createStep(u"../r"_s, u"s"_s, {}));
    QVERIFY(!m_ws->createStep(u"r"_s, u".."_s, {}));
}

void TestWorkspace::copyTreeKeepsEverything()
{
    const QString src = m_tmp->filePath(u"src"_s);
    put(src + u"/a b/c"_s, QByteArray(200'000, 'c'), 0600);
    put(src + u"/x"_s, "", 0755);
    QDir().mkpath(src + u"/empty"_s);
    QCOMPARE(::symlink("/nonexistent", QFile::encodeName(src + u"/dangling"_s).constData()), 0);
    QDir().mkpath(src + u"/ro"_s);
    put(src + u"/ro/f"_s, "f", 0444);
    QCOMPARE(::chmod(QFile::encodeName(src + u"/ro"_s).constData(), 0555), 0);
    auto stats = copyTree(src, m_tmp->filePath(u"dst"_s));
    QVERIFY2(stats, qPrintable(stats ? QString() : stats.error().text()));
    QCOMPARE(*treeDigest(m_tmp->filePath(u"dst"_s)), *treeDigest(src));
    QCOMPARE(copyTree(src, m_tmp->filePath(u"dst"_s)).error().code, ErrorCode::Conflict);

    QCOMPARE(::mkfifo(QFile::encodeName(src + u"/fifo"_s).constData(), 0644), 0);
    auto bad = copyTree(src, m_tmp->filePath(u"dst2"_s));
    QVERIFY(!bad);
    QVERIFY(bad.error().where.endsWith(u"/fifo"_s));
    QVERIFY(!QFileInfo::exists(m_tmp->filePath(u"dst2"_s)));
    QVERIFY(removeTree(m_tmp->path()));
}

void TestWorkspace::removeRunDoesNotFollowLinks()
{
    put(m_tmp->filePath(u"outside/keep"_s), "keep");
    auto a = m_ws->createArtifact(u"r"_s, u"a"_s);
    QVERIFY(QFile::link(m_tmp->filePath(u"outside"_s), *a + u"/link"_s));
    StepLayout layout;
    layout.inputs = {{u"a"_s, {}, false}};
    QVERIFY(m_ws->createStep(u"r"_s, u"s"_s, layout));
    QVERIFY(m_ws->removeRun(u"r"_s));
    QVERIFY(!QFileInfo::exists(m_ws->runDir(u"r"_s)));
    QCOMPARE(readAll(m_tmp->filePath(u"outside/keep"_s)), QByteArray("keep"));
}

QTEST_GUILESS_MAIN(TestWorkspace)
#include "tst_workspace.moc"
