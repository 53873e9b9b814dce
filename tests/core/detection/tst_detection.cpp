// Detection on real directories: the Dockerfile and context must exist and stay inside the
// checkout after symlinks are resolved; a missing Dockerfile names its path and the candidates.

#include "core/detection/detection.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

constexpr int Ok = -1;

void write(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
}

void link(const QString &target, const QString &linkPath)
{
    QDir().mkpath(QFileInfo(linkPath).absolutePath());
    QVERIFY2(QFile::link(target, linkPath), qPrintable(linkPath));
}

QString why(const Result<Detection> &result)
{
    return result ? QString()
                  : u"[%1] %2 (hint: %3)"_s.arg(errorCodeName(result.error().code), result.error().text(),
                                                result.error().hint);
}

} // namespace

class TestDetection : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void layouts_data();
    void layouts();
    void missingCheckout();
    void hostPathsTellNothing();
    void exposedPort_data();
    void exposedPort();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_repo;    // the checkout
    QString m_outside; // a sibling directory the repository must not reach
};

void TestDetection::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_repo = m_tmp->filePath(u"repo"_s);
    m_outside = m_tmp->filePath(u"outside"_s);
    QVERIFY(QDir().mkpath(m_repo));
    write(m_outside + u"/Dockerfile"_s, "FROM scratch\nEXPOSE 22\n");
    write(m_outside + u"/ctx/Dockerfile"_s, "FROM scratch\n");
    // The layout every row starts from.
    write(m_repo + u"/Dockerfile"_s, "FROM busybox\nEXPOSE 8080\n");
    write(m_repo + u"/app/Dockerfile.prod"_s, "FROM busybox\nEXPOSE 9000/tcp\n");
    write(m_repo + u"/app/web.Dockerfile"_s, "FROM busybox\n");
    write(m_repo + u"/app/Containerfile"_s, "FROM busybox\n");
    write(m_repo + u"/app/README.md"_s, "hi\n");
    write(m_repo + u"/empty/README.md"_s, "hi\n");
    write(m_repo + u"/docker/Dockerfile"_s, "FROM busybox\n");
    link(m_outside + u"/Dockerfile"_s, m_repo + u"/evil/Dockerfile"_s);
    link(u"../../outside/Dockerfile"_s, m_repo + u"/evilrel/Dockerfile"_s);
    link(m_outside + u"/ctx"_s, m_repo + u"/evilctx"_s);
    link(u"docker/Dockerfile"_s, m_repo + u"/Dockerfile.link"_s);
    link(m_repo + u"/docker/Dockerfile"_s, m_repo + u"/app/Dockerfile.up"_s);
    link(u"app"_s, m_repo + u"/applink"_s);
    link(m_outside + u"/nothing"_s, m_repo + u"/dangling/Dockerfile"_s);
    link(u"nothing-here"_s, m_repo + u"/dangling-inside/Dockerfile"_s);
    // A monorepo: each app in its own directory; a link to a directory outside is not looked into.
    write(m_repo + u"/mono/README.md"_s, "hi\n");
    write(m_repo + u"/mono/apps/web/Dockerfile"_s, "FROM busybox\n");
    write(m_repo + u"/mono/services/api/Dockerfile"_s, "FROM busybox\n");
    write(m_repo + u"/mono/node_modules/dep/Dockerfile"_s, "FROM busybox\n");
    link(m_outside + u"/ctx"_s, m_repo + u"/mono/outlink"_s);
}

