#include "core/spec/specrules.h"

#include "core/spec/appspec.h"
#include "core/spec/yamlreader.h"

#include <QDir>
#include <QRegularExpression>
#include <QUrl>

#include <cmath>

using namespace Qt::StringLiterals;

namespace pando::core::detail {

namespace {

bool isControlOrSpace(QChar ch)
{
    return ch.isSpace() || ch.unicode() < 0x20 || ch.unicode() == 0x7f || ch.category() == QChar::Other_Control ||
           ch.category() == QChar::Other_Format;
}

bool hasControlOrSpace(const QString &value)
{
    return std::any_of(value.begin(), value.end(), isControlOrSpace);
}

bool hasControl(const QString &value)
{
    return std::any_of(value.begin(), value.end(), [](QChar ch) {
        return ch.unicode() < 0x20 || ch.unicode() == 0x7f || ch.category() == QChar::Other_Control;
    });
}

} // namespace

QString quoted(const QString &value)
{
    QString out;
    const qsizetype limit = 80;
    for (qsizetype i = 0; i < value.size() && i < limit; ++i) {
        const QChar ch = value.at(i);
        if (ch == u'"' || ch == u'\\')
            out += u'\\', out += ch;
        else if (ch == u'\n')
            out += u"\\n"_s;
        else if (ch == u'\t')
            out += u"\\t"_s;
        else if (ch.unicode() < 0x20 || ch.unicode() == 0x7f)
            out += u"\\x%1"_s.arg(int(ch.unicode()), 2, 16, QLatin1Char('0'));
        else
            out += ch;
    }
    if (value.size() > limit)
        out += u"..."_s;
    return u'"' + out + u'"';
}

Status checkConnectionName(const QString &name)
{
    if (isValidAppName(name))
        return {};
    return fail(ErrorCode::Invalid,
                u"%1 is not a connection name: lowercase letters, digits and '-', 1-63 characters, not starting or "
                u"ending with '-'"_s.arg(quoted(name.left(64))),
                u"source.connection"_s, u"`pando connections list` shows the connections"_s);
}

Status checkName(const QString &name)
{
    const QString where = u"name"_s;
    if (name.isEmpty())
        return fail(ErrorCode::Invalid, u"must not be empty"_s, where);
    if (name.size() > 63)
        return fail(ErrorCode::Invalid, u"must be at most 63 characters, got %1"_s.arg(name.size()), where);
    if (isValidAppName(name))
        return {};
    const QString hint = u"an app name is a DNS label: lowercase letters, digits and '-', 1-63 characters, "
                         u"not starting or ending with '-'"_s;
    if (name.startsWith(u'-') || name.endsWith(u'-'))
        return fail(ErrorCode::Invalid, u"%1 must not start or end with '-'"_s.arg(quoted(name)), where, hint);
    if (isValidAppName(name.toLower())) {
        return fail(ErrorCode::Invalid, u"%1 must be lowercase; use %2"_s.arg(quoted(name), quoted(name.toLower())),
                    where, hint);
    }
    for (const QChar ch : name) {
        const bool ok = (ch >= u'a' && ch <= u'z') || (ch >= u'0' && ch <= u'9') || ch == u'-';
        if (!ok) {
            return fail(ErrorCode::Invalid,
                        u"%1 may contain only lowercase letters, digits and '-', not %2"_s.arg(quoted(name),
                                                                                               quoted(QString(ch))),
                        where, hint);
        }
    }
    return fail(ErrorCode::Invalid, u"%1 is not a DNS label"_s.arg(quoted(name)), where, hint);
}

Status checkRepo(const QString &repo)
{
    const QString where = u"source.repo"_s;
    const QString forms = u"use file:///path/repo.git, https://host/path, ssh://host/path or user@host:path"_s;
    if (repo.isEmpty())
        return fail(ErrorCode::Invalid, u"must not be empty"_s, where, forms);
    if (repo.size() > 2048)
        return fail(ErrorCode::Invalid, u"must be at most 2048 characters, got %1"_s.arg(repo.size()), where);
    // Check the address and its percent-decoded form: git and ssh decode some of it themselves.
    const QString decoded = QUrl::fromPercentEncoding(repo.toUtf8());
    for (const QString &form : {repo, decoded}) {
        if (form.startsWith(u'-')) {
            return fail(ErrorCode::Invalid,
                        u"%1 must not start with '-': git or ssh would read it as an option"_s.arg(quoted(repo)), where,
                        forms);
        }
        if (form.contains(u"::"_s)) {
            return fail(ErrorCode::Invalid,
                        u"%1 uses git's \"transport::address\" syntax (ext::, fd::, ...), which can run commands; "
                        u"it is not allowed"_s.arg(quoted(repo)),
                        where, forms);
        }
        const QString lower = form.toLower();
        for (const auto &option : {u"--upload-pack"_s, u"--receive-pack"_s, u"--config"_s, u"--exec"_s, u"--template"_s,
                                   u"--separate-git-dir"_s, u"proxycommand"_s}) {
            if (lower.contains(option)) {
                return fail(
                    ErrorCode::Invalid,
                    u"%1 contains %2, which git or ssh would take as an option"_s.arg(quoted(repo), quoted(option)),
                    where, forms);
            }
        }
        if (hasControlOrSpace(form))
            return fail(ErrorCode::Invalid, u"%1 must not contain whitespace or control characters"_s.arg(quoted(repo)),
                        where, forms);
    }

    const qsizetype schemeEnd = repo.indexOf(u"://"_s);
    if (schemeEnd > 0) {
        const QString scheme = repo.left(schemeEnd).toLower();
        if (scheme != u"file" && scheme != u"https" && scheme != u"http" && scheme != u"ssh") {
            return fail(ErrorCode::Invalid, u"the %1:// transport is not supported"_s.arg(scheme), where, forms);
        }
        // ssh reads a host or user starting with '-' as an option; QUrl may not even parse it.
        const QString authority = repo.mid(schemeEnd + 3).section(u'/', 0, 0);
        if (authority.section(u'@', -1).startsWith(u'-') ||
            (authority.contains(u'@') && authority.section(u'@', 0, 0).startsWith(u'-')))
            return fail(ErrorCode::Invalid, u"%1: host and user must not start with '-'"_s.arg(quoted(repo)), where);
        const QUrl url(repo, QUrl::StrictMode);
        if (!url.isValid())
            return fail(ErrorCode::Invalid, u"%1 is not a valid URL: %2"_s.arg(quoted(repo), url.errorString()), where);
        if (scheme == u"file") {
            if (!url.host().isEmpty() && url.host() != u"localhost")
                return fail(ErrorCode::Invalid, u"file:// addresses must name a local path (file:///srv/git/app.git)"_s,
                            where);
            if (url.path().size() < 2)
                return fail(ErrorCode::Invalid, u"file:// address has no path"_s, where, forms);
            return {};
        }
        if (url.host().isEmpty())
            return fail(ErrorCode::Invalid, u"%1 has no host"_s.arg(quoted(repo)), where, forms);
        if (url.host().startsWith(u'-') || url.userName().startsWith(u'-'))
            return fail(ErrorCode::Invalid, u"%1: host and user must not start with '-'"_s.arg(quoted(repo)), where);
        if (!url.password().isEmpty()) {
            return fail(ErrorCode::Invalid,
                        u"the address carries a password or token; the spec is not a secret store"_s, where,
                        u"remove it from the address; an administrator adds the token once as a source connection "
                        u"(pando connections add NAME --url https://HOST), and apps whose repository it covers read "
                        u"through it"_s);
        }
        if (url.path().size() < 2)
            return fail(ErrorCode::Invalid, u"%1 has no repository path"_s.arg(quoted(repo)), where, forms);
        return {};
    }

    // scp-like "user@host:path", as git reads it: no '/' before the first ':'.
    static const QRegularExpression scpLike(
        uR"(^(?:([A-Za-z0-9_][A-Za-z0-9._-]*)@)?([A-Za-z0-9][A-Za-z0-9.-]*):([^/].*|/.+)\z)"_s);
    const auto match = scpLike.match(repo);
    if (match.hasMatch()) {
        if (match.captured(3).startsWith(u'-'))
            return fail(ErrorCode::Invalid, u"the path in %1 must not start with '-'"_s.arg(quoted(repo)), where);
        return {};
    }
    return fail(ErrorCode::Invalid, u"%1 is not a repository address Pando accepts"_s.arg(quoted(repo)), where, forms);
}

Status checkRef(const QString &ref)
{
    const QString where = u"source.ref"_s;
    const QString hint = u"a branch, tag or commit, as git check-ref-format accepts them (main, v1.2.0, 3f9c2ab)"_s;
    auto bad = [&](const QString &why) {
        return fail(ErrorCode::Invalid, quoted(ref) + u' ' + why, where, hint);
    };
    if (ref.isEmpty())
        return fail(ErrorCode::Invalid, u"must not be empty"_s, where, hint);
    if (ref.size() > 255)
        return fail(ErrorCode::Invalid, u"must be at most 255 characters, got %1"_s.arg(ref.size()), where);
    if (ref.startsWith(u'-'))
        return bad(u"must not start with '-'"_s);
    if (hasControlOrSpace(ref))
        return bad(u"must not contain whitespace or control characters"_s);
    if (ref.contains(u".."_s))
        return bad(u"must not contain \"..\""_s);
    for (const QChar ch : u"~^:?*[\\"_s) {
        if (ref.contains(ch))
            return bad(u"must not contain '%1'"_s.arg(ch));
    }
    if (ref == u"@" || ref.contains(u"@{"_s))
        return bad(u"must not be \"@\" or contain \"@{\""_s);
    if (ref.startsWith(u'/') || ref.endsWith(u'/') || ref.contains(u"//"_s))
        return bad(u"must not start or end with '/' or contain \"//\""_s);
    if (ref.endsWith(u'.'))
        return bad(u"must not end with '.'"_s);
    for (const auto &part : ref.split(u'/')) {
        if (part.startsWith(u'.') || part.endsWith(u".lock"_s))
            return bad(u"has a part starting with '.' or ending with \".lock\""_s);
    }
    return {};
}

Status checkRelativePath(const QString &value, const QString &where, const QString &root, bool mustBeFile)
{
    if (value.isEmpty())
        return fail(ErrorCode::Invalid, u"must not be empty"_s, where);
    if (hasControl(value))
        return fail(ErrorCode::Invalid, u"must not contain control characters"_s, where);
    static const QRegularExpression drive(uR"(^[A-Za-z]:[/\\])"_s);
    if (value.startsWith(u'/') || value.startsWith(u'\\') || value.startsWith(u'~') || drive.match(value).hasMatch()) {
        return fail(ErrorCode::Invalid,
                    u"%1 is absolute; it must be a path relative to the %2"_s.arg(quoted(value), root), where);
    }
    const QString clean = QDir::cleanPath(value);
    if (clean == u".." || clean.startsWith(u"../"_s)) {
        return fail(ErrorCode::Invalid, u"%1 leaves the %2; it must stay inside it"_s.arg(quoted(value), root), where);
    }
    if (mustBeFile && clean == u".")
        return fail(ErrorCode::Invalid, u"%1 names a directory, not a file"_s.arg(quoted(value)), where);
    return {};
}

Status checkImageReference(const QString &value, const QString &where)
{
    // Docker's reference grammar: [host[:port]/]path[:tag][@sha256:digest], path components in
    // lower case joined by ".", "_", "__" or dashes.
    static const QRegularExpression reference(
        uR"(^(?:[A-Za-z0-9.-]+(?::[0-9]{1,5})?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)"
        uR"((?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?\z)"_s);
    if (value.size() > 255 || !reference.match(value).hasMatch())
        return fail(ErrorCode::Invalid, u"%1 is not an image reference"_s.arg(quoted(value)), where,
                    u"name an image as docker pull does: node:22-slim, registry.example.com/team/base:1.4"_s);
    return {};
}

Status checkVariableName(const QString &key, const QString &where)
{
    static const QRegularExpression name(uR"(^[A-Za-z_][A-Za-z0-9_]*\z)"_s);
    if (!name.match(key).hasMatch()) {
        return fail(ErrorCode::Invalid,
                    u"%1 is not a valid variable name: use letters, digits and '_', not starting with a digit"_s.arg(
                        quoted(key)),
                    where);
    }
    return {};
}

Status checkServiceSlot(const QString &slot, const QString &where)
{
    static const QRegularExpression name(uR"(^[a-z][a-z0-9_]{0,30}\z)"_s);
    if (!name.match(slot).hasMatch()) {
        return fail(ErrorCode::Invalid,
                    u"%1 is not a valid slot name: a lowercase identifier (letters, digits and '_', starting with a "
                    u"letter, at most 31 characters)"_s.arg(quoted(slot)),
                    where, u"its upper case prefixes the app's variables: db gives DB_URL, DB_HOST, ..."_s);
    }
    return {};
}

Status checkServiceKind(const QString &kind, const QString &where)
{
    const QStringList kinds = serviceKinds();
    if (kinds.contains(kind))
        return {};
    const QString best = closestWord(kind, kinds);
    return fail(ErrorCode::Invalid,
                u"unknown service kind %1%2"_s.arg(quoted(kind),
                                                   best.isEmpty() ? QString() : u"; did you mean \"%1\"?"_s.arg(best)),
                where, u"known kinds: %1"_s.arg(kinds.join(u", "_s)));
}

Status checkServiceVersion(const QString &kind, const QString &version, const QString &where)
{
    const QStringList versions = serviceVersions(kind);
    if (versions.contains(version))
        return {};
    return fail(ErrorCode::Invalid, u"there is no %1 image for version %2"_s.arg(kind, quoted(version)), where,
                u"versions of %1 this install has images for: %2"_s.arg(kind, versions.join(u", "_s)));
}

Status checkLabel(const QString &key, const QString &value, const QString &where)
{
    static const QRegularExpression name(uR"(^[A-Za-z0-9]([A-Za-z0-9._/-]{0,251}[A-Za-z0-9])?\z)"_s);
    if (!name.match(key).hasMatch()) {
        return fail(ErrorCode::Invalid,
                    u"%1 is not a valid label key: letters, digits, '.', '_', '/' and '-', 1-253 characters, "
                    u"starting and ending with a letter or digit"_s.arg(quoted(key)),
                    where);
    }
    if (key.startsWith(u"dev.pando."_s))
        return fail(ErrorCode::Invalid, u"labels starting with \"dev.pando.\" are reserved for Pando"_s, where);
    if (value.size() > 1024)
        return fail(ErrorCode::Invalid, u"label values must be at most 1024 characters"_s, where);
    if (hasControl(value))
        return fail(ErrorCode::Invalid, u"label values must not contain control characters"_s, where);
    return {};
}

Status checkHealthPath(const QString &path)
{
    const QString where = u"health.path"_s;
    if (!path.startsWith(u'/'))
        return fail(ErrorCode::Invalid, u"%1 must start with '/'"_s.arg(quoted(path)), where);
    if (path.size() > 1024)
        return fail(ErrorCode::Invalid, u"must be at most 1024 characters"_s, where);
    if (hasControlOrSpace(path))
        return fail(ErrorCode::Invalid, u"must not contain whitespace or control characters"_s, where);
    return {};
}

Status checkMemory(qint64 bytes, const QString &where)
{
    if (bytes < MinMemoryBytes) {
        return fail(ErrorCode::Invalid, u"%1 is below the minimum of 6Mi (Docker's floor)"_s.arg(formatMemory(bytes)),
                    where, u"leave resources.memory out to get the host's default"_s);
    }
    if (bytes > MaxMemoryBytes)
        return fail(ErrorCode::Invalid, u"%1 is more than 1Pi"_s.arg(formatMemory(bytes)), where);
    return {};
}

Status checkCpus(double cpus, const QString &where)
{
    if (!std::isfinite(cpus) || cpus <= 0 || cpus > MaxCpus)
        return fail(ErrorCode::Invalid, u"must be greater than 0 and at most 1024, got %1"_s.arg(cpus), where);
    return {};
}

// "30s", "2m", "1h", "500ms", "1m30s", or an integer number of seconds.
std::optional<qint64> parseDurationMs(const QString &value)
{
    static const QRegularExpression whole(uR"(^([0-9]{1,9}(ms|s|m|h|d))+\z)"_s);
    static const QRegularExpression part(uR"(([0-9]{1,9})(ms|s|m|h|d))"_s);
    bool isNumber = false;
    const qint64 seconds = value.toLongLong(&isNumber);
    if (isNumber)
        return seconds >= 0 && seconds < 1000000000 ? std::optional(seconds * 1000) : std::nullopt;
    if (!whole.match(value).hasMatch())
        return std::nullopt;
    qint64 total = 0;
    for (auto it = part.globalMatch(value); it.hasNext();) {
        const auto m = it.next();
        const qint64 n = m.captured(1).toLongLong();
        const QString unit = m.captured(2);
        total += unit == u"ms"  ? n
                 : unit == u"s" ? n * 1000
                 : unit == u"m" ? n * 60000
                 : unit == u"h" ? n * 3600000
                                : n * 86400000;
    }
    return total;
}

std::unexpected<Error> invalidAt(const DocNode &node, const QString &message, const QString &where, const QString &hint)
{
    return std::unexpected(at(Error{ErrorCode::Invalid, message, where, hint}, node));
}

QString shownValue(const DocNode &node)
{
    return node.kind == DocNode::Kind::Scalar ? quoted(node.text)
                                              : (node.kind == DocNode::Kind::Map ? u"a mapping"_s : u"a list"_s);
}

} // namespace pando::core::detail
