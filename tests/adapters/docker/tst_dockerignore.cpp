// .dockerignore read as `docker build` reads it: the examples of Docker's own documentation (in
// our words), the preprocessing of each line, exceptions where the last match decides, parent
// directories, patterns Docker refuses, and the build context's tar: what is left out, what is
// entered only for an exception, and the Dockerfile and .dockerignore that are always sent.

#include "adapters/kit/dockerapi/dockerignore.h"
#include "adapters/kit/dockerapi/tarball.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <archive.h>
#include <archive_entry.h>

using namespace Qt::StringLiterals;
using pando::adapters::dockerapi::DockerIgnore;
using pando::adapters::dockerapi::TarOptions;

namespace {

DockerIgnore rules(const QByteArray &text)
{
    auto parsed = DockerIgnore::parse(text, u".dockerignore"_s);
    if (!parsed)
        qFatal("%s", qPrintable(parsed.error().text()));
    return *parsed;
}

// The paths in a tar stream, in order.
QStringList entriesOf(const QByteArray &tar)
{
    QStringList names;
    archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, tar.constData(), size_t(tar.size())) == ARCHIVE_OK) {
        archive_entry *entry = nullptr;
        while (archive_read_next_header(a, &entry) == ARCHIVE_OK)
            names.append(QString::fromUtf8(archive_entry_pathname(entry)));
    }
    archive_read_free(a);
    return names;
}

} // namespace

