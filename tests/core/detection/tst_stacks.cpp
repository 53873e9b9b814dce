// Repositories without a Dockerfile, laid out as each stack's own documentation lays them out
// (npm, Yarn and pnpm projects, a Next-style build, Flask with a Procfile, a pyproject package, a
// Go module with its command under cmd/, a static site): the stack is recognised, the summary
// says what was found, and the generated Dockerfile installs, builds and starts the app the way
// the stack's tools do. What cannot be built says what was found and what to add.

#include "core/detection/detection.h"
#include "core/detection/stacks.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

using Files = QList<std::pair<QString, QByteArray>>;

} // namespace

class TestStacks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void generated_data();
    void generated();
    void refused_data();
    void refused();
    void detectionWritesNothingAndKeepsDockerfiles();

private:
    QString layOut(const Files &files);
    std::unique_ptr<QTemporaryDir> m_tmp;
};

QString TestStacks::layOut(const Files &files)
{
    m_tmp = std::make_unique<QTemporaryDir>();
    const QString root = m_tmp->filePath(u"repo"_s);
    QDir().mkpath(root);
    for (const auto &[path, content] : files) {
        QDir().mkpath(QFileInfo(root + u'/' + path).absolutePath());
        QFile file(root + u'/' + path);
        if (file.open(QIODevice::WriteOnly))
            file.write(content);
    }
    return root;
}

