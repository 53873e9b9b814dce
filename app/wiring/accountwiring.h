#pragma once
// Puts accounts into an engine: the local identity adapter (argon2id passwords) and the account
// service over the engine's database, audit log and token key. pandod, the desktop's in-process
// session and the API tests share it; core cannot build it itself because it may not depend on
// a concrete identity adapter.

#include "adapters/api/error.h"
#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"

namespace pando::wiring {

// Call after engine.start() (the token key and the schema exist then). The engine owns the
// service afterwards.
Status installAccounts(core::Engine &engine, const core::accounts::AccountOptions &options = {});

// pandod --reset-admin: opens the install's database, audit log and token key without an engine
// (no Docker needed) and runs AccountService::resetAdmin(). The caller holds the data
// directory's lock (lockDataDirectory), so no engine runs on it meanwhile.
Result<core::accounts::User> resetAdministrator(const QString &dataDir, const core::DatabaseConfig &database,
                                                const QString &username, const QString &password,
                                                const core::Actor &actor);

} // namespace pando::wiring
