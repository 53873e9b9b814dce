#pragma once
// Repository addresses as people write them, and which source connection covers one: forgekit's
// reading of addresses, kept here because core decides which connection reads an app's source
// and the git adapters build the credential from the same reading. Every forge's forms are read:
// https://host/o/r(.git), git@host:o/r, ssh://git@host:port/o/r, Azure DevOps'
// dev.azure.com/org/proj/_git/r, org.visualstudio.com and ssh.dev.azure.com:v3/…, Bitbucket
// Data Center's /scm/ paths.
//
// Threading: pure functions; any thread.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace pando::adapters {

// The forges a connection may be for. Generic is any git host (HTTPS user and token, or an SSH
// key); the others add their own address forms and token user names. Registry is not a forge: a
// container image registry (docker login's user and password or token), read by image references.
enum class ForgeKind { Generic, GitHub, GitLab, Gitea, Bitbucket, AzureDevOps, Registry };
// "generic", "github", "gitlab", "gitea", "bitbucket", "azure-devops", "registry"
QString forgeKindName(ForgeKind kind);
// Invalid (where "kind", the kinds in the hint) for a name that is none of them.
Result<ForgeKind> parseForgeKind(const QString &name);
QStringList forgeKindNames();
// Whether Pando knows the kind's web API (repositories, branches, webhooks, statuses): not a
// generic git host's, nor a registry's.
bool hasForgeApi(ForgeKind kind);

// One repository address, read.
struct RepoAddress {
    enum class Transport { File, Http, Https, Ssh, Registry }; // Registry: an image reference
    Transport transport = Transport::Https;
    QString host;  // lower case; Azure DevOps' ssh and visualstudio.com hosts read as dev.azure.com
    int port = -1; // -1: the transport's default
    QString user;  // the user part, when the address names one (git@, org@)
    // The repository's path segments on its host, without a trailing ".git" or the forge's
    // decorations (Azure's "_git" and ssh "v3", Bitbucket Data Center's "scm"): ["acme", "api"].
    QStringList path;
    bool isHttp() const { return transport == Transport::Http || transport == Transport::Https; }
    QString text() const; // "acme/api on github.com", for messages
};

// Reads an address in any form above. Invalid (where "source.repo") when it is none of them;
// file:// addresses read with an empty host.
Result<RepoAddress> parseRepoAddress(const QString &url, ForgeKind kind = ForgeKind::Generic);

// Reads an image reference as Docker names its registry and repository: the first component is
// the registry when it has a '.' or a ':' or is "localhost", else Docker Hub ("docker.io", whose
// one-component names are "library/NAME"); the tag and digest are not part of the address.
// "ghcr.io/acme/api:1" is acme/api on ghcr.io, "nginx" library/nginx on docker.io. Transport
// Registry. Invalid (where "source.image") for a reference naming no repository.
Result<RepoAddress> parseImageAddress(const QString &reference);

// What a connection is for: a forge at a base address (https://github.com,
// https://git.example.com/gitlab, https://dev.azure.com/acme), optionally narrowed to one owner
// (user, organisation or group path) there.
struct ForgeScope {
    ForgeKind kind = ForgeKind::Generic;
    QString baseUrl;
    QString owner;
};

// Invalid, naming the field ("url", "owner"), unless the base address is https:// (http:// only
// on a loopback address, where nothing leaves the machine) or ssh://, names a host and no user,
// password, query or fragment, and the owner is empty or path segments.
Status checkForgeScope(const ForgeScope &scope);

// The registry a registry scope names, as docker login and the Engine API's credentials name it:
// "HOST[:PORT]", or for Docker Hub its historical index address.
QString registryServer(const ForgeScope &scope);

// How closely scope covers address: -1 when it does not, else more the more of the address the
// scope names (its host, then each segment of its base path and owner). A token covers only
// http(s) addresses and an SSH key only ssh ones (tokenAuth says which the connection has); a
// registry scope covers image addresses only, and only it does.
int coverage(const ForgeScope &scope, bool tokenAuth, const RepoAddress &address);

// The user name an HTTPS token is sent with when the connection names none: what each forge
// documents for its tokens (GitHub "x-access-token", GitLab "oauth2", Bitbucket "x-token-auth",
// Azure DevOps any); empty for forges whose tokens need the account's own name (generic, Gitea).
QString defaultTokenUser(ForgeKind kind);

} // namespace pando::adapters