void TestStacks::generated_data()
{
    QTest::addColumn<Files>("files");
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("stack");
    QTest::addColumn<QString>("summary");
    QTest::addColumn<QStringList>("lines"); // in this order, among the Dockerfile's lines

    QTest::newRow("npm with a start script")
        << Files{{u"package.json"_s, R"({"name": "todo", "scripts": {"start": "node server.js"},
                                          "engines": {"node": ">=20.0.0"}})"},
                 {u"package-lock.json"_s, "{}"},
                 {u"server.js"_s, "require('http')"}}
        << QString() << u"node"_s << u"a Node.js app (package.json, package-lock.json: npm ci; start: npm start)"_s
        << QStringList{u"FROM node:20-slim"_s,
                       u"COPY package.json package-lock.json ./"_s,
                       u"RUN npm ci --omit=dev"_s,
                       u"COPY . ."_s,
                       u"ENV NODE_ENV=production PORT=8080"_s,
                       u"EXPOSE 8080"_s,
                       u"CMD [\"npm\", \"start\"]"_s};
    QTest::newRow("a build script keeps the dev dependencies for the build only")
        << Files{{u"package.json"_s, R"({"scripts": {"build": "next build", "start": "next start -p $PORT"}})"},
                 {u"package-lock.json"_s, "{}"}}
        << QString() << u"node"_s
        << u"a Node.js app (package.json, package-lock.json: npm ci, npm run build; start: npm start)"_s
        << QStringList{u"FROM node:22-slim"_s,
                       u"RUN npm ci"_s,
                       u"COPY . ."_s,
                       u"RUN npm run build"_s,
                       u"RUN npm prune --omit=dev"_s,
                       u"CMD [\"npm\", \"start\"]"_s};
    QTest::newRow("yarn, started by main")
        << Files{{u"package.json"_s, R"({"main": "src/index.js"})"}, {u"yarn.lock"_s, "# yarn lockfile v1\n"}}
        << QString() << u"node"_s
        << u"a Node.js app (package.json, yarn.lock: yarn install --frozen-lockfile; start: node src/index.js)"_s
        << QStringList{u"COPY package.json yarn.lock ./"_s, u"RUN yarn install --frozen-lockfile"_s,
                       u"CMD [\"node\", \"src/index.js\"]"_s};
    QTest::newRow("pnpm, started by the Procfile")
        << Files{{u"package.json"_s, R"({"scripts": {"start": "node a.js"}})"},
                 {u"pnpm-lock.yaml"_s, "lockfileVersion: '9.0'\n"},
                 {u"Procfile"_s, "release: node migrate.js\nweb: node dist/server.js --port $PORT\n"}}
        << QString() << u"node"_s
        << u"a Node.js app (package.json, pnpm-lock.yaml: corepack enable && pnpm install --frozen-lockfile; start: "
           u"Procfile: node dist/server.js --port $PORT)"_s
        << QStringList{u"RUN corepack enable && pnpm install --frozen-lockfile"_s,
                       u"CMD [\"/bin/sh\", \"-c\", \"exec node dist/server.js --port $PORT\"]"_s};
    QTest::newRow("no lockfile, server.js")
        << Files{{u"package.json"_s, R"({"name": "x"})"}, {u"server.js"_s, ""}} << u"registry.example.com/node:20"_s
        << u"node"_s << u"a Node.js app (package.json: npm install; start: node server.js)"_s
        << QStringList{u"FROM registry.example.com/node:20"_s, u"RUN npm install --omit=dev"_s,
                       u"CMD [\"node\", \"server.js\"]"_s};
    QTest::newRow("flask with a Procfile")
        << Files{{u"requirements.txt"_s, "flask==3.0.3\ngunicorn==22.0.0\n"},
                 {u"Procfile"_s, "web: gunicorn app:app --bind 0.0.0.0:$PORT\n"},
                 {u"app.py"_s, "from flask import Flask\n"},
                 {u".python-version"_s, "3.11.9\n"}}
        << QString() << u"python"_s
        << u"a Python app (requirements.txt; start: Procfile: gunicorn app:app --bind 0.0.0.0:$PORT)"_s
        << QStringList{u"FROM python:3.11-slim"_s,
                       u"WORKDIR /app"_s,
                       u"COPY requirements.txt ./"_s,
                       u"RUN pip install --no-cache-dir -r requirements.txt"_s,
                       u"COPY . ."_s,
                       u"ENV PYTHONUNBUFFERED=1 PORT=8080"_s,
                       u"EXPOSE 8080"_s,
                       u"CMD [\"/bin/sh\", \"-c\", \"exec gunicorn app:app --bind 0.0.0.0:$PORT\"]"_s};
    QTest::newRow("a pyproject package with main.py")
        << Files{{u"pyproject.toml"_s, "[project]\nname = \"svc\"\n"},
                 {u"main.py"_s, ""},
                 {u"runtime.txt"_s, "python-3.12.4\n"}}
        << QString() << u"python"_s << u"a Python app (pyproject.toml; start: python main.py)"_s
        << QStringList{u"FROM python:3.12-slim"_s, u"COPY . ."_s, u"RUN pip install --no-cache-dir ."_s,
                       u"CMD [\"python\", \"main.py\"]"_s};
    QTest::newRow("go with its command under cmd/")
        << Files{{u"go.mod"_s, "module example.com/shortener\n\ngo 1.22\n"},
                 {u"cmd/shortener/main.go"_s, "package main\n"},
                 {u"internal/store/store.go"_s, "package store\n"}}
        << QString() << u"go"_s << u"a Go module (go.mod; builds ./cmd/shortener)"_s
        << QStringList{
               u"FROM golang:1.22 AS build"_s, u"RUN CGO_ENABLED=0 go build -trimpath -o /out/app ./cmd/shortener"_s,
               u"FROM gcr.io/distroless/static-debian12"_s, u"COPY --from=build /out/app /app"_s, u"CMD [\"/app\"]"_s};
    QTest::newRow("a static site") << Files{{u"index.html"_s, "<h1>hi</h1>"}, {u"style.css"_s, ""}}
                                   << u"pando/busybox:latest"_s << u"static"_s
                                   << u"a static site (index.html, served by BusyBox httpd)"_s
                                   << QStringList{u"FROM pando/busybox:latest"_s, u"COPY . /www"_s, u"EXPOSE 8080"_s,
                                                  u"CMD [\"httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]"_s};
    QTest::newRow("a static site in public/")
        << Files{{u"public/index.html"_s, "<h1>hi</h1>"}, {u"README.md"_s, ""}} << QString() << u"static"_s
        << u"a static site (public/index.html, served by BusyBox httpd)"_s
        << QStringList{u"FROM busybox:stable"_s, u"COPY public /www"_s};
}

void TestStacks::generated()
{
    QFETCH(Files, files);
    QFETCH(QString, base);
    QFETCH(QString, stack);
    QFETCH(QString, summary);
    QFETCH(QStringList, lines);
    const QString root = layOut(files);
    AppSpec spec;
    spec.build.base = base;
    const auto detected = detect(spec, root);
    QVERIFY2(detected, qPrintable(detected ? QString() : detected.error().text() + u" / "_s + detected.error().hint));
    QCOMPARE(detected->builder, u"generated"_s);
    QCOMPARE(detected->stack, stack);
    QCOMPARE(detected->summary, summary);
    QCOMPARE(detected->exposedPort, GeneratedPort);
    QCOMPARE(detected->dockerfile, QString::fromLatin1(GeneratedDockerfileName));
    const QStringList written = detected->generated.split(u'\n');
    qsizetype at = 0;
    for (const QString &line : lines) {
        const qsizetype found = written.indexOf(line, at);
        QVERIFY2(found >= 0, qPrintable(u"missing or out of order: %1\n%2"_s.arg(line, detected->generated)));
        at = found + 1;
    }
    QVERIFY2(written.first().startsWith(u"FROM "_s), qPrintable(detected->generated));
}

