#include "core/spec/specroute.h"

#include "core/spec/specrules.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

constexpr int MaxDomainLength = 253;
constexpr int MaxLabelLength = 63;
constexpr int MaxPathLength = 256;

std::unexpected<Error> invalid(const QString &where, const QString &message, const QString &hint = {})
{
    return fail(ErrorCode::Invalid, message, where, hint);
}

bool isAscii(const QString &text)
{
    return std::ranges::all_of(text, [](QChar c) { return c.unicode() < 0x80; });
}

// One label of an ASCII name: letters, digits and inner hyphens; punycode that decodes.
Status checkLabel(const QString &label, const QString &name, const QString &where)
{
    static const QRegularExpression shape(uR"(^[a-z0-9]([a-z0-9-]*[a-z0-9])?\z)"_s);
    if (label.isEmpty())
        return invalid(where, u"%1 has an empty label"_s.arg(detail::quoted(name)),
                       u"write a name like app.example.com"_s);
    if (label.size() > MaxLabelLength)
        return invalid(where, u"the label %1 is longer than 63 characters"_s.arg(detail::quoted(label)));
    if (!shape.match(label).hasMatch())
        return invalid(
            where, u"%1 is not a host name: labels hold letters, digits and inner hyphens"_s.arg(detail::quoted(name)),
            u"write a name like app.example.com"_s);
    if (label.startsWith(u"xn--")) {
        const QString decoded = QUrl::fromAce(label.toLatin1(), QUrl::IgnoreIDNWhitelist);
        if (decoded == label || QString::fromLatin1(QUrl::toAce(decoded)) != label)
            return invalid(where, u"the label %1 is not valid punycode"_s.arg(detail::quoted(label)),
                           u"write the name in Unicode and Pando converts it"_s);
    }
    return {};
}

Result<QString> scalar(const detail::DocNode &node, const QString &where, const QString &expected)
{
    auto value = detail::scalarText(node, where, expected);
    if (!value)
        return std::unexpected(detail::at(value.error(), node));
    return value;
}

// A list of strings, or one string for a list of one.
Result<std::vector<std::pair<QString, const detail::DocNode *>>>
strings(const detail::DocNode &node, const QString &where, int most, const QString &expected)
{
    std::vector<std::pair<QString, const detail::DocNode *>> out;
    if (node.kind == detail::DocNode::Kind::Null)
        return out;
    if (node.kind == detail::DocNode::Kind::Scalar) {
        auto value = scalar(node, where, expected);
        if (!value)
            return std::unexpected(value.error());
        out.emplace_back(*value, &node);
        return out;
    }
    if (node.kind != detail::DocNode::Kind::Sequence)
        return std::unexpected(
            detail::at(Error{ErrorCode::Invalid, u"expected a list of %1"_s.arg(expected), where, {}}, node));
    if (node.items.size() > size_t(most))
        return std::unexpected(
            detail::at(Error{ErrorCode::Invalid,
                             u"%1 entries; a route may have at most %2"_s.arg(node.items.size()).arg(most),
                             where,
                             {}},
                       node));
    for (size_t i = 0; i < node.items.size(); ++i) {
        auto value = scalar(node.items[i], u"%1[%2]"_s.arg(where).arg(i), expected);
        if (!value)
            return std::unexpected(value.error());
        out.emplace_back(*value, &node.items[i]);
    }
    return out;
}

Status checkDomains(const QStringList &domains, std::optional<adapters::TlsMode> tls, QStringList *normalised)
{
    if (domains.size() > MaxRouteDomains)
        return invalid(u"route.domains"_s,
                       u"%1 entries; a route may have at most %2"_s.arg(domains.size()).arg(MaxRouteDomains));
    QStringList kept;
    for (qsizetype i = 0; i < domains.size(); ++i) {
        const QString where = u"route.domains[%1]"_s.arg(i);
        auto name = normaliseDomain(domains[i], where);
        if (!name)
            return std::unexpected(name.error());
        if (const qsizetype first = kept.indexOf(*name); first >= 0)
            return invalid(where,
                           u"%1 is the same name as route.domains[%2] (%3)"_s.arg(detail::quoted(domains[i]))
                               .arg(first)
                               .arg(*name),
                           u"list each name once"_s);
        if (name->startsWith(u"*.") && tls.value_or(adapters::TlsMode::Auto) == adapters::TlsMode::Auto &&
            !isLocalOnlyDomain(*name))
            return invalid(where,
                           u"a wildcard certificate needs the ACME DNS challenge, which Pando's edge does not "
                           "answer"_s,
                           u"list the names, or set route.tls to internal or off"_s);
        kept << *name;
    }
    if (normalised)
        *normalised = kept;
    return {};
}

