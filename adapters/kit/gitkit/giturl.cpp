#include "giturl.h"

#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

Status refuse(const QString &url, const QString &why, const QString &hint = {})
{
    return fail(ErrorCode::Invalid, u"repository URL refused: "_s + why, displayUrl(url),
                hint.isEmpty() ? u"use file://, https://, http://, ssh:// or user@host:path"_s : hint);
}

// A part of the URL that starts with '-' could be read as a command-line option by an ssh or
// git program further down (ssh://-oProxyCommand=..., host:-x); nothing legitimate needs one.
bool hasOptionLookingPart(const QString &url, qsizetype *at)
{
    static const QString separators = u"/:@?&=;,+"_s;
    for (qsizetype i = 0; i < url.size(); ++i) {
        if (url.at(i) == u'-' && (i == 0 || separators.contains(url.at(i - 1)))) {
            *at = i;
            return true;
        }
    }
    return false;
}

} // namespace

QString displayUrl(const QString &url)
{
    // Only scheme URLs carry user:password@; scp-like ones have no password field.
    if (!url.contains(u"://"_s))
        return url;
    QUrl parsed(url, QUrl::TolerantMode);
    if (!parsed.isValid() || parsed.password().isEmpty())
        return url;
    parsed.setPassword(u"***"_s);
    return parsed.toString();
}

Status checkRepositoryUrl(const QString &url)
{
    if (url.isEmpty())
        return fail(ErrorCode::Invalid, u"repository URL is empty"_s, {},
                    u"use file://, https://, http://, ssh:// or user@host:path"_s);
    if (url.size() > 4096)
        return refuse(url.left(64) + u"..."_s, u"it is longer than 4096 characters"_s);
    for (qsizetype i = 0; i < url.size(); ++i) {
        const QChar c = url.at(i);
        if (c.isSpace() || c.category() == QChar::Other_Control || c.unicode() < 0x20 || c.unicode() == 0x7f)
            return refuse(url, u"it contains whitespace or a control character at position %1"_s.arg(i));
    }
    if (url.startsWith(u'-'))
        return refuse(url, u"it starts with '-' and could be read as an option"_s);
    static const char *const optionWords[] = {"--upload-pack", "--receive-pack", "--exec", "--config", "--template"};
    for (const char *word : optionWords) {
        if (url.contains(QLatin1String(word), Qt::CaseInsensitive))
            return refuse(url, u"it contains the option text \"%1\""_s.arg(QLatin1String(word)));
    }
    qsizetype dash = 0;
    if (hasOptionLookingPart(url, &dash))
        return refuse(url, u"the part at position %1 starts with '-' and could be read as an option"_s.arg(dash));

    static const QRegularExpression schemeRe(u"^([A-Za-z][A-Za-z0-9+.-]*)://"_s);
    const QRegularExpressionMatch scheme = schemeRe.match(url);
    if (scheme.hasMatch()) {
        const QString name = scheme.captured(1).toLower();
        static const QStringList allowed = {u"file"_s, u"https"_s, u"http"_s, u"ssh"_s};
        if (!allowed.contains(name))
            return refuse(url, u"the scheme \"%1\" is not supported"_s.arg(name));
        // "::" is git's transport syntax; the only place it may legitimately appear in a
        // scheme URL is an IPv6 host in brackets.
        QString withoutHost = url;
        static const QRegularExpression bracketHost(u"^[A-Za-z][A-Za-z0-9+.-]*://([^/@]*@)?\\[[0-9A-Fa-f:.]+\\]"_s);
        withoutHost.remove(bracketHost);
        if (withoutHost.contains(u"::"_s))
            return refuse(url, u"it contains \"::\" (git transport syntax such as ext:: or fd::)"_s);
        const QUrl parsed(url, QUrl::StrictMode);
        if (!parsed.isValid())
            return refuse(url, u"it is not a well-formed URL (%1)"_s.arg(parsed.errorString()));
        if (name == u"file"_s) {
            if (!parsed.host().isEmpty() && parsed.host() != u"localhost"_s)
                return refuse(url, u"a file:// URL must not name a host"_s, u"write file:///absolute/path"_s);
            if (parsed.path().isEmpty() || parsed.path() == u"/"_s)
                return refuse(url, u"the file:// URL has no path"_s, u"write file:///absolute/path"_s);
        } else if (parsed.host().isEmpty()) {
            return refuse(url, u"the URL has no host"_s);
        }
        return {};
    }

    if (url.contains(u"::"_s))
        return refuse(url, u"it contains \"::\" (git transport syntax such as ext:: or fd::)"_s);
    // scp-like: user@host:path, where the user and host contain no '/' and the path is not empty.
    static const QRegularExpression scpRe(u"^([A-Za-z0-9._~+-]+)@([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):(.+)$"_s);
    const QRegularExpressionMatch scp = scpRe.match(url);
    if (scp.hasMatch())
        return {};
    if (url.contains(u':'))
        return refuse(url, u"it has an unknown scheme or is not of the form user@host:path"_s);
    return refuse(url, u"it is a bare local path"_s, u"write file:///absolute/path for a local repository"_s);
}

} // namespace pando::adapters::git::detail
