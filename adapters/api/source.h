#pragma once
// The source adapter interface: fetching an app's source at a ref into a local cache, and
// exposing that revision's tree read-only.
//
// Threading: calls block and may be made from any thread, concurrently for different repos;
// implementations serialise what must be serialised for one repository cache.

#include "cancel.h"
#include "error.h"

#include <QByteArray>
#include <QString>
#include <functional>
#include <optional>

namespace pando::adapters {

struct SourceCheckout {
    QString commit;    // full hex object id the ref resolved to
    QString directory; // a directory holding the tree at that commit (no .git)
};

// A source connection's credential for one fetch (core/sourceconn). Never logged; the caller
// wipes it when the fetch is done.
struct SourceCredential {
    QString username;         // sent with the token; the ssh user when the address names none
    QByteArray token;         // http(s): sent as the password
    QByteArray sshPrivateKey; // ssh: the private key, OpenSSH or PEM text without a passphrase
    QByteArray sshKnownHosts; // ssh: known_hosts lines the server's key must be among
    void wipe()
    {
        token.fill('\0');
        sshPrivateKey.fill('\0');
    }
};

// What a fetch may use of the install's own identity. Core decides it per app (an
// administrator's app gets the install's means, a member's only what the install settings give
// members); the adapter honours it.
struct SourceAccess {
    bool installCredentials = true; // the ssh-agent and any key or token the install was given
    // Whether the fetch may connect to this machine or its link (adapters/api/netaddress.h). Checked
    // on each address the fetch connects to, after its own lookup: a name that answered with an
    // outside address when core checked it and rebinds to 127.0.0.1 for the fetch is refused.
    bool internalHosts = true;
    // The connection that reads this repository: when set, the fetch offers it and nothing of
    // the install's own (installCredentials is then ignored).
    std::optional<SourceCredential> credential;
};

class SourceProvider {
public:
    virtual ~SourceProvider() = default;

    // Refuses URLs that could run commands or be read as options: ext::, fd::, a leading '-',
    // unknown schemes. Accepts file://, https://, http://, ssh:// and scp-like git@host:path.
    virtual Status checkUrl(const QString &url) = 0;
    // Fetches repo into the cache and returns the full commit id ref resolves to, without
    // writing a tree. A ref that does not exist is ErrorCode::NotFound.
    // access says which of the install's credentials may be offered to the remote.
    virtual Result<QString> resolve(const QString &repo, const QString &ref, const SourceAccess &access,
                                    const CancelToken &cancel = {},
                                    const std::function<void(const QString &progress)> &progress = {}) = 0;
    // Fetches repo into the cache and writes the tree at ref (branch, tag or commit) into a
    // new directory below workRoot. A ref that does not exist is ErrorCode::NotFound.
    virtual Result<SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                            const SourceAccess &access, const CancelToken &cancel,
                                            const std::function<void(const QString &progress)> &progress) = 0;
};

} // namespace pando::adapters
