#pragma once
// The rows Pando keeps, as plain value types. Times are milliseconds since the epoch (UTC).

#include "core/vocab/vocab.h"

#include <QString>
#include <QtGlobal>

namespace pando::core {

struct AppRecord {
    QString name;          // primary key, a DNS label
    QString specYaml;      // the pinned AppSpec as the user wrote it
    int routePort = 0;     // the stable loopback port; 0 until first assigned
    QString currentDeploy; // the deploy serving now; empty when none
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    QString creatorId; // the user who made it (empty: the install's own authority); the app limit counts these
    // Whether its spec was last written with the install's authority (an administrator): then its
    // source is read with the install's means (file://, the ssh-agent, internal hosts); otherwise
    // only with what the install settings give members (core/policy/sourceaccess.h).
    bool sourceTrusted = false;
    // The source connection (core/sourceconn) its source is read through, chosen when its spec
    // was last written; empty: none.
    QString sourceConnection;
    // The user who last wrote its spec (empty: the install's own authority when sourceTrusted,
    // nobody otherwise). A build pulls the Dockerfile's private base images through the registry
    // connections they may use at the time of the build.
    QString specWriter;
    // Stopped at a person's word (`pando apps stop`): the deploy that was serving then, who and
    // when. While it is still the serving one, nothing starts it again but a start, a restart
    // or a new deploy; a hold about another deploy is stale.
    QString stoppedDeploy;
    QString stoppedBy;
    qint64 stoppedMs = 0;
    bool isHeldStopped() const { return !stoppedDeploy.isEmpty() && stoppedDeploy == currentDeploy; }
};

// Deploy status: see DeployStatus (core/vocab).
struct DeployRecord {
    QString id; // "d" + 12 hex digits, made by the engine
    QString app;
    QString ref;    // what was asked for
    QString commit; // what it resolved to; empty until fetched
    DeployStatus status = DeployStatus::Queued;
    QString failedStep; // the step that failed, when status is failed
    QString error;      // why, for people
    QString imageId;
    QString containerId;
    QString actor;      // who asked
    QString approvalId; // the sign-off the host policy asked for; empty when none was needed
    QString specYaml;   // the app's spec when the deploy was asked for: what it builds and runs
    // The port its container listens on: run.port, or the one the built image exposes; 0 until
    // built, and for deploys made before it was recorded (their spec's run.port then).
    int port = 0;
    qint64 createdMs = 0;
    qint64 startedMs = 0;
    qint64 finishedMs = 0;
};

// Step status: see DeployStepStatus (core/vocab).
struct StepRecord {
    QString deployId;
    int seq = 0;  // order within the deploy, from 0
    QString name; // fetch, detect, plan, build, start, health, switch, retire
    DeployStepStatus status = DeployStepStatus::Running;
    QString detail; // a short line of what happened or why it failed
    qint64 startedMs = 0;
    qint64 finishedMs = 0;
};

// One line of a deploy step's output (the build's, the crashed container's last words).
struct StepLogLine {
    int seq = 0;  // the step's number within its deploy
    int line = 0; // from 1 within the step
    qint64 timeMs = 0;
    bool stderrStream = false;
    QString text;
};

// Job state: queued → running → done | failed. A job's key serialises jobs: two jobs with the
// same key never run at once (deploys of one app share the app's name as key).
struct JobRecord {
    qint64 id = 0;
    QString kind; // "deploy", "remove"
    QString key;
    QString payload; // JSON
    QString state;
    QString owner; // the process that claimed it
    int attempts = 0;
    QString error;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
};

struct AuditRecord {
    qint64 seq = 0; // 1, 2, 3, ... without gaps
    qint64 timeMs = 0;
    QString actor;   // "token:admin", "system:reconciler"
    QString action;  // "app.create", "deploy.start", ...
    QString object;  // "app/hello", "deploy/d0123456789ab"
    QString outcome; // "success", "failure", "denied"
    QString detail;  // JSON
    QString requestId;
    QString source;   // remote address, or "engine"
    QString prevHash; // hex SHA-256 of the previous line ("" for the first)
    QString hash;     // hex SHA-256 over prevHash and this line's fields
};

struct TokenRecord {
    QString id; // "t" + hex
    QString name;
    QString digest; // keyed digest (HMAC-SHA256, hex) of the secret; the secret is never kept
    QString role;   // "admin" for now
    qint64 createdMs = 0;
    qint64 revokedMs = 0; // 0 while valid
};

} // namespace pando::core
