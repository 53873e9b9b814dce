#include "adapters/api/repoaddress.h"

#include <QHostAddress>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters {

namespace {

constexpr std::pair<ForgeKind, const char16_t *> KindNames[] = {
    {ForgeKind::Generic, u"generic"},   {ForgeKind::GitHub, u"github"},       {ForgeKind::GitLab, u"gitlab"},
    {ForgeKind::Gitea, u"gitea"},       {ForgeKind::Bitbucket, u"bitbucket"}, {ForgeKind::AzureDevOps, u"azure-devops"},
    {ForgeKind::Registry, u"registry"},
};

const QString DockerHub = u"docker.io"_s;

const QString AzureHost = u"dev.azure.com"_s;

QStringList segmentsOf(const QString &path)
{
    return path.split(u'/', Qt::SkipEmptyParts);
}

// Whether list starts with prefix, segment by segment, ignoring case as the forges do.
bool startsWith(const QStringList &list, const QStringList &prefix)
{
    if (prefix.size() > list.size())
        return false;
    for (qsizetype i = 0; i < prefix.size(); ++i) {
        if (list.at(i).compare(prefix.at(i), Qt::CaseInsensitive) != 0)
            return false;
    }
    return true;
}

// Azure DevOps answers on dev.azure.com, on ORG.visualstudio.com (the older name) and for ssh on
// ssh.dev.azure.com or vs-ssh.visualstudio.com with a "v3" first segment: all read as
// dev.azure.com/ORG/….
void readAzureHost(QString &host, QStringList &path)
{
    if (host == u"ssh.dev.azure.com"_s || host == u"vs-ssh.visualstudio.com"_s) {
        host = AzureHost;
        if (!path.isEmpty() && path.first() == u"v3"_s)
            path.removeFirst();
    } else if (host.endsWith(u".visualstudio.com"_s)) {
        path.prepend(host.section(u'.', 0, 0));
        host = AzureHost;
    }
}

bool isLoopbackHost(const QString &host)
{
    if (host == u"localhost"_s)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

int defaultPort(const QString &scheme)
{
    return scheme == u"http"_s ? 80 : scheme == u"ssh"_s ? 22 : 443;
}

Error invalidAddress(const QString &url, const QString &why)
{
    return Error{ErrorCode::Invalid, u"\"%1\" %2"_s.arg(url, why), u"source.repo"_s,
                 u"use https://host/owner/repo, ssh://git@host/owner/repo or git@host:owner/repo"_s};
}

} // namespace

QString forgeKindName(ForgeKind kind)
{
    for (const auto &[k, name] : KindNames) {
        if (k == kind)
            return QString::fromUtf16(name);
    }
    return {};
}

QStringList forgeKindNames()
{
    QStringList names;
    for (const auto &[kind, name] : KindNames)
        names << QString::fromUtf16(name);
    return names;
}

bool hasForgeApi(ForgeKind kind)
{
    return kind != ForgeKind::Generic && kind != ForgeKind::Registry;
}

Result<ForgeKind> parseForgeKind(const QString &name)
{
    for (const auto &[kind, known] : KindNames) {
        if (name == QStringView(known))
            return kind;
    }
    return std::unexpected(Error{ErrorCode::Invalid, u"\"%1\" is not a kind of host Pando connects to"_s.arg(name),
                                 u"kind"_s, u"use one of: "_s + forgeKindNames().join(u", "_s)});
}

QString RepoAddress::text() const
{
    return u"%1 on %2"_s.arg(path.join(u'/'), host);
}

Result<RepoAddress> parseRepoAddress(const QString &url, ForgeKind kind)
{
    RepoAddress address;
    const qsizetype schemeEnd = url.indexOf(u"://"_s);
    if (schemeEnd > 0) {
        const QString scheme = url.left(schemeEnd).toLower();
        if (scheme == u"file"_s) {
            address.transport = RepoAddress::Transport::File;
            address.path = segmentsOf(url.mid(schemeEnd + 3));
            return address;
        }
        if (scheme != u"https"_s && scheme != u"http"_s && scheme != u"ssh"_s)
            return std::unexpected(invalidAddress(url, u"uses the %1:// transport"_s.arg(scheme)));
        const QUrl parsed(url, QUrl::StrictMode);
        if (!parsed.isValid() || parsed.host().isEmpty())
            return std::unexpected(invalidAddress(url, u"is not a URL with a host"_s));
        address.transport = scheme == u"ssh"_s    ? RepoAddress::Transport::Ssh
                            : scheme == u"http"_s ? RepoAddress::Transport::Http
                                                  : RepoAddress::Transport::Https;
        address.host = parsed.host().toLower();
        address.port = parsed.port(-1);
        address.user = parsed.userName();
        address.path = segmentsOf(parsed.path());
    } else {
        // scp-like: [user@]host:path
        const qsizetype colon = url.indexOf(u':');
        if (colon <= 0)
            return std::unexpected(invalidAddress(url, u"is neither a URL nor user@host:path"_s));
        const QString authority = url.left(colon);
        address.transport = RepoAddress::Transport::Ssh;
        address.user = authority.contains(u'@') ? authority.section(u'@', 0, -2) : QString();
        address.host = authority.section(u'@', -1).toLower();
        address.path = segmentsOf(url.mid(colon + 1));
        if (address.host.isEmpty())
            return std::unexpected(invalidAddress(url, u"names no host"_s));
    }
    readAzureHost(address.host, address.path);
    if (kind == ForgeKind::AzureDevOps || address.host == AzureHost)
        address.path.removeAll(u"_git"_s);
    if (!address.path.isEmpty() && address.path.last().endsWith(u".git"_s)) {
        address.path.last().chop(4);
        if (address.path.last().isEmpty())
            address.path.removeLast();
    }
    if (address.path.isEmpty())
        return std::unexpected(invalidAddress(url, u"names no repository on its host"_s));
    return address;
}

Status checkForgeScope(const ForgeScope &scope)
{
    const QString hint = u"give the forge's address, e.g. https://github.com or https://git.example.com/gitlab"_s;
    const QUrl url(scope.baseUrl, QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (scope.baseUrl.isEmpty() || !url.isValid() || url.host().isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a URL with a host"_s.arg(scope.baseUrl), u"url"_s, hint);
    if (scheme != u"https"_s && scheme != u"http"_s && scheme != u"ssh"_s)
        return fail(ErrorCode::Invalid, u"\"%1\" must be an https:// or ssh:// address"_s.arg(scope.baseUrl), u"url"_s,
                    hint);
    // A token sent over plain http could be read on the way; on loopback it never leaves the machine.
    if (scheme == u"http"_s && !isLoopbackHost(url.host()))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is plain http: a credential sent to it could be read on the way"_s.arg(scope.baseUrl),
                    u"url"_s, u"use the forge's https:// address"_s);
    if (!url.userInfo().isEmpty() || url.hasQuery() || url.hasFragment())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" must not carry a user, password, query or fragment; the credential is given "
                    u"on its own"_s.arg(url.toDisplayString(QUrl::RemoveUserInfo)),
                    u"url"_s, hint);
    if (scope.owner.size() > 255)
        return fail(ErrorCode::Invalid, u"must be at most 255 characters"_s, u"owner"_s);
    for (const QString &segment : scope.owner.split(u'/')) {
        const bool plain = !segment.isEmpty() && segment != u"."_s && segment != u".."_s &&
                           std::all_of(segment.begin(), segment.end(), [](QChar c) {
                               return c.isLetterOrNumber() || c == u'-' || c == u'_' || c == u'.';
                           });
        if (!scope.owner.isEmpty() && !plain)
            return fail(ErrorCode::Invalid,
                        u"\"%1\" is not a user, organisation or group name (letters, digits, '-', '_', '.', groups "
                        u"separated by '/')"_s.arg(scope.owner),
                        u"owner"_s);
    }
    return {};
}

Result<RepoAddress> parseImageAddress(const QString &reference)
{
    QString name = reference.section(u'@', 0, 0);
    if (const qsizetype colon = name.lastIndexOf(u':'); colon > name.lastIndexOf(u'/'))
        name.truncate(colon);
    QStringList path = name.split(u'/');
    RepoAddress address;
    address.transport = RepoAddress::Transport::Registry;
    const QString first = path.first();
    if (path.size() > 1 && (first.contains(u'.') || first.contains(u':') || first == u"localhost"_s)) {
        path.removeFirst();
        const QUrl authority(u"//"_s + first);
        address.host = authority.host().toLower();
        address.port = authority.port(-1);
        if (address.host == u"index.docker.io"_s || address.host == u"registry-1.docker.io"_s)
            address.host = DockerHub;
    } else {
        address.host = DockerHub;
    }
    if (address.host == DockerHub && path.size() == 1)
        path.prepend(u"library"_s);
    if (address.host.isEmpty() || path.contains(QString()))
        return std::unexpected(Error{ErrorCode::Invalid,
                                     u"\"%1\" is not an image reference with a repository"_s.arg(reference),
                                     u"source.image"_s, u"write REGISTRY/NAME:TAG, e.g. ghcr.io/acme/api:1.4"_s});
    address.path = path;
    return address;
}

QString registryServer(const ForgeScope &scope)
{
    const QUrl base(scope.baseUrl);
    const QString host = base.host().toLower();
    if (host == DockerHub || host == u"index.docker.io"_s || host == u"registry-1.docker.io"_s)
        return u"https://index.docker.io/v1/"_s;
    return base.port(-1) < 0 ? host : u"%1:%2"_s.arg(host).arg(base.port());
}

int coverage(const ForgeScope &scope, bool tokenAuth, const RepoAddress &address)
{
    const bool image = address.transport == RepoAddress::Transport::Registry;
    if (image != (scope.kind == ForgeKind::Registry))
        return -1;
    if (image) {
        // A reference names no scheme (the engine's settings decide it): it is read as the
        // scope's, so the host, the port (none: the scheme's default) and the owner decide.
        RepoAddress web = address;
        web.transport = QUrl(scope.baseUrl).scheme().toLower() == u"http"_s ? RepoAddress::Transport::Http
                                                                            : RepoAddress::Transport::Https;
        ForgeScope generic = scope;
        generic.kind = ForgeKind::Generic;
        return coverage(generic, tokenAuth, web);
    }
    if (address.transport == RepoAddress::Transport::File || tokenAuth != address.isHttp())
        return -1;
    const QUrl base(scope.baseUrl);
    const QString baseScheme = base.scheme().toLower();
    QString host = base.host().toLower();
    QStringList basePath = segmentsOf(base.path());
    readAzureHost(host, basePath);
    if (host != address.host)
        return -1;
    // The web address's port says nothing of the ssh port (self-hosted forges often use 2222).
    if (address.isHttp() && baseScheme != u"ssh"_s) {
        const QString scheme = address.transport == RepoAddress::Transport::Http ? u"http"_s : u"https"_s;
        if (scheme != baseScheme ||
            (address.port < 0 ? defaultPort(scheme) : address.port) != base.port(defaultPort(baseScheme)))
            return -1;
    }
    QStringList rest = address.path;
    int score = 1;
    if (startsWith(rest, basePath)) {
        rest = rest.mid(basePath.size());
        score += int(basePath.size());
    } else if (address.isHttp() || scope.kind == ForgeKind::AzureDevOps) {
        // Over ssh a forge below a web path (GitLab's relative root) serves repositories without
        // it; Azure DevOps' base path is its organisation, which every address names.
        return -1;
    }
    if (scope.kind == ForgeKind::Bitbucket && address.isHttp() && !rest.isEmpty() && rest.first() == u"scm"_s)
        rest.removeFirst();
    const QStringList owner = segmentsOf(scope.owner);
    if (!startsWith(rest, owner))
        return -1;
    rest = rest.mid(owner.size());
    if (rest.isEmpty())
        return -1;
    return score + int(owner.size());
}

QString defaultTokenUser(ForgeKind kind)
{
    switch (kind) {
    case ForgeKind::GitHub:
        return u"x-access-token"_s;
    case ForgeKind::GitLab:
        return u"oauth2"_s;
    case ForgeKind::Bitbucket:
        return u"x-token-auth"_s;
    case ForgeKind::AzureDevOps:
        return u"pat"_s;
    case ForgeKind::Generic:
    case ForgeKind::Gitea:
    case ForgeKind::Registry:
        break;
    }
    return {};
}

} // namespace pando::adapters
