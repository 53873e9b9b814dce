#pragma once
// Package ocsf encodes native audit lines as OCSF events, so a SIEM that speaks the Open
// Cybersecurity Schema Framework files Pando's audit trail next to everything else it holds.
//
// What we chose (OCSF 1.1.0):
// - class "API Activity" (class_uid 6003) in category "Application Activity" (category_uid 6):
//   every audited action is a call on Pando's API or engine. type_uid = 600300 + activity_id.
// - activity_id from the action's last word: create/add/register → 1 Create; get/list/show/read/
//   view → 2 Read; delete/remove/revoke/destroy → 4 Delete; every other verb (update, start,
//   approve, deploy, login, ...) → 3 Update when it changes state, which every audited action
//   but the read verbs does; the action itself is api.operation, unchanged.
// - status_id 1 Success / 2 Failure; "denied" is Failure with status_detail "denied" and
//   severity Medium (a refused authorization is what an analyst looks for); failure is Low,
//   success Informational.
// - actor.user.name is the actor; "system:*" actors are user type System (3), others User (1).
// - resources[0] is the object: uid "app/hello", type "app", name "hello".
// - src_endpoint is the source: ip when it parses as an address, else name ("engine").
// - cloud.provider is required by the class; a self-hosted install has none, so "self-hosted".
// - metadata: product {name Pando, vendor_name Pando}, uid = the line's hash, correlation_uid =
//   the request id, log_name "audit", sequence = seq.
// - unmapped keeps what OCSF has no place for: seq, hash, prevHash (the chain) and detail.
//
// Threading: a pure function; call it from any thread.

#include "core/state/records.h"

#include <QJsonObject>

namespace pando::core {

QJsonObject ocsfEvent(const AuditRecord &line);

} // namespace pando::core
