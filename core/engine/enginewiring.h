#pragma once
// For the composition root only (app/wiring): the engine's state store, audit log and clock,
// which the services built beside the engine (accounts, the pipeline runner, audit sinks and
// stream) must share with it so that they write the same database, the same hash chain and
// read the same time. Nothing else may use it: handlers, the desktop's views and the CLI reach
// the engine through its methods, where the rules are (see docs/architecture.md).

#include "core/engine/engine.h"

namespace pando::core {

struct EngineParts {
    Database &database;
    AuditLog &audit;
    Clock &clock;
};

EngineParts wiringParts(Engine &engine);

} // namespace pando::core
