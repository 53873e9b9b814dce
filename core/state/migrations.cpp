#include "migrations.h"

namespace pando::core::detail {

// Text columns are NOT NULL DEFAULT '' so that "no value" has one spelling on both drivers.
// Never edit a migration that has shipped: add the next number instead.
const QList<Migration> &migrations()
{
    static const QList<Migration> all = {
        {1,
         QStringLiteral("initial schema"),
         {
             QStringLiteral("CREATE TABLE apps ("
                            " name TEXT NOT NULL PRIMARY KEY,"
                            " spec_yaml TEXT NOT NULL DEFAULT '',"
                            " route_port INTEGER NOT NULL DEFAULT 0,"
                            " current_deploy TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE TABLE deploys ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " app TEXT NOT NULL REFERENCES apps(name) ON DELETE CASCADE,"
                            " ref TEXT NOT NULL DEFAULT '',"
                            " commit_id TEXT NOT NULL DEFAULT '',"
                            " status TEXT NOT NULL DEFAULT '',"
                            " failed_step TEXT NOT NULL DEFAULT '',"
                            " error TEXT NOT NULL DEFAULT '',"
                            " image_id TEXT NOT NULL DEFAULT '',"
                            " container_id TEXT NOT NULL DEFAULT '',"
                            " actor TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " started_ms BIGINT NOT NULL DEFAULT 0,"
                            " finished_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX deploys_app_created ON deploys (app, created_ms)"),
             QStringLiteral("CREATE INDEX deploys_status ON deploys (status)"),
             QStringLiteral("CREATE TABLE deploy_steps ("
                            " deploy_id TEXT NOT NULL REFERENCES deploys(id) ON DELETE CASCADE,"
                            " seq INTEGER NOT NULL,"
                            " name TEXT NOT NULL DEFAULT '',"
                            " status TEXT NOT NULL DEFAULT '',"
                            " detail TEXT NOT NULL DEFAULT '',"
                            " started_ms BIGINT NOT NULL DEFAULT 0,"
                            " finished_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (deploy_id, seq))"),
             QStringLiteral("CREATE TABLE jobs ("
                            " id BIGINT NOT NULL PRIMARY KEY,"
                            " kind TEXT NOT NULL DEFAULT '',"
                            " job_key TEXT NOT NULL DEFAULT '',"
                            " payload TEXT NOT NULL DEFAULT '',"
                            " state TEXT NOT NULL DEFAULT 'queued',"
                            " owner TEXT NOT NULL DEFAULT '',"
                            " attempts INTEGER NOT NULL DEFAULT 0,"
                            " error TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX jobs_state_order ON jobs (state, created_ms, id)"),
             QStringLiteral("CREATE INDEX jobs_key_state ON jobs (job_key, state)"),
             QStringLiteral("CREATE TABLE audit_log ("
                            " seq BIGINT NOT NULL PRIMARY KEY,"
                            " time_ms BIGINT NOT NULL DEFAULT 0,"
                            " actor TEXT NOT NULL DEFAULT '',"
                            " action TEXT NOT NULL DEFAULT '',"
                            " object TEXT NOT NULL DEFAULT '',"
                            " outcome TEXT NOT NULL DEFAULT '',"
                            " detail TEXT NOT NULL DEFAULT '',"
                            " request_id TEXT NOT NULL DEFAULT '',"
                            " source TEXT NOT NULL DEFAULT '',"
                            " prev_hash TEXT NOT NULL DEFAULT '',"
                            " hash TEXT NOT NULL DEFAULT '')"),
             QStringLiteral("CREATE INDEX audit_log_time ON audit_log (time_ms)"),
             QStringLiteral("CREATE TABLE tokens ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " name TEXT NOT NULL DEFAULT '',"
                            " digest TEXT NOT NULL UNIQUE,"
                            " role TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " revoked_ms BIGINT NOT NULL DEFAULT 0)"),
         }},
    };
    return all;
}

} // namespace pando::core::detail
