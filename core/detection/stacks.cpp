#include "core/detection/stacks.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

constexpr qint64 MaxManifestBytes = 1024LL * 1024;

// A file at the top of dir that is a regular file (a link could lead out of the repository).
bool has(const QString &dir, const QString &name)
{
    const QFileInfo info(dir + u'/' + name);
    return info.isFile() && !info.isSymLink();
}

QByteArray readTop(const QString &dir, const QString &name)
{
    if (!has(dir, name))
        return {};
    QFile file(dir + u'/' + name);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.read(MaxManifestBytes);
}

// A string as a JSON string, for the exec form of CMD.
QString jsonString(const QString &text)
{
    const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(array.mid(1, array.size() - 2));
}

QString execForm(const QStringList &argv)
{
    QStringList quoted;
    for (const QString &arg : argv)
        quoted << jsonString(arg);
    return u"["_s + quoted.join(u", "_s) + u"]"_s;
}

// The Procfile's web process ("web: gunicorn app:app"), run by a shell so $PORT expands.
QString procfileWeb(const QString &dir)
{
    static const QRegularExpression web(uR"(^web\s*:\s*(.+?)\s*$)"_s, QRegularExpression::MultilineOption);
    const auto match = web.match(QString::fromUtf8(readTop(dir, u"Procfile"_s)));
    return match.hasMatch() ? match.captured(1) : QString();
}

QString procfileCmd(const QString &command)
{
    return u"CMD "_s + execForm({u"/bin/sh"_s, u"-c"_s, u"exec "_s + command});
}

// What was found, said after "there is no Dockerfile, and"; the hint says what to add.
Error cannotBuild(const QString &found, const QString &hint)
{
    return Error{ErrorCode::Invalid, found, u"build.dockerfile"_s, hint};
}

const QString AddDockerfile = u"add a Dockerfile, or set build.dockerfile to the one the app has (docs/detection.md "
                              u"lists what Pando builds without one)"_s;

Result<GeneratedBuild> node(const QString &dir, const QString &base)
{
    const QJsonObject package = QJsonDocument::fromJson(readTop(dir, u"package.json"_s)).object();
    const QJsonObject scripts = package.value(u"scripts"_s).toObject();
    QStringList found{u"package.json"_s};
    QString install, copy = u"package.json"_s;
    QString prune;
    if (has(dir, u"package-lock.json"_s) || has(dir, u"npm-shrinkwrap.json"_s)) {
        const QString lock = has(dir, u"package-lock.json"_s) ? u"package-lock.json"_s : u"npm-shrinkwrap.json"_s;
        found << lock;
        copy += u' ' + lock;
        install = u"npm ci"_s;
        prune = u"npm prune --omit=dev"_s;
    } else if (has(dir, u"yarn.lock"_s)) {
        found << u"yarn.lock"_s;
        copy += u" yarn.lock"_s;
        install = u"yarn install --frozen-lockfile"_s;
    } else if (has(dir, u"pnpm-lock.yaml"_s)) {
        found << u"pnpm-lock.yaml"_s;
        copy += u" pnpm-lock.yaml"_s;
        install = u"corepack enable && pnpm install --frozen-lockfile"_s;
    } else {
        install = u"npm install"_s;
        prune = u"npm prune --omit=dev"_s;
    }
    const QString web = procfileWeb(dir);
    QString start, cmd;
    if (!web.isEmpty()) {
        start = u"Procfile: "_s + web;
        cmd = procfileCmd(web);
    } else if (scripts.contains(u"start"_s)) {
        start = u"npm start"_s;
        cmd = u"CMD [\"npm\", \"start\"]"_s;
    } else {
        QString main = package.value(u"main"_s).toString();
        for (const QString &candidate : {u"server.js"_s, u"index.js"_s, u"app.js"_s})
            if (main.isEmpty() && has(dir, candidate))
                main = candidate;
        if (main.isEmpty() || QDir::cleanPath(main).startsWith(u".."_s) || QDir::isAbsolutePath(main))
            return std::unexpected(cannotBuild(
                u"this Node.js app (package.json) does not say how it starts"_s,
                u"add a start script to package.json (\"start\": \"node server.js\"), a Procfile (web: node "
                u"server.js) or a Dockerfile"_s));
        start = u"node "_s + main;
        cmd = u"CMD "_s + execForm({u"node"_s, main});
    }
    // engines.node: ">=18", "20.x", "^22.3" → its first major version.
    static const QRegularExpression major(uR"((\d+))"_s);
    const auto version = major.match(package.value(u"engines"_s).toObject().value(u"node"_s).toString());
    const int wanted = version.hasMatch() ? version.captured(1).toInt() : 0;
    const QString image = !base.isEmpty() ? base : u"node:%1-slim"_s.arg(wanted >= 18 && wanted <= 99 ? wanted : 22);
    QStringList lines{u"FROM "_s + image, u"WORKDIR /app"_s, u"COPY "_s + copy + u" ./"_s};
    const bool builds = scripts.contains(u"build"_s);
    if (builds) {
        // The build needs the development dependencies; the image keeps only what runs.
        lines << u"RUN "_s + install << u"COPY . ."_s << u"RUN npm run build"_s;
        if (!prune.isEmpty())
            lines << u"RUN "_s + prune;
    } else {
        lines << u"RUN "_s + install + (install.startsWith(u"npm"_s) ? u" --omit=dev"_s : QString()) << u"COPY . ."_s;
    }
    lines << u"ENV NODE_ENV=production PORT=%1"_s.arg(GeneratedPort) << u"EXPOSE %1"_s.arg(GeneratedPort) << cmd;
    return GeneratedBuild{u"node"_s,
                          u"a Node.js app (%1: %2%3; start: %4)"_s.arg(
                              found.join(u", "_s), install, builds ? u", npm run build"_s : QString(), start),
                          lines.join(u'\n') + u'\n'};
}