Status checkPaths(const QStringList &paths, QStringList *normalised)
{
    if (paths.size() > MaxRoutePaths)
        return invalid(u"route.paths"_s,
                       u"%1 entries; a route may have at most %2"_s.arg(paths.size()).arg(MaxRoutePaths));
    QStringList kept;
    for (qsizetype i = 0; i < paths.size(); ++i) {
        const QString where = u"route.paths[%1]"_s.arg(i);
        auto path = normaliseRoutePath(paths[i], where);
        if (!path)
            return std::unexpected(path.error());
        if (const qsizetype first = kept.indexOf(*path); first >= 0)
            return invalid(where, u"the same path as route.paths[%1]"_s.arg(first));
        kept << *path;
    }
    if (kept.size() > 1 && kept.contains(u"/"_s))
        return invalid(u"route.paths"_s, u"\"/\" already serves every path"_s,
                       u"leave route.paths out to serve the whole host, or list only prefixes"_s);
    if (normalised)
        *normalised = kept;
    return {};
}

} // namespace

Result<QString> normaliseDomain(const QString &name, const QString &where)
{
    QString text = name.trimmed();
    if (text.endsWith(u'.'))
        text.chop(1); // the root's dot: "example.com." is example.com
    if (text.isEmpty())
        return invalid(where, u"expected a domain name like app.example.com"_s);
    if (text.contains(u"://"_s) || text.contains(u'/') || text.contains(u':') || text.contains(u'@'))
        return invalid(where, u"%1 is not a host name"_s.arg(detail::quoted(name)),
                       u"write only the name, like app.example.com (no scheme, port or path)"_s);
    const bool wildcard = text.startsWith(u"*."_s);
    const QString rest = wildcard ? text.mid(2) : text;
    if (rest.contains(u'*'))
        return invalid(where, u"a wildcard may only be the whole first label"_s, u"write it as *.example.com"_s);
    QString ascii;
    if (isAscii(rest)) {
        ascii = rest.toLower();
    } else {
        const QStringList labels = rest.split(u'.');
        if (std::ranges::any_of(labels, [](const QString &l) { return l.toLower().startsWith(u"xn--"); }))
            return invalid(where, u"%1 mixes Unicode and punycode labels"_s.arg(detail::quoted(name)),
                           u"write the whole name in Unicode, or the whole name in punycode"_s);
        ascii = QString::fromLatin1(QUrl::toAce(rest.toLower(), QUrl::AceTransitionalProcessing));
        if (ascii.isEmpty())
            return invalid(where, u"%1 is not a valid internationalised domain name"_s.arg(detail::quoted(name)));
    }
    if (ascii.size() + (wildcard ? 2 : 0) > MaxDomainLength)
        return invalid(where, u"longer than 253 characters"_s);
    const QStringList labels = ascii.split(u'.');
    for (const QString &label : labels)
        if (auto ok = checkLabel(label, ascii, where); !ok)
            return std::unexpected(ok.error());
    static const QRegularExpression digits(uR"(^[0-9]+\z)"_s);
    if (digits.match(labels.last()).hasMatch())
        return invalid(where, u"%1 is an IP address, not a domain name"_s.arg(detail::quoted(name)),
                       u"apps are reached by name; the stable port serves them by address"_s);
    if (labels.size() < 2)
        return invalid(where,
                       wildcard ? u"a wildcard must stand under a domain, like *.apps.example.com"_s
                                : u"%1 is a top-level name, not a domain an app can hold"_s.arg(detail::quoted(name)),
                       u"write a name like app.example.com"_s);
    return wildcard ? u"*."_s + ascii : ascii;
}

Result<QString> normaliseRoutePath(const QString &path, const QString &where)
{
    static const QRegularExpression allowed(uR"(^/[A-Za-z0-9._~!$&'()+,;=:@%/-]*\z)"_s);
    static const QRegularExpression badEscape(uR"(%(?![0-9A-Fa-f]{2}))"_s);
    if (!path.startsWith(u'/'))
        return invalid(where, u"must start with \"/\""_s, u"write it like /api"_s);
    if (path.size() > MaxPathLength)
        return invalid(where, u"longer than %1 characters"_s.arg(MaxPathLength));
    if (path.contains(u'*') || path.contains(u'?') || path.contains(u'#'))
        return invalid(where, u"%1 has a wildcard, query or fragment"_s.arg(detail::quoted(path)),
                       u"a path is a prefix: /api serves /api and everything under /api/"_s);
    if (!allowed.match(path).hasMatch() || badEscape.match(path).hasMatch())
        return invalid(where, u"%1 has characters a URL path may not hold"_s.arg(detail::quoted(path)));
    QString kept = path;
    while (kept.size() > 1 && kept.endsWith(u'/'))
        kept.chop(1);
    const QStringList segments = kept.mid(1).split(u'/');
    for (const QString &segment : segments) {
        if (kept != u"/" && segment.isEmpty())
            return invalid(where, u"%1 has an empty segment (\"//\")"_s.arg(detail::quoted(path)));
        if (segment == u"." || segment == u"..")
            return invalid(where, u"%1 has a \".\" or \"..\" segment"_s.arg(detail::quoted(path)));
    }
    return kept;
}

bool isLocalOnlyDomain(const QString &host)
{
    static const QStringList suffixes = {u"local"_s,     u"lan"_s,     u"internal"_s, u"home.arpa"_s,
                                         u"localhost"_s, u"test"_s,    u"example"_s,  u"invalid"_s,
                                         u"intranet"_s,  u"private"_s, u"corp"_s,     u"home"_s};
    return std::ranges::any_of(suffixes, [&](const QString &s) { return host == s || host.endsWith(u'.' + s); });
}