void TestDetection::layouts_data()
{
    QTest::addColumn<QString>("context");
    QTest::addColumn<QString>("dockerfile");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains"); // message (or, for NotFound, message + hint)
    QTest::addColumn<QString>("detected"); // Detection::dockerfile on success
    QTest::addColumn<int>("port");
    const int Invalid = int(ErrorCode::Invalid);

    QTest::newRow("default") << u"."_s << u"Dockerfile"_s << Ok << QString() << QString() << u"Dockerfile"_s << 8080;
    QTest::newRow("context subdir") << u"app"_s << u"Dockerfile.prod"_s << Ok << QString() << QString()
                                    << u"Dockerfile.prod"_s << 9000;
    QTest::newRow("nested dockerfile") << u"."_s << u"docker/Dockerfile"_s << Ok << QString() << QString()
                                       << u"docker/Dockerfile"_s << 0;
    QTest::newRow("symlink inside") << u"."_s << u"Dockerfile.link"_s << Ok << QString() << QString()
                                    << u"docker/Dockerfile"_s << 0;
    QTest::newRow("context via symlink inside")
        << u"applink"_s << u"Dockerfile.prod"_s << Ok << QString() << QString() << u"Dockerfile.prod"_s << 9000;
    QTest::newRow("dockerfile symlink outside")
        << u"."_s << u"evil/Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"is not a file in the build context (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("relative symlink outside")
        << u"evilrel"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"is not a file in the build context (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("context symlink outside")
        << u"evilctx"_s << u"Dockerfile"_s << Invalid << u"build.context"_s
        << u"is not a directory in the repository (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("symlink leaves context")
        << u"app"_s << u"Dockerfile.up"_s << Invalid << u"build.dockerfile"_s
        << u"is not a file in the build context (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("dangling symlink outside")
        << u"dangling"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"is not a file in the build context (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("dangling symlink inside")
        << u"dangling-inside"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"is not a file in the build context (it is missing, or a link that leads out of it)"_s << QString() << 0;
    QTest::newRow("missing dockerfile with candidates")
        << u"app"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"\"app/Dockerfile\" is not a file in the build context|Containerfile, Dockerfile.prod, Dockerfile.up, "
           u"web.Dockerfile"_s
        << QString() << 0;
    QTest::newRow("missing dockerfile no candidates")
        << u"empty"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"\"empty/Dockerfile\" is not a file in the build context, and nothing at its top is what Pando builds "
           u"without one|add a Dockerfile"_s
        << QString() << 0;
    QTest::newRow("missing dockerfile at root") << u"."_s << u"Dockerfile.dev"_s << Invalid << u"build.dockerfile"_s
                                                << u"\"Dockerfile.dev\" is not a file|top of the repository root: "
                                                   u"Dockerfile, Dockerfile.link"_s
                                                << QString() << 0;
    QTest::newRow("monorepo names build.context")
        << u"mono"_s << u"Dockerfile"_s << Invalid << u"build.dockerfile"_s
        << u"\"mono/Dockerfile\" is not a file|below it: apps/web/Dockerfile, services/api/Dockerfile; in a monorepo "
           u"set build.context to the app's directory (build.context: mono/apps/web)"_s
        << QString() << 0;
    QTest::newRow("missing context") << u"nope"_s << u"Dockerfile"_s << Invalid << u"build.context"_s
                                     << u"\"nope\" is not a directory in the repository"_s << QString() << 0;
    QTest::newRow("context is a file") << u"Dockerfile"_s << u"Dockerfile"_s << Invalid << u"build.context"_s
                                       << u"not a directory"_s << QString() << 0;
    QTest::newRow("dockerfile is a dir") << u"."_s << u"docker"_s << Invalid << u"build.dockerfile"_s << u"not a file"_s
                                         << QString() << 0;
    QTest::newRow("dotdot dockerfile") << u"app"_s << u"../Dockerfile"_s << Invalid << u"build.dockerfile"_s
                                       << u"leaves the build context"_s << QString() << 0;
    QTest::newRow("dotdot context") << u"../outside"_s << u"Dockerfile"_s << Invalid << u"build.context"_s
                                    << u"leaves the repository"_s << QString() << 0;
    QTest::newRow("absolute dockerfile") << u"."_s << u"/etc/passwd"_s << Invalid << u"build.dockerfile"_s
                                         << u"leaves the build context"_s << QString() << 0;
}

void TestDetection::layouts()
{
    QFETCH(QString, context);
    QFETCH(QString, dockerfile);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    QFETCH(QString, detected);
    QFETCH(int, port);

    AppSpec spec;
    spec.build.context = context;
    spec.build.dockerfile = dockerfile;
    const auto result = detect(spec, m_repo);
    if (code == Ok) {
        QVERIFY2(result, qPrintable(why(result)));
        const QString root = QFileInfo(m_repo).canonicalFilePath();
        QCOMPARE(result->builder, u"dockerfile"_s);
        QCOMPARE(result->dockerfile, detected);
        QVERIFY(result->contextDir.startsWith(root));
        QCOMPARE(result->dockerfilePath, result->contextDir + u'/' + detected);
        QVERIFY(QFileInfo(result->dockerfilePath).isFile());
        QCOMPARE(result->exposedPort, port);
        return;
    }
    QVERIFY2(!result, "detected, but an error was expected");
    QCOMPARE(int(result.error().code), code);
    QCOMPARE(result.error().where, where);
    const QStringList parts = contains.split(u'|');
    QVERIFY2(result.error().message.contains(parts[0]), qPrintable(why(result)));
    if (parts.size() > 1)
        QVERIFY2(result.error().hint.contains(parts[1]), qPrintable(why(result)));
}

void TestDetection::missingCheckout()
{
    const auto result = detect(AppSpec{}, m_tmp->filePath(u"no-such-dir"_s));
    QVERIFY(!result);
    QCOMPARE(result.error().code, ErrorCode::NotFound);
}

// Issue 12: a link in a repository to a host path that exists and one to a path that does not
// get the same error (code, text, place, hint), so a member cannot probe the host's files; the
// error names no host path. A directory that leads out through a link counts the same.
void TestDetection::hostPathsTellNothing()
{
    link(u"/etc"_s, m_repo + u"/etclink"_s);
    link(u"/no-such-dir-for-pando"_s, m_repo + u"/nolink"_s);
    link(u"/etc/passwd"_s, m_repo + u"/files/Dockerfile.host"_s);
    link(u"/no-such-file-for-pando"_s, m_repo + u"/files/Dockerfile.none"_s);
    const auto same = [&](AppSpec a, AppSpec b) {
        const auto left = detect(a, m_repo);
        const auto right = detect(b, m_repo);
        QVERIFY(!left && !right);
        QCOMPARE(left.error().code, right.error().code);
        QCOMPARE(left.error().where, right.error().where);
        QCOMPARE(left.error().hint, right.error().hint);
        // The same text once each path's own name is taken out.
        QString leftText = left.error().message;
        QString rightText = right.error().message;
        leftText.replace(a.build.context + u'/' + a.build.dockerfile, u"X"_s).replace(a.build.context, u"X"_s);
        rightText.replace(b.build.context + u'/' + b.build.dockerfile, u"X"_s).replace(b.build.context, u"X"_s);
        QCOMPARE(leftText, rightText);
        for (const auto *error : {&left.error(), &right.error()})
            QVERIFY2(!error->text().contains(u"/etc"_s) && !error->hint.contains(u"/etc"_s) &&
                         !error->text().contains(m_tmp->path()),
                     qPrintable(error->text()));
    };
    AppSpec context;
    context.build.context = u"etclink"_s;
    AppSpec noContext;
    noContext.build.context = u"nolink"_s;
    same(context, noContext);
    // Through a link to a directory: etclink/hostname exists on the host, etclink/no-such does not.
    AppSpec deep;
    deep.build.context = u"etclink/ssl"_s;
    AppSpec deepMissing;
    deepMissing.build.context = u"etclink/no-such-dir-for-pando"_s;
    same(deep, deepMissing);
    AppSpec file;
    file.build.context = u"files"_s;
    file.build.dockerfile = u"Dockerfile.host"_s;
    AppSpec noFile = file;
    noFile.build.dockerfile = u"Dockerfile.none"_s;
    same(file, noFile);
    AppSpec plainMissing = file;
    plainMissing.build.dockerfile = u"Dockerfile.absent"_s;
    same(file, plainMissing);
}

void TestDetection::exposedPort_data()
{
    QTest::addColumn<QByteArray>("dockerfile");
    QTest::addColumn<int>("port");
    QTest::newRow("none") << QByteArray("FROM busybox\n") << 0;
    QTest::newRow("simple") << QByteArray("FROM busybox\nEXPOSE 8080\n") << 8080;
    QTest::newRow("lowercase") << QByteArray("from busybox\nexpose 3000\n") << 3000;
    QTest::newRow("protocol") << QByteArray("EXPOSE 53/udp\n") << 53;
    QTest::newRow("several") << QByteArray("EXPOSE 80 443\n") << 80;
    QTest::newRow("range") << QByteArray("EXPOSE 7000-7010\n") << 7000;
    QTest::newRow("variable first") << QByteArray("ARG PORT=1\nEXPOSE $PORT 8081\n") << 8081;
    QTest::newRow("only variable") << QByteArray("EXPOSE ${PORT}\n") << 0;
    QTest::newRow("second instruction") << QByteArray("EXPOSE $P\nRUN x\nEXPOSE 5000\n") << 5000;
    QTest::newRow("continuation") << QByteArray("EXPOSE \\\n  9090\n") << 9090;
    QTest::newRow("comment") << QByteArray("# EXPOSE 1234\nEXPOSE 4321\n") << 4321;
    QTest::newRow("indented") << QByteArray("  EXPOSE 7070\n") << 7070;
    QTest::newRow("out of range") << QByteArray("EXPOSE 70000 8000\n") << 8000;
    QTest::newRow("in a RUN line") << QByteArray("RUN echo EXPOSE 1\n") << 0;
    QTest::newRow("crlf") << QByteArray("FROM x\r\nEXPOSE 6060\r\n") << 6060;
}

void TestDetection::exposedPort()
{
    QFETCH(QByteArray, dockerfile);
    QFETCH(int, port);
    write(m_repo + u"/probe/Dockerfile"_s, dockerfile);
    AppSpec spec;
    spec.build.context = u"probe"_s;
    const auto result = detect(spec, m_repo);
    QVERIFY2(result, qPrintable(why(result)));
    QCOMPARE(result->exposedPort, port);
}

QTEST_GUILESS_MAIN(TestDetection)
#include "tst_detection.moc"