Result<GeneratedBuild> python(const QString &dir, const QString &base)
{
    QStringList lines;
    QString found, install;
    if (has(dir, u"requirements.txt"_s)) {
        found = u"requirements.txt"_s;
        lines << u"COPY requirements.txt ./"_s << u"RUN pip install --no-cache-dir -r requirements.txt"_s
              << u"COPY . ."_s;
    } else if (has(dir, u"Pipfile"_s)) {
        found = u"Pipfile"_s;
        lines << u"RUN pip install --no-cache-dir pipenv"_s << u"COPY Pipfile* ./"_s
              << u"RUN pipenv install --system --deploy"_s << u"COPY . ."_s;
    } else {
        found = u"pyproject.toml"_s;
        lines << u"COPY . ."_s << u"RUN pip install --no-cache-dir ."_s;
    }
    const QString web = procfileWeb(dir);
    QString start, cmd;
    if (!web.isEmpty()) {
        start = u"Procfile: "_s + web;
        cmd = procfileCmd(web);
    } else {
        for (const QString &candidate : {u"app.py"_s, u"main.py"_s})
            if (start.isEmpty() && has(dir, candidate)) {
                start = u"python "_s + candidate;
                cmd = u"CMD "_s + execForm({u"python"_s, candidate});
            }
    }
    if (start.isEmpty()) {
        const QString django = has(dir, u"manage.py"_s) ? u" (a Django project: manage.py)"_s : QString();
        return std::unexpected(cannotBuild(
            u"this Python app (%1)%2 does not say how it starts"_s.arg(found, django),
            u"add a Procfile with its web process (web: gunicorn myproject.wsgi --bind 0.0.0.0:$PORT), an app.py or "
            u"main.py, or a Dockerfile"_s));
    }
    // .python-version ("3.11.4") or runtime.txt ("python-3.11.4") → "3.11".
    static const QRegularExpression version(uR"((3\.\d{1,2}))"_s);
    const auto pinned =
        version.match(QString::fromUtf8(readTop(dir, u".python-version"_s) + ' ' + readTop(dir, u"runtime.txt"_s)));
    const QString image =
        !base.isEmpty() ? base : u"python:%1-slim"_s.arg(pinned.hasMatch() ? pinned.captured(1) : u"3.12"_s);
    lines.prepend(u"WORKDIR /app"_s);
    lines.prepend(u"FROM "_s + image);
    lines << u"ENV PYTHONUNBUFFERED=1 PORT=%1"_s.arg(GeneratedPort) << u"EXPOSE %1"_s.arg(GeneratedPort) << cmd;
    return GeneratedBuild{u"python"_s, u"a Python app (%1; start: %2)"_s.arg(found, start), lines.join(u'\n') + u'\n'};
}