class TestDockerIgnore : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void matches_data()
    {
        QTest::addColumn<QByteArray>("ignore");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("excluded");

        // Docker's example file: a comment, one level down, two levels down, one character.
        const QByteArray example = "# comment\n*/temp*\n*/*/temp*\ntemp?\n";
        QTest::newRow("comment is no pattern") << example << u"# comment"_s << false;
        QTest::newRow("*/temp* one level down") << example << u"somedir/temporary.txt"_s << true;
        QTest::newRow("*/temp* a directory") << example << u"somedir/temp"_s << true;
        QTest::newRow("*/temp* and what is in it") << example << u"somedir/temp/x"_s << true;
        QTest::newRow("*/temp* not at the root") << example << u"temporary.txt"_s << false;
        QTest::newRow("*/*/temp* two levels down") << example << u"somedir/subdir/temporary.txt"_s << true;
        QTest::newRow("temp? one character") << example << u"tempa"_s << true;
        QTest::newRow("temp? not none") << example << u"temp"_s << false;
        QTest::newRow("temp? not two") << example << u"tempab"_s << false;
        QTest::newRow("temp? only at the root") << QByteArray("temp?") << u"d/tempa"_s << false;

        QTest::newRow("**/*.go at the root") << QByteArray("**/*.go") << u"main.go"_s << true;
        QTest::newRow("**/*.go deep") << QByteArray("**/*.go") << u"a/b/c.go"_s << true;
        QTest::newRow("**/*.go not others") << QByteArray("**/*.go") << u"a/b/c.goo"_s << false;
        QTest::newRow("a/**/b none between") << QByteArray("a/**/b") << u"a/b"_s << true;
        QTest::newRow("a/**/b some between") << QByteArray("a/**/b") << u"a/x/y/b"_s << true;
        QTest::newRow("a/**/b not elsewhere") << QByteArray("a/**/b") << u"c/a/b"_s << false;
        QTest::newRow("** everything") << QByteArray("**") << u"any/thing"_s << true;

        // Exceptions: the last line that matches decides.
        QTest::newRow("*.md excluded") << QByteArray("*.md\n!README.md") << u"CHANGES.md"_s << true;
        QTest::newRow("!README.md kept") << QByteArray("*.md\n!README.md") << u"README.md"_s << false;
        const QByteArray laterSecret = "*.md\n!README*.md\nREADME-secret.md\n";
        QTest::newRow("later exclusion wins") << laterSecret << u"README-secret.md"_s << true;
        QTest::newRow("exception before it keeps") << laterSecret << u"README-other.md"_s << false;
        const QByteArray laterException = "*.md\nREADME-secret.md\n!README*.md\n";
        QTest::newRow("later exception wins") << laterException << u"README-secret.md"_s << false;
        QTest::newRow("* then !src keeps src") << QByteArray("*\n!src") << u"src/a/b.go"_s << false;
        QTest::newRow("* then !src leaves out the rest") << QByteArray("*\n!src") << u"notes.txt"_s << true;

        // The root is both the working and the root directory.
        QTest::newRow("/foo/bar") << QByteArray("/foo/bar") << u"foo/bar"_s << true;
        QTest::newRow("foo/bar") << QByteArray("foo/bar") << u"foo/bar"_s << true;
        QTest::newRow("foo/bar with what is in it") << QByteArray("foo/bar") << u"foo/bar/baz"_s << true;
        QTest::newRow("foo/bar is not bar") << QByteArray("foo/bar") << u"bar"_s << false;
        QTest::newRow("foo/bar is not below") << QByteArray("foo/bar") << u"x/foo/bar"_s << false;
        QTest::newRow("a directory and all in it") << QByteArray("node_modules") << u"node_modules/a/b.js"_s << true;
        QTest::newRow("a name only at the root") << QByteArray("node_modules") << u"web/node_modules/a"_s << false;

        // Each line is trimmed and cleaned; '#' is a comment only in the first column.
        QTest::newRow("whitespace around") << QByteArray("   .env   \r\n") << u".env"_s << true;
        QTest::newRow("cleaned") << QByteArray("./secrets/../.env") << u".env"_s << true;
        QTest::newRow("trailing slash") << QByteArray("build/") << u"build/out"_s << true;
        QTest::newRow("# after a space is a pattern") << QByteArray(" #x") << u"#x"_s << true;
        QTest::newRow("BOM") << QByteArray("\xEF\xBB\xBF.env\n") << u".env"_s << true;
        QTest::newRow("! with space") << QByteArray("*.txt\n! keep.txt") << u"keep.txt"_s << false;

        // Classes and escapes as Go's filepath.Match has them; a dot is a dot.
        QTest::newRow("[a-c]at") << QByteArray("[a-c]at") << u"bat"_s << true;
        QTest::newRow("[a-c]at not d") << QByteArray("[a-c]at") << u"dat"_s << false;
        QTest::newRow("[^a]x") << QByteArray("[^a]x") << u"bx"_s << true;
        QTest::newRow("[^a]x not a") << QByteArray("[^a]x") << u"ax"_s << false;
        QTest::newRow("escaped star") << QByteArray("\\*.log") << u"*.log"_s << true;
        QTest::newRow("escaped star is no wildcard") << QByteArray("\\*.log") << u"a.log"_s << false;
        QTest::newRow("dot is literal") << QByteArray("a.b") << u"axb"_s << false;
        QTest::newRow("* stops at /") << QByteArray("*.log") << u"logs/a.log"_s << false;
        QTest::newRow("regex characters are literal") << QByteArray("f(1)+$") << u"f(1)+$"_s << true;
    }

    void matches()
    {
        QFETCH(QByteArray, ignore);
        QFETCH(QString, path);
        QFETCH(bool, excluded);
        QCOMPARE(rules(ignore).excludes(path), excluded);
    }

    void refusesWhatDockerRefuses_data()
    {
        QTest::addColumn<QByteArray>("ignore");
        QTest::addColumn<int>("line");
        QTest::newRow("unclosed class") << QByteArray("ok\n\n[abc\n") << 3;
        QTest::newRow("empty class") << QByteArray("a[]b") << 1;
        QTest::newRow("trailing backslash") << QByteArray("# c\nx\\") << 2;
    }

    void refusesWhatDockerRefuses()
    {
        QFETCH(QByteArray, ignore);
        QFETCH(int, line);
        auto parsed = DockerIgnore::parse(ignore, u".dockerignore"_s);
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, pando::ErrorCode::Invalid);
        QVERIFY2(parsed.error().where.startsWith(u".dockerignore, line %1"_s.arg(line)),
                 qPrintable(parsed.error().text()));
    }

    // The context's tar: left out what is excluded; an excluded directory entered only for an
    // exception that names a path below it; the Dockerfile and .dockerignore always there.
    void contextTarLeavesOutWhatIsIgnored()
    {
        QTemporaryDir dir;
        const QDir root(dir.path());
        const auto write = [&root](const QString &path, const QByteArray &content) {
            root.mkpath(QFileInfo(root.filePath(path)).path());
            QFile f(root.filePath(path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        };
        write(u".dockerignore"_s, "*\n!src\n!docs/keep.md\nsrc/**/*.test.js\n!**/kept\n.dockerignore\n");
        write(u"docker/Dockerfile"_s, "FROM scratch\n");
        write(u"docker/other"_s, "x");
        write(u".env"_s, "TOKEN=1");
        write(u"src/app.js"_s, "x");
        write(u"src/lib/a.test.js"_s, "x");
        write(u"docs/keep.md"_s, "x");
        write(u"docs/drop.md"_s, "x");
        write(u"vendor/kept"_s, "x");

        auto ignore = DockerIgnore::forContext(dir.path(), u"docker/Dockerfile"_s);
        QVERIFY2(ignore.has_value(), qPrintable(ignore ? QString() : ignore.error().text()));
        QByteArray tar;
        QBuffer out(&tar);
        QVERIFY(out.open(QIODevice::WriteOnly));
        const auto written = pando::adapters::dockerapi::writeTar(dir.path(), &out, TarOptions{.ignore = *ignore});
        QVERIFY2(written.has_value(), qPrintable(written ? QString() : written.error().text()));
        QStringList entries = entriesOf(tar);
        entries.sort();
        // vendor/kept: "**/kept" does not start with "vendor/", so vendor is not entered (as Docker).
        QCOMPARE(entries, QStringList({u".dockerignore"_s, u"docker/Dockerfile"_s, u"docs/keep.md"_s, u"src/"_s,
                                       u"src/app.js"_s, u"src/lib/"_s}));

        // No .dockerignore: everything but .git.
        QVERIFY(QFile::remove(root.filePath(u".dockerignore"_s)));
        auto none = DockerIgnore::forContext(dir.path(), u"docker/Dockerfile"_s);
        QVERIFY(none && none->isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestDockerIgnore)
#include "tst_dockerignore.moc"
