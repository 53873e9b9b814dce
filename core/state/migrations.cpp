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
        {2,
         QStringLiteral("pipelines"),
         {
             QStringLiteral("CREATE TABLE pipelines ("
                            " name TEXT NOT NULL PRIMARY KEY,"
                            " config_yaml TEXT NOT NULL DEFAULT '',"
                            " vars_yaml TEXT NOT NULL DEFAULT '',"
                            " config_version INTEGER NOT NULL DEFAULT 0,"
                            " paused INTEGER NOT NULL DEFAULT 0,"
                            " paused_reason TEXT NOT NULL DEFAULT '',"
                            " max_runs INTEGER NOT NULL DEFAULT 0,"
                            " consecutive_errors INTEGER NOT NULL DEFAULT 0,"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE TABLE runs ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,"
                            " job TEXT NOT NULL DEFAULT '',"
                            " number INTEGER NOT NULL DEFAULT 0,"
                            " queue_seq BIGINT NOT NULL DEFAULT 0,"
                            " status TEXT NOT NULL DEFAULT 'queued',"
                            " trigger TEXT NOT NULL DEFAULT '',"
                            " actor TEXT NOT NULL DEFAULT '',"
                            " inputs_json TEXT NOT NULL DEFAULT '',"
                            " config_version INTEGER NOT NULL DEFAULT 0,"
                            " owner TEXT NOT NULL DEFAULT '',"
                            " error TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " started_ms BIGINT NOT NULL DEFAULT 0,"
                            " finished_ms BIGINT NOT NULL DEFAULT 0,"
                            " UNIQUE (pipeline, job, number))"),
             QStringLiteral("CREATE INDEX runs_queue ON runs (pipeline, status, queue_seq)"),
             QStringLiteral("CREATE INDEX runs_status ON runs (status)"),
             QStringLiteral("CREATE TABLE run_steps ("
                            " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " step_id TEXT NOT NULL,"
                            " parent_id TEXT NOT NULL DEFAULT '',"
                            " seq INTEGER NOT NULL DEFAULT 0,"
                            " name TEXT NOT NULL DEFAULT '',"
                            " kind TEXT NOT NULL DEFAULT '',"
                            " status TEXT NOT NULL DEFAULT '',"
                            " hash TEXT NOT NULL DEFAULT '',"
                            " attempt INTEGER NOT NULL DEFAULT 0,"
                            " exit_code INTEGER NOT NULL DEFAULT -1,"
                            " error TEXT NOT NULL DEFAULT '',"
                            " started_ms BIGINT NOT NULL DEFAULT 0,"
                            " finished_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (run_id, step_id))"),
             QStringLiteral("CREATE TABLE run_events ("
                            " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " seq BIGINT NOT NULL,"
                            " time_ms BIGINT NOT NULL DEFAULT 0,"
                            " step_id TEXT NOT NULL DEFAULT '',"
                            " type TEXT NOT NULL DEFAULT '',"
                            " data TEXT NOT NULL DEFAULT '',"
                            " PRIMARY KEY (run_id, seq))"),
             QStringLiteral("CREATE TABLE run_inputs ("
                            " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " resource TEXT NOT NULL,"
                            " version_json TEXT NOT NULL DEFAULT '',"
                            " PRIMARY KEY (run_id, resource))"),
             QStringLiteral("CREATE TABLE step_cache ("
                            " hash TEXT NOT NULL PRIMARY KEY,"
                            " outputs_json TEXT NOT NULL DEFAULT '',"
                            " run_id TEXT NOT NULL DEFAULT '',"
                            " step_id TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE TABLE resource_versions ("
                            " pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,"
                            " resource TEXT NOT NULL,"
                            " seq BIGINT NOT NULL,"
                            " version_json TEXT NOT NULL,"
                            " metadata_json TEXT NOT NULL DEFAULT '',"
                            " found_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (pipeline, resource, seq),"
                            " UNIQUE (pipeline, resource, version_json))"),
             QStringLiteral("CREATE TABLE resource_checks ("
                            " pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,"
                            " resource TEXT NOT NULL,"
                            " checked_ms BIGINT NOT NULL DEFAULT 0,"
                            " error TEXT NOT NULL DEFAULT '',"
                            " PRIMARY KEY (pipeline, resource))"),
             QStringLiteral("CREATE TABLE secrets ("
                            " scope TEXT NOT NULL DEFAULT '',"
                            " name TEXT NOT NULL,"
                            " sealed TEXT NOT NULL,"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (scope, name))"),
         }},
        {3,
         QStringLiteral("audit sink cursors"),
         {
             QStringLiteral("CREATE TABLE audit_sink_cursors ("
                            " sink TEXT NOT NULL PRIMARY KEY,"
                            " last_seq BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " last_error TEXT NOT NULL DEFAULT '')"),
         }},
        {4,
         QStringLiteral("accounts: users, login sessions, scoped API tokens"),
         {
             QStringLiteral("CREATE TABLE users ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " username TEXT NOT NULL UNIQUE,"
                            " display_name TEXT NOT NULL DEFAULT '',"
                            " role TEXT NOT NULL DEFAULT 'viewer',"
                            " disabled INTEGER NOT NULL DEFAULT 0,"
                            " identity TEXT NOT NULL DEFAULT 'local',"
                            " password_hash TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE TABLE sessions ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
                            " digest TEXT NOT NULL UNIQUE,"
                            " source TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " expires_ms BIGINT NOT NULL DEFAULT 0,"
                            " revoked_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX sessions_user ON sessions (user_id)"),
             QStringLiteral("CREATE TABLE api_tokens ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
                            " name TEXT NOT NULL DEFAULT '',"
                            " digest TEXT NOT NULL UNIQUE,"
                            " scopes TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " expires_ms BIGINT NOT NULL DEFAULT 0,"
                            " revoked_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX api_tokens_user ON api_tokens (user_id, created_ms)"),
         }},
        {5,
         QStringLiteral("authz: per-app and per-pipeline grants"),
         {
             QStringLiteral("CREATE TABLE grants ("
                            " object_kind TEXT NOT NULL,"
                            " object TEXT NOT NULL,"
                            " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
                            " role TEXT NOT NULL,"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (object_kind, object, user_id, role))"),
             QStringLiteral("CREATE INDEX grants_user ON grants (user_id, object_kind, role)"),
         }},
        {6,
         QStringLiteral("approvals for deploys and pipeline steps"),
         {
             QStringLiteral("CREATE TABLE approvals ("
                            " id TEXT NOT NULL PRIMARY KEY,"
                            " kind TEXT NOT NULL DEFAULT '',"
                            " object TEXT NOT NULL DEFAULT '',"
                            " requester TEXT NOT NULL DEFAULT '',"
                            " summary TEXT NOT NULL DEFAULT '',"
                            " plan_json TEXT NOT NULL DEFAULT '',"
                            " status TEXT NOT NULL DEFAULT 'pending',"
                            " decided_by TEXT NOT NULL DEFAULT '',"
                            " reason TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " expires_ms BIGINT NOT NULL DEFAULT 0,"
                            " decided_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX approvals_status ON approvals (status, expires_ms)"),
             QStringLiteral("CREATE INDEX approvals_created ON approvals (created_ms)"),
         }},
        {7,
         QStringLiteral("who may approve; deploys held for approval and the spec each deploy used"),
         {
             QStringLiteral("ALTER TABLE approvals ADD COLUMN approvers TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE deploys ADD COLUMN approval_id TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE deploys ADD COLUMN spec_yaml TEXT NOT NULL DEFAULT ''"),
         }},
        {8,
         QStringLiteral("app secrets, sealed; they go with their app"),
         {
             QStringLiteral("CREATE TABLE app_secrets ("
                            " app TEXT NOT NULL REFERENCES apps(name) ON DELETE CASCADE,"
                            " name TEXT NOT NULL,"
                            " sealed TEXT NOT NULL,"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (app, name))"),
         }},
        {9,
         QStringLiteral("app services: each slot's kind and sealed credentials, kept while its data is"),
         {
             // No foreign key to apps: removing an app may keep a service's data, and its
             // credentials with it, for an app of the same name to find again.
             QStringLiteral("CREATE TABLE app_services ("
                            " app TEXT NOT NULL,"
                            " slot TEXT NOT NULL,"
                            " kind TEXT NOT NULL DEFAULT '',"
                            " version TEXT NOT NULL DEFAULT '',"
                            " username TEXT NOT NULL DEFAULT '',"
                            " database_name TEXT NOT NULL DEFAULT '',"
                            " sealed_password TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (app, slot))"),
         }},
        {10,
         QStringLiteral("what core/disklimit did about an app over its disk limit"),
         {
             QStringLiteral("CREATE TABLE app_disk_states ("
                            " app TEXT NOT NULL PRIMARY KEY REFERENCES apps(name) ON DELETE CASCADE,"
                            " deploy_id TEXT NOT NULL DEFAULT '',"
                            " action TEXT NOT NULL DEFAULT '',"
                            " used_bytes BIGINT NOT NULL DEFAULT 0,"
                            " limit_bytes BIGINT NOT NULL DEFAULT 0,"
                            " since_ms BIGINT NOT NULL DEFAULT 0)"),
         }},
        {11,
         QStringLiteral("host execution: an install setting and a per-pipeline mark, both off"),
         {
             // Install settings an administrator changes through the API; a missing row is the
             // setting's default.
             QStringLiteral("CREATE TABLE install_settings ("
                            " name TEXT NOT NULL PRIMARY KEY,"
                            " value TEXT NOT NULL DEFAULT '',"
                            " actor TEXT NOT NULL DEFAULT '',"
                            " updated_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN host_execution INTEGER NOT NULL DEFAULT 0"),
         }},
        {12,
         QStringLiteral("apps: who made them and whose authority reads their source; kept service data's owners"),
         {
             // The member app limit counts what a user made, so dropping one's own owner grant no
             // longer frees a place; apps made before are credited to their first owner.
             QStringLiteral("ALTER TABLE apps ADD COLUMN creator_id TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("UPDATE apps SET creator_id = COALESCE((SELECT MIN(user_id) FROM grants WHERE"
                            " grants.object_kind = 'app' AND grants.object = apps.name AND grants.role = 'owner'),"
                            " '')"),
             // 1: the spec was last written with the install's authority (an administrator), so its
             // source is read with the install's (file://, the ssh-agent, internal hosts). Apps made
             // before keep working as they did.
             QStringLiteral("ALTER TABLE apps ADD COLUMN source_trusted INTEGER NOT NULL DEFAULT 1"),
             // Data kept at an app's removal belongs to that app's owners: kept_ms > 0 marks it, and
             // only those users (kept_owners, space-separated ids) or an administrator may make an
             // app of the name again and get it back.
             QStringLiteral("ALTER TABLE app_services ADD COLUMN kept_ms BIGINT NOT NULL DEFAULT 0"),
             QStringLiteral("ALTER TABLE app_services ADD COLUMN kept_owners TEXT NOT NULL DEFAULT ''"),
         }},
        {13,
         QStringLiteral("install-wide secrets are read only by the pipelines they are granted to"),
         {
             // access: "listed" (the pipelines in secret_access), "all", or "unset" for a secret
             // stored before this migration: the pipeline runner lists the pipelines that use
             // it then at its next start (docs/pipelines.md, "Secrets").
             QStringLiteral("ALTER TABLE secrets ADD COLUMN access TEXT NOT NULL DEFAULT 'unset'"),
             QStringLiteral("CREATE TABLE secret_access ("
                            " name TEXT NOT NULL,"
                            " pipeline TEXT NOT NULL," // may name one set later; removed with it
                            " PRIMARY KEY (name, pipeline))"),
         }},
        {14,
         QStringLiteral("a deploy step's output; runs listed newest first without a sort"),
         {
             // RunRepository::list: a pipeline's runs (or every run) newest first, LIMIT n.
             QStringLiteral("CREATE INDEX runs_pipeline_created ON runs (pipeline, created_ms, number)"),
             QStringLiteral("CREATE INDEX runs_created ON runs (created_ms, number)"),
             // line counts from 1 within a step; at most core/deploy's StepLog keeps per step.
             QStringLiteral("CREATE TABLE deploy_step_logs ("
                            " deploy_id TEXT NOT NULL REFERENCES deploys(id) ON DELETE CASCADE,"
                            " seq INTEGER NOT NULL,"
                            " line INTEGER NOT NULL,"
                            " time_ms BIGINT NOT NULL,"
                            " stderr INTEGER NOT NULL DEFAULT 0,"
                            " text TEXT NOT NULL,"
                            " PRIMARY KEY (deploy_id, seq, line))"),
         }},
        {15,
         QStringLiteral("a pipeline keeps its previous config; resources may be pinned to a version"),
         {
             // The config before the last set that changed it, so the change can be shown as a
             // diff (docs/pipelines.md, "Seeing what changed"). Empty until a second set.
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN previous_config_yaml TEXT NOT NULL DEFAULT ''"),
             // A version pinned through the API (Concourse's pin-resource): every get of the
             // resource uses it until it is unpinned.
             QStringLiteral("CREATE TABLE resource_pins ("
                            " pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,"
                            " resource TEXT NOT NULL,"
                            " version_json TEXT NOT NULL,"
                            " actor TEXT NOT NULL DEFAULT '',"
                            " pinned_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (pipeline, resource))"),
         }},
        {16,
         QStringLiteral("a deploy records the port its container listens on"),
         {
             // run.port, or the port the built image exposes when the spec names none.
             QStringLiteral("ALTER TABLE deploys ADD COLUMN port INTEGER NOT NULL DEFAULT 0"),
         }},
        {17,
         QStringLiteral("source connections: forges and the credentials that read private repositories"),
         {
             // core/sourceconn. sealed: the token or private key, sealed under ("source-connection",
             // name); known_hosts and fingerprint are not secret.
             QStringLiteral("CREATE TABLE source_connections ("
                            " name TEXT NOT NULL PRIMARY KEY,"
                            " kind TEXT NOT NULL,"
                            " base_url TEXT NOT NULL,"
                            " owner TEXT NOT NULL DEFAULT '',"
                            " auth TEXT NOT NULL,"
                            " username TEXT NOT NULL DEFAULT '',"
                            " sealed TEXT NOT NULL,"
                            " known_hosts TEXT NOT NULL DEFAULT '',"
                            " fingerprint TEXT NOT NULL DEFAULT '',"
                            " created_by TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " checked_ms BIGINT NOT NULL DEFAULT 0,"
                            " check_result TEXT NOT NULL DEFAULT '')"),
             // The connection an app's source is read through, chosen when its spec was last
             // written; empty: none (the install's means or anonymous).
             QStringLiteral("ALTER TABLE apps ADD COLUMN source_connection TEXT NOT NULL DEFAULT ''"),
         }},
        {18,
         QStringLiteral("deploy on push: an app's webhook secret, the deliveries it took, what polling found"),
         {
             // core/autodeploy. sealed: the webhook's secret, sealed under ("app-hook", app).
             QStringLiteral("CREATE TABLE app_hooks ("
                            " app TEXT NOT NULL PRIMARY KEY REFERENCES apps(name) ON DELETE CASCADE,"
                            " sealed TEXT NOT NULL,"
                            " created_by TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0)"),
             // One row per delivery a forge made (its own id), kept for replay refusal and to show;
             // outcome: accepted, deployed, ignored, failed.
             QStringLiteral("CREATE TABLE hook_deliveries ("
                            " app TEXT NOT NULL REFERENCES apps(name) ON DELETE CASCADE,"
                            " delivery_id TEXT NOT NULL,"
                            " forge TEXT NOT NULL,"
                            " event TEXT NOT NULL,"
                            " ref TEXT NOT NULL DEFAULT '',"
                            " commit_id TEXT NOT NULL DEFAULT '',"
                            " pusher TEXT NOT NULL DEFAULT '',"
                            " received_ms BIGINT NOT NULL,"
                            " outcome TEXT NOT NULL,"
                            " detail TEXT NOT NULL DEFAULT '',"
                            " deploy_id TEXT NOT NULL DEFAULT '',"
                            " PRIMARY KEY (app, delivery_id))"),
             QStringLiteral("CREATE INDEX hook_deliveries_received ON hook_deliveries (app, received_ms)"),
             // autodeploy: poll — what the last look at the followed ref found.
             QStringLiteral("CREATE TABLE autodeploy_polls ("
                            " app TEXT NOT NULL PRIMARY KEY REFERENCES apps(name) ON DELETE CASCADE,"
                            " polled_ms BIGINT NOT NULL DEFAULT 0,"
                            " commit_id TEXT NOT NULL DEFAULT '',"
                            " error TEXT NOT NULL DEFAULT '')"),
         }},
        {19,
         QStringLiteral("apps stopped at a person's word stay stopped"),
         {
             // AppRecord::stoppedDeploy: the serving deploy `pando apps stop` stopped, by whom, when.
             QStringLiteral("ALTER TABLE apps ADD COLUMN stopped_deploy TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE apps ADD COLUMN stopped_by TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE apps ADD COLUMN stopped_ms BIGINT NOT NULL DEFAULT 0"),
         }},
        {20,
         QStringLiteral("preview deployments: which app previews which pull request"),
         {
             // core/autodeploy/previews.h. app is the preview's own app (its row goes with it);
             // parent the app it previews, whose removal removes its previews first.
             QStringLiteral("CREATE TABLE app_previews ("
                            " app TEXT NOT NULL PRIMARY KEY REFERENCES apps(name) ON DELETE CASCADE,"
                            " parent TEXT NOT NULL,"
                            " number INTEGER NOT NULL,"
                            " title TEXT NOT NULL DEFAULT '',"
                            " head_branch TEXT NOT NULL DEFAULT '',"
                            " head_commit TEXT NOT NULL DEFAULT '',"
                            " repo TEXT NOT NULL DEFAULT '',"
                            " fork INTEGER NOT NULL DEFAULT 0,"
                            " author TEXT NOT NULL DEFAULT '',"
                            " web_url TEXT NOT NULL DEFAULT '',"
                            " created_ms BIGINT NOT NULL DEFAULT 0,"
                            " updated_ms BIGINT NOT NULL DEFAULT 0,"
                            " comment_id TEXT NOT NULL DEFAULT '',"
                            " UNIQUE (parent, number))"),
         }},
        {21,
         QStringLiteral("a finished deploy's output, compressed; removed after the install's retention"),
         {
             // core/state/deploylogs.cpp: one row per step of a finished deploy, replacing its
             // deploy_step_logs rows. data is the step's lines (line, time_ms, stderr, text) as a
             // zlib-compressed JSON array; NULL once removed (pruned_ms says when). BYTEA is a
             // blob on both drivers (SQLite keeps blobs as they are in any column).
             QStringLiteral("CREATE TABLE deploy_log_archives ("
                            " deploy_id TEXT NOT NULL REFERENCES deploys(id) ON DELETE CASCADE,"
                            " seq INTEGER NOT NULL,"
                            " lines INTEGER NOT NULL DEFAULT 0,"
                            " raw_bytes BIGINT NOT NULL DEFAULT 0,"
                            " data BYTEA,"
                            " pruned_ms BIGINT NOT NULL DEFAULT 0,"
                            " PRIMARY KEY (deploy_id, seq))"),
             QStringLiteral("CREATE INDEX deploys_finished ON deploys (finished_ms)"),
         }},
        {22,
         QStringLiteral("the images builds left beside their results, to remove them"),
         {
             // core/state/buildcache.cpp: what BuildRequest::leftover told of each build (another
             // stage's steps, a failed build's finished steps), with the app and deploy it was
             // made for; position orders one build's images (removed newest first). No foreign key:
             // an image outlives its app's row until it is removed.
             QStringLiteral("CREATE TABLE build_cache ("
                            " image_id TEXT PRIMARY KEY,"
                            " app TEXT NOT NULL,"
                            " deploy_id TEXT NOT NULL,"
                            " position INTEGER NOT NULL DEFAULT 0,"
                            " bytes BIGINT NOT NULL DEFAULT 0,"
                            " made_ms BIGINT NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE INDEX build_cache_app ON build_cache (app)"),
         }},
        {23,
         QStringLiteral("GitHub App connections: the app and its installation"),
         {
             // core/sourceconn: a GitHub App connection's app and installation (auth "github-app");
             // its private key is the sealed secret, as a token or deploy key is.
             QStringLiteral("ALTER TABLE source_connections ADD COLUMN app_id TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE source_connections ADD COLUMN installation_id TEXT NOT NULL DEFAULT ''"),
         }},
        {24,
         QStringLiteral("OAuth application connections: the application's client id"),
         {
             // core/sourceconn: an OAuth connection's client id (auth "oauth"); its secret and the
             // tokens the forge granted are the sealed secret.
             QStringLiteral("ALTER TABLE source_connections ADD COLUMN client_id TEXT NOT NULL DEFAULT ''"),
         }},
        {25,
         QStringLiteral("Apps: who last wrote the spec"),
         {
             // core/deploy: a build pulls a Dockerfile's private base images through the registry
             // connections this user may use when it runs (AppRecord::specWriter).
             QStringLiteral("ALTER TABLE apps ADD COLUMN spec_writer TEXT NOT NULL DEFAULT ''"),
         }},
        {26,
         QStringLiteral("app services: the seed file the last deploy read, to load again"),
         {
             // core/services: a service the reconciler makes again (its volume was lost) is loaded
             // from the seed its app's last deploy read from the checkout (base64, at most 32 MiB
             // before it), as the deploy would have; it goes with the row and so with the data.
             QStringLiteral("ALTER TABLE app_services ADD COLUMN seed_path TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE app_services ADD COLUMN seed_digest TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE app_services ADD COLUMN seed_data TEXT NOT NULL DEFAULT ''"),
         }},
        {27,
         QStringLiteral("pipelines: each job's max_in_flight, serial_groups and build_log_retention; forced runs"),
         {
             // core/pipelines: what the run queue and the log reaper read of each job, as JSON
             // (PipelineRecord::jobs); '' for a pipeline set before, whose jobs run one at a time.
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN job_settings TEXT NOT NULL DEFAULT ''"),
             // When build_log_retention removed a run's log (its events), 0 while it is kept.
             QStringLiteral("ALTER TABLE runs ADD COLUMN log_removed_ms BIGINT NOT NULL DEFAULT 0"),
             // A run triggered with --force runs every step, restoring nothing unchanged.
             QStringLiteral("ALTER TABLE runs ADD COLUMN force_run INTEGER NOT NULL DEFAULT 0"),
         }},
        {28,
         QStringLiteral("pipelines: the versions a run's puts made, which pass its job as its inputs do"),
         {
             // core/pipelines: as in Concourse, a version a job's put made has passed that job
             // (RunRepository::passedVersions reads both tables).
             QStringLiteral("CREATE TABLE run_outputs ("
                            " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " resource TEXT NOT NULL,"
                            " version_json TEXT NOT NULL,"
                            " PRIMARY KEY (run_id, resource, version_json))"),
         }},
        {29,
         QStringLiteral("pipelines: which pipeline's set_pipeline step created one"),
         {
             // core/pipelines: a set_pipeline step sets its own pipeline and the ones it created
             // ('' for a pipeline a person set first).
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN set_by TEXT NOT NULL DEFAULT ''"),
         }},
        {30,
         QStringLiteral("pipelines: jobs someone paused"),
         {
             // core/pipelines: Concourse's pause-job. A paused job's queued runs wait and no run is
             // queued for it; the row goes with its pipeline.
             QStringLiteral("CREATE TABLE job_pauses ("
                            " pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,"
                            " job TEXT NOT NULL,"
                            " reason TEXT NOT NULL,"
                            " paused_ms BIGINT NOT NULL,"
                            " PRIMARY KEY (pipeline, job))"),
         }},
        {31,
         QStringLiteral("pipelines: archived pipelines, and the job that set one"),
         {
             // core/pipelines: Concourse's archive-pipeline (0: not archived), and the job (and
             // its run's number) whose set_pipeline step set the pipeline last.
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN archived_ms BIGINT NOT NULL DEFAULT 0"),
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN set_by_job TEXT NOT NULL DEFAULT ''"),
             QStringLiteral("ALTER TABLE pipelines ADD COLUMN set_by_run INTEGER NOT NULL DEFAULT 0"),
         }},
    };
    return all;
}

} // namespace pando::core::detail