adapters::TlsMode routeTlsFor(const AppSpec::Route &route, const QString &host)
{
    if (route.tls)
        return *route.tls;
    return isLocalOnlyDomain(host) ? adapters::TlsMode::Internal : adapters::TlsMode::Auto;
}

QString movedName(AppSpec::Route::Moved moved)
{
    return moved == AppSpec::Route::Moved::Drop ? u"drop"_s : u"redirect"_s;
}

namespace detail {

Status readRouteAddresses(const DocNode &route, AppSpec &spec)
{
    if (const DocNode *tls = route.value(u"tls"_s); tls && tls->kind != DocNode::Kind::Null) {
        auto value = scalar(*tls, u"route.tls"_s, u"auto, internal or off"_s);
        if (!value)
            return std::unexpected(value.error());
        if (*value == u"auto")
            spec.route.tls = adapters::TlsMode::Auto;
        else if (*value == u"internal")
            spec.route.tls = adapters::TlsMode::Internal;
        else if (*value == u"off")
            spec.route.tls = adapters::TlsMode::Off;
        else
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"expected auto, internal or off, got %1"_s.arg(quoted(*value)),
                                            u"route.tls"_s,
                                            {}},
                                      *tls));
    }
    if (const DocNode *moved = route.value(u"moved"_s); moved && moved->kind != DocNode::Kind::Null) {
        auto value = scalar(*moved, u"route.moved"_s, u"redirect or drop"_s);
        if (!value)
            return std::unexpected(value.error());
        if (*value != u"redirect" && *value != u"drop")
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"expected redirect or drop, got %1"_s.arg(quoted(*value)),
                                            u"route.moved"_s,
                                            {}},
                                      *moved));
        spec.route.moved = *value == u"drop" ? AppSpec::Route::Moved::Drop : AppSpec::Route::Moved::Redirect;
    }
    if (const DocNode *auth = route.value(u"auth"_s); auth && auth->kind != DocNode::Kind::Null) {
        auto value = scalar(*auth, u"route.auth"_s, u"none or pando"_s);
        if (!value)
            return std::unexpected(value.error());
        if (*value != u"none" && *value != u"pando")
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"expected none or pando, got %1"_s.arg(quoted(*value)),
                                            u"route.auth"_s,
                                            u"pando: only people signed in to Pando reach the app"_s},
                                      *auth));
        spec.route.auth = *value == u"pando" ? AppSpec::Route::Auth::Pando : AppSpec::Route::Auth::None;
    }
    if (const DocNode *domains = route.value(u"domains"_s)) {
        auto names = strings(*domains, u"route.domains"_s, MaxRouteDomains, u"domain names"_s);
        if (!names)
            return std::unexpected(names.error());
        QStringList written;
        for (const auto &[name, node] : *names)
            written << name;
        if (auto ok = checkDomains(written, spec.route.tls, &spec.route.domains); !ok) {
            // The node the failing entry came from, for its line and column.
            const qsizetype index = ok.error().where.section(u'[', 1).section(u']', 0, 0).toInt();
            return std::unexpected(at(
                ok.error(), *names->at(size_t(std::clamp<qsizetype>(index, 0, qsizetype(names->size()) - 1))).second));
        }
    }
    if (const DocNode *paths = route.value(u"paths"_s)) {
        auto values = strings(*paths, u"route.paths"_s, MaxRoutePaths, u"paths"_s);
        if (!values)
            return std::unexpected(values.error());
        QStringList written;
        for (const auto &[path, node] : *values)
            written << path;
        if (auto ok = checkPaths(written, &spec.route.paths); !ok)
            return std::unexpected(at(ok.error(), *paths));
    }
    return {};
}

Status checkRouteAddresses(const AppSpec::Route &route)
{
    QStringList domains;
    if (auto ok = checkDomains(route.domains, route.tls, &domains); !ok)
        return ok;
    if (domains != route.domains)
        return invalid(u"route.domains"_s, u"names must be kept in their ASCII lower-case form"_s);
    QStringList paths;
    if (auto ok = checkPaths(route.paths, &paths); !ok)
        return ok;
    if (paths != route.paths)
        return invalid(u"route.paths"_s, u"paths must be kept without a trailing \"/\""_s);
    return {};
}

void insertRouteJson(const AppSpec::Route &route, QJsonObject &json)
{
    if (!route.domains.isEmpty())
        json.insert(u"domains"_s, QJsonArray::fromStringList(route.domains));
    if (!route.paths.isEmpty())
        json.insert(u"paths"_s, QJsonArray::fromStringList(route.paths));
    if (route.tls)
        json.insert(u"tls"_s, adapters::tlsModeName(*route.tls));
    if (route.moved != AppSpec::Route::Moved::Redirect)
        json.insert(u"moved"_s, movedName(route.moved));
    if (route.auth == AppSpec::Route::Auth::Pando)
        json.insert(u"auth"_s, u"pando"_s);
}

} // namespace detail

} // namespace pando::core