Result<GeneratedBuild> golang(const QString &dir, const QString &base)
{
    static const QRegularExpression goLine(uR"(^go\s+(1\.\d+))"_s, QRegularExpression::MultilineOption);
    const auto version = goLine.match(QString::fromUtf8(readTop(dir, u"go.mod"_s)));
    // The main package: at the top, or the one directory under cmd/.
    QString package = u"."_s;
    if (!has(dir, u"main.go"_s)) {
        const QStringList commands = QDir(dir + u"/cmd"_s).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        QStringList mains;
        for (const QString &command : commands)
            if (has(dir + u"/cmd/"_s + command, u"main.go"_s))
                mains << u"./cmd/"_s + command;
        if (mains.size() != 1)
            return std::unexpected(cannotBuild(
                mains.isEmpty() ? u"this Go module (go.mod) has no main.go at its top or under cmd/"_s
                                : u"this Go module (go.mod) has several commands: %1"_s.arg(mains.join(u", "_s)),
                u"keep one main package at the top or under cmd/, or add a Dockerfile"_s));
        package = mains.first();
    }
    const QString image =
        !base.isEmpty() ? base : u"golang:%1"_s.arg(version.hasMatch() ? version.captured(1) : u"1.23"_s);
    const QStringList lines{u"FROM "_s + image + u" AS build"_s,
                            u"WORKDIR /src"_s,
                            u"COPY . ."_s,
                            u"RUN CGO_ENABLED=0 go build -trimpath -o /out/app "_s + package,
                            u"FROM gcr.io/distroless/static-debian12"_s,
                            u"COPY --from=build /out/app /app"_s,
                            u"ENV PORT=%1"_s.arg(GeneratedPort),
                            u"EXPOSE %1"_s.arg(GeneratedPort),
                            u"CMD [\"/app\"]"_s};
    return GeneratedBuild{u"go"_s, u"a Go module (go.mod; builds %1)"_s.arg(package), lines.join(u'\n') + u'\n'};
}

Result<GeneratedBuild> staticSite(const QString &dir, const QString &base)
{
    const QString root = has(dir, u"index.html"_s) ? u"."_s : u"public"_s;
    const QString image = !base.isEmpty() ? base : u"busybox:stable"_s;
    const QStringList lines{
        u"FROM "_s + image, u"COPY "_s + root + u" /www"_s, u"EXPOSE %1"_s.arg(GeneratedPort),
        u"CMD "_s + execForm({u"httpd"_s, u"-f"_s, u"-p"_s, QString::number(GeneratedPort), u"-h"_s, u"/www"_s})};
    return GeneratedBuild{
        u"static"_s,
        u"a static site (%1, served by BusyBox httpd)"_s.arg(root == u"." ? u"index.html"_s : u"public/index.html"_s),
        lines.join(u'\n') + u'\n'};
}

} // namespace

Result<GeneratedBuild> detectStack(const QString &contextDir, const QString &base)
{
    if (has(contextDir, u"package.json"_s))
        return node(contextDir, base);
    if (has(contextDir, u"requirements.txt"_s) || has(contextDir, u"pyproject.toml"_s) || has(contextDir, u"Pipfile"_s))
        return python(contextDir, base);
    if (has(contextDir, u"go.mod"_s))
        return golang(contextDir, base);
    if (has(contextDir, u"index.html"_s) || has(contextDir + u"/public"_s, u"index.html"_s))
        return staticSite(contextDir, base);
    // Stacks Pando recognises but does not build without a Dockerfile.
    const QList<std::pair<QString, QString>> others{
        {u"Gemfile"_s, u"Ruby"_s},         {u"composer.json"_s, u"PHP"_s},
        {u"pom.xml"_s, u"Java (Maven)"_s}, {u"build.gradle"_s, u"Java (Gradle)"_s},
        {u"Cargo.toml"_s, u"Rust"_s},      {u"mix.exs"_s, u"Elixir"_s}};
    for (const auto &[file, stack] : others)
        if (has(contextDir, file))
            return std::unexpected(cannotBuild(
                u"this %1 app (%2) is not one Pando builds without a Dockerfile"_s.arg(stack, file), AddDockerfile));
    if (!procfileWeb(contextDir).isEmpty())
        return std::unexpected(cannotBuild(u"a Procfile alone does not say what to install"_s, AddDockerfile));
    return std::unexpected(cannotBuild(
        u"nothing at its top is what Pando builds without one (package.json, requirements.txt, pyproject.toml, "
        u"Pipfile, go.mod or index.html)"_s,
        AddDockerfile));
}

} // namespace pando::core
