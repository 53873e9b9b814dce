#include "adapters/kit/dockerapi/dockerignore.h"

#include <QFile>
#include <QStringList>

namespace pando::adapters::dockerapi {

namespace {

// Go's path.Clean: '.' elements dropped, '..' resolved against what precedes it (kept when
// nothing does), repeated slashes joined; "" is ".".
QString cleanPath(const QString &path)
{
    const bool rooted = path.startsWith(u'/');
    QStringList parts;
    for (const QString &part : path.split(u'/', Qt::SkipEmptyParts)) {
        if (part == QLatin1String("."))
            continue;
        if (part == QLatin1String("..")) {
            if (!parts.isEmpty() && parts.last() != QLatin1String(".."))
                parts.removeLast();
            else if (!rooted)
                parts.append(part);
            continue;
        }
        parts.append(part);
    }
    const QString joined = parts.join(u'/');
    if (rooted)
        return u'/' + joined;
    return joined.isEmpty() ? QStringLiteral(".") : joined;
}

// A character as a regular expression matches it literally.
QString literal(QChar c)
{
    return c.isLetterOrNumber() ? QString(c) : QRegularExpression::escape(QString(c));
}

} // namespace

Result<DockerIgnore::Rule> DockerIgnore::compile(QString pattern, bool exception)
{
    QString re = QStringLiteral("^");
    const qsizetype n = pattern.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = pattern.at(i);
        if (c == u'*') {
            if (i + 1 < n && pattern.at(i + 1) == u'*') {
                ++i;
                if (i + 1 < n && pattern.at(i + 1) == u'/')
                    ++i; // "**/" is "**"
                re += i + 1 >= n ? QStringLiteral(".*") : QStringLiteral("(.*/)?");
            } else {
                re += QStringLiteral("[^/]*");
            }
        } else if (c == u'?') {
            re += QStringLiteral("[^/]");
        } else if (c == u'\\') {
            if (++i >= n)
                return fail(ErrorCode::Invalid, QStringLiteral("a pattern may not end in '\\'"));
            re += literal(pattern.at(i));
        } else if (c == u'[') {
            re += u'[';
            if (i + 1 < n && pattern.at(i + 1) == u'^') {
                re += u'^';
                ++i;
            }
            bool closed = false;
            bool empty = true;
            while (++i < n) {
                QChar k = pattern.at(i);
                if (k == u']' && !empty) {
                    closed = true;
                    break;
                }
                if (k == u']' || (k == u'-' && empty))
                    break; // "[]", "[-": Go's filepath.Match refuses them
                if (k == u'\\') {
                    if (++i >= n)
                        break;
                    k = pattern.at(i);
                    re += literal(k);
                } else {
                    re += k == u'-' ? QString(k) : literal(k);
                }
                empty = false;
            }
            if (!closed)
                return fail(ErrorCode::Invalid, QStringLiteral("a character class ('[') is not closed or is empty"));
            re += u']';
        } else {
            re += literal(c);
        }
    }
    re += u'$';
    Rule rule{std::move(pattern), exception, QRegularExpression(re, QRegularExpression::DotMatchesEverythingOption)};
    if (!rule.regex.isValid())
        return fail(ErrorCode::Invalid, QStringLiteral("not a pattern: %1").arg(rule.regex.errorString()));
    return rule;
}

Result<DockerIgnore> DockerIgnore::parse(const QByteArray &text, const QString &where)
{
    DockerIgnore ignore;
    QByteArray content = text;
    if (content.startsWith("\xEF\xBB\xBF"))
        content.remove(0, 3);
    const QList<QByteArray> lines = content.split('\n');
    for (qsizetype number = 0; number < lines.size(); ++number) {
        const QByteArray &line = lines.at(number);
        if (line.startsWith('#'))
            continue;
        QString pattern = QString::fromUtf8(line).trimmed();
        if (pattern.isEmpty())
            continue;
        const bool exception = pattern.startsWith(u'!');
        if (exception)
            pattern = pattern.mid(1).trimmed();
        pattern = cleanPath(pattern);
        if (pattern.size() > 1 && pattern.startsWith(u'/'))
            pattern.remove(0, 1);
        auto rule = compile(pattern, exception);
        if (!rule)
            return fail(ErrorCode::Invalid, rule.error().message,
                        QStringLiteral("%1, line %2 (%3)").arg(where).arg(number + 1).arg(QString::fromUtf8(line)),
                        QStringLiteral("patterns are read as `docker build` reads them: fix or remove the line"));
        ignore.m_rules.append(std::move(*rule));
    }
    return ignore;
}

Result<DockerIgnore> DockerIgnore::forContext(const QString &contextDir, const QString &dockerfile)
{
    QFile file(contextDir + QStringLiteral("/.dockerignore"));
    if (!file.exists())
        return DockerIgnore();
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Failed, QStringLiteral("cannot read: %1").arg(file.errorString()), file.fileName());
    auto ignore = parse(file.readAll(), QStringLiteral(".dockerignore"));
    if (!ignore)
        return ignore;
    ignore->keep(QStringLiteral(".dockerignore"));
    ignore->keep(cleanPath(dockerfile.isEmpty() ? QStringLiteral("Dockerfile") : dockerfile));
    return ignore;
}

bool DockerIgnore::excludes(const QString &path) const
{
    bool excluded = false;
    const QStringList parts = path.split(u'/');
    for (const Rule &rule : m_rules) {
        bool matched = rule.regex.match(path).hasMatch();
        // A pattern that matches a directory the path is in matches the path too.
        for (qsizetype depth = 1; !matched && depth < parts.size(); ++depth)
            matched = rule.regex.match(parts.first(depth).join(u'/')).hasMatch();
        if (matched)
            excluded = !rule.exception;
    }
    return excluded;
}

bool DockerIgnore::mayKeepBelow(const QString &directory) const
{
    const QString prefix = directory + u'/';
    for (const Rule &rule : m_rules)
        if (rule.exception && QString(rule.pattern + u'/').startsWith(prefix))
            return true;
    return false;
}

void DockerIgnore::keep(const QString &path)
{
    if (!excludes(path))
        return;
    // A file name may hold a pattern's special characters: it is kept by name.
    auto rule = compile(path, true);
    if (!rule || !rule->regex.match(path).hasMatch()) {
        QString escaped;
        for (const QChar c : path)
            escaped += QStringLiteral("*?[]\\").contains(c) ? QString(u'\\') + c : QString(c);
        rule = compile(escaped, true);
        if (!rule)
            return;
        rule->pattern = path;
    }
    m_rules.append(std::move(*rule));
}

} // namespace pando::adapters::dockerapi
