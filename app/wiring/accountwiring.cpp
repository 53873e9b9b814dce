#include "accountwiring.h"

#include "adapters/identity/local/localidentity.h"
#include "core/accounts/tokenkey.h"
#include "core/engine/enginewiring.h"

namespace pando::wiring {

Status installAccounts(core::Engine &engine, const core::accounts::AccountOptions &options)
{
    auto identity = adapters::local::LocalIdentity::create();
    if (!identity)
        return std::unexpected(identity.error());
    // The same key file the engine made in start(): every digest in the install uses one key.
    auto key = core::detail::loadOrCreateKey(engine.options().dataDir + QStringLiteral("/token.key"));
    if (!key)
        return std::unexpected(key.error());
    core::accounts::AccountOptions withFile = options;
    if (withFile.initialTokenFile.isEmpty())
        withFile.initialTokenFile = engine.options().dataDir + u'/' + core::InitialTokenFileName;
    engine.setAccounts(std::make_unique<core::accounts::AccountService>(
        core::wiringParts(engine).database, core::wiringParts(engine).audit,
        std::make_shared<const adapters::local::LocalIdentity>(std::move(*identity)), *key,
        core::wiringParts(engine).clock, withFile));
    return {};
}

Result<core::accounts::User> resetAdministrator(const QString &dataDir, const core::DatabaseConfig &database,
                                                const QString &username, const QString &password,
                                                const core::Actor &actor)
{
    core::Database db(database);
    if (auto opened = db.open(); !opened)
        return std::unexpected(opened.error());
    auto identity = adapters::local::LocalIdentity::create();
    if (!identity)
        return std::unexpected(identity.error());
    auto key = core::detail::loadOrCreateKey(dataDir + QStringLiteral("/token.key"));
    if (!key)
        return std::unexpected(key.error());
    core::AuditLog audit(db, core::SystemClock::instance());
    core::accounts::AccountOptions options;
    options.initialTokenFile = dataDir + u'/' + core::InitialTokenFileName;
    core::accounts::AccountService accounts(
        db, audit, std::make_shared<const adapters::local::LocalIdentity>(std::move(*identity)), *key,
        core::SystemClock::instance(), options);
    return accounts.resetAdmin(username, password, actor);
}

} // namespace pando::wiring
