#pragma once
// Identity adapters: where a person's credentials are checked. The local adapter keeps argon2id
// password hashes that core stores in its users table; later adapters (OIDC, SAML) vouch for a
// person through an outside provider and need no stored hash.
//
// Threading: every method may be called from any thread at once; implementations keep no
// mutable state between calls (or guard it themselves). Hashing and verifying are deliberately
// slow (tens of milliseconds) and use memory: call them off the GUI thread.

#include "adapters/api/error.h"

#include <QString>

namespace pando::adapters {

struct PasswordCheck {
    bool matches = false;
    // The hash was made with weaker (or merely different) parameters than the adapter uses
    // now: after a successful check the caller hashes the password again and stores that.
    bool needsRehash = false;
};

class IdentityProvider {
public:
    virtual ~IdentityProvider() = default;

    // "local", "oidc", ...: stored with each user so a login goes to the adapter that made it.
    virtual QString kind() const = 0;
    // False for adapters that never see a password (OIDC, SAML): core then refuses password
    // logins for their users.
    virtual bool supportsPasswords() const = 0;

    // A self-describing encoded hash of password (parameters, salt and digest in one string,
    // e.g. "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>"). Invalid when the password is empty
    // or longer than the adapter accepts.
    virtual Result<QString> hashPassword(const QString &password) const = 0;
    // Checks password against an encoded hash in time that does not depend on where the two
    // differ. A mismatch is a value (matches = false), not an error; an encoded hash the adapter
    // cannot read is ErrorCode::Invalid.
    virtual Result<PasswordCheck> verifyPassword(const QString &password, const QString &encodedHash) const = 0;
    // Whether encodedHash was made with other parameters than the adapter's current ones.
    virtual bool needsRehash(const QString &encodedHash) const = 0;
};

} // namespace pando::adapters