void TestStacks::refused_data()
{
    QTest::addColumn<Files>("files");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("hint");

    QTest::newRow("django without a Procfile")
        << Files{{u"requirements.txt"_s, "django\n"}, {u"manage.py"_s, ""}}
        << u"this Python app (requirements.txt) (a Django project: manage.py) does not say how it starts"_s
        << u"add a Procfile with its web process (web: gunicorn myproject.wsgi"_s;
    QTest::newRow("node with no way to start")
        << Files{{u"package.json"_s, R"({"scripts": {"test": "jest"}})"}}
        << u"this Node.js app (package.json) does not say how it starts"_s << u"add a start script"_s;
    QTest::newRow("node main leaving the app")
        << Files{{u"package.json"_s, R"({"main": "../../etc/passwd"})"}}
        << u"this Node.js app (package.json) does not say how it starts"_s << u"add a start script"_s;
    QTest::newRow("go with two commands")
        << Files{{u"go.mod"_s, "module m\n"}, {u"cmd/a/main.go"_s, ""}, {u"cmd/b/main.go"_s, ""}}
        << u"this Go module (go.mod) has several commands: ./cmd/a, ./cmd/b"_s << u"keep one main package"_s;
    QTest::newRow("ruby") << Files{{u"Gemfile"_s, "source 'https://rubygems.org'\n"}, {u"Procfile"_s, "web: puma\n"}}
                          << u"this Ruby app (Gemfile) is not one Pando builds without a Dockerfile"_s
                          << u"add a Dockerfile"_s;
    QTest::newRow("a Procfile alone") << Files{{u"Procfile"_s, "web: ./run\n"}}
                                      << u"a Procfile alone does not say what to install"_s << u"add a Dockerfile"_s;
    QTest::newRow("nothing") << Files{{u"README.md"_s, "hi\n"}}
                             << u"nothing at its top is what Pando builds without one (package.json"_s
                             << u"add a Dockerfile"_s;
}

void TestStacks::refused()
{
    QFETCH(Files, files);
    QFETCH(QString, message);
    QFETCH(QString, hint);
    const auto detected = detect(AppSpec(), layOut(files));
    QVERIFY2(!detected, "built, but a refusal was expected");
    QCOMPARE(detected.error().code, ErrorCode::Invalid);
    QCOMPARE(detected.error().where, u"build.dockerfile"_s);
    QVERIFY2(detected.error().message.startsWith(u"\"Dockerfile\" is not a file in the build context, and "_s),
             qPrintable(detected.error().message));
    QVERIFY2(detected.error().message.contains(message), qPrintable(detected.error().message));
    QVERIFY2(detected.error().hint.contains(hint), qPrintable(detected.error().hint));
}

void TestStacks::detectionWritesNothingAndKeepsDockerfiles()
{
    // A Dockerfile wins over everything detection would find; a named one that is missing is an
    // error, not a reason to generate; a link in the Dockerfile's place is not looked past.
    QString root = layOut({{u"package.json"_s, R"({"scripts": {"start": "x"}})"}, {u"Dockerfile"_s, "FROM a\n"}});
    AppSpec spec;
    auto detected = detect(spec, root);
    QVERIFY(detected);
    QCOMPARE(detected->builder, u"dockerfile"_s);
    root = layOut({{u"package.json"_s, R"({"scripts": {"start": "x"}})"}});
    spec.build.dockerfile = u"deploy/Dockerfile"_s;
    QVERIFY(!detect(spec, root));
    spec.build.dockerfile = u"Dockerfile"_s;
    QVERIFY(QFile::link(u"/nonexistent/Dockerfile"_s, root + u"/Dockerfile"_s));
    QVERIFY(!detect(spec, root));
    QFile::remove(root + u"/Dockerfile"_s);
    detected = detect(spec, root);
    QVERIFY(detected);
    QCOMPARE(detected->builder, u"generated"_s);
    QVERIFY(!QFileInfo::exists(detected->dockerfilePath));
}

QTEST_APPLESS_MAIN(TestStacks)
#include "tst_stacks.moc"
