#pragma once
// Starts the audit sinks an operator configured: a JSON file naming syslog collectors and HTTPS
// ingest endpoints. The audit stream pushes every line to each of them from a durable cursor,
// cued by the engine's audit log after each commit.

#include "adapters/api/error.h"
#include "core/auditstream/auditstream.h"
#include "core/engine/engine.h"

#include <memory>

namespace pando::wiring {

// {"sinks": [{"kind": "syslog", "name": ..., "host": ..., ...}, {"kind": "https", ...}]}; the
// fields of each kind are in docs/audit.md. Errors name the place in the file.
Result<std::shared_ptr<core::AuditStream>> startAuditSinks(core::Engine &engine, const QString &configPath);
// The same file read and checked, nothing started: what a settings dialog asks before saving.
Status checkAuditSinks(const QString &configPath);

} // namespace pando::wiring
