#pragma once
// The `vault` var source, as Concourse documents it: vars read from HashiCorp Vault's key/value
// secrets engine over its HTTP API.
//
//   config: url (required); client_token, or auth_backend (an auth method's mount path, such as
//           approle) with auth_params (the login's body: role_id and secret_id for approle);
//           path_prefix (default /concourse); lookup_templates (default
//           /{{.Team}}/{{.Pipeline}}/{{.Secret}} and /{{.Team}}/{{.Secret}}; Pando has one team,
//           `main`, Concourse's first); shared_path; namespace (Vault Enterprise's
//           X-Vault-Namespace); ca_cert, client_cert, client_key (PEM text);
//           insecure_skip_verify; login_timeout and query_timeout (Go durations, default 60s).
//           auth_max_ttl, auth_retry_max and auth_retry_initial are read and not needed: a run
//           logs in once, when it first reads a var, and a failed login fails the run, saying why.
//   lookup: a path with a leading '/' is read as it is; any other is looked for under each
//           template in turn (one naming {{.Pipeline}} only with a pipeline), then under
//           path_prefix/shared_path, then under path_prefix itself. A KV version 2 mount is found
//           by asking Vault (sys/internal/ui/mounts) and read through its data/ path.
//   value:  a secret's `value` field when it has one, else all its fields (pick one with
//           ((source:path.field))).
//
// Connections to link-local addresses (cloud instance credentials) are refused. Tokens, keys
// and secret values never appear in errors.

#include "adapters/api/varsource.h"

namespace pando::adapters::vault {

// Opens a vault source from its resolved config for a run of pipeline ("": none).
Result<std::unique_ptr<VarSource>> openVaultSource(const QJsonObject &config, const QString &pipeline);

// The paths a var is looked for at, in order (see above). Exposed for tests.
QStringList lookupPaths(const QString &pathPrefix, const QStringList &templates, const QString &sharedPath,
                        const QString &pipeline, const QString &var);

} // namespace pando::adapters::vault
