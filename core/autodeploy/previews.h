#pragma once
// Preview deployments: each pull (merge) request to an app's branch gets an app of its own, built
// from the request's head and removed with everything it made when the request closes or nothing
// was pushed to it for the spec's preview.ttl (docs/autodeploy.md). This file holds what a
// pull-request delivery means for an app (pure), the preview's spec made from the app's, and the
// rows that tie a preview to its app and its pull request. The engine acts (enginepreviews.cpp).
//
// Threading: the functions are pure; a PreviewStore is a borrowed view over a Database, safe to
// use from any thread (make one per call; inside the caller's transaction when it has one).

#include "adapters/api/error.h"
#include "core/autodeploy/forgehook.h"
#include "core/common/clock.h"
#include "core/spec/appspec.h"
#include "core/state/database.h"

#include <QList>
#include <QString>

namespace pando::core::autodeploy {

struct PreviewDecision {
    enum class Action { Deploy, Remove, Ignore, Refuse };
    Action action = Action::Ignore;
    QString reason; // for people, whatever the action
};

// Refuse a request on another repository than the app's (as decidePush); Remove when it closed
// (merged or not); Ignore another action, previews that are off, a request to another branch
// than the app's, a fork's while forks are not allowed; else Deploy its head.
PreviewDecision decidePreview(const AppSpec &spec, const HookEvent &event, bool forksAllowed);

// The preview app of pull request `number`: "APP-pr-N". Invalid at "name" when that is longer
// than an app name may be (63 characters).
Result<QString> previewName(const QString &app, int number);

// The preview's spec: the app's, named previewName(), reading the request's head branch (from the
// fork's address for a fork, through no connection), with preview.env over run.env and
// preview.resources over run.resources, its own stable port, each of the app's domains as
// "pr-N.DOMAIN" (wildcards left out), no auto-deploy and no previews of its own, the labels
// preview-of and pull-request, and the app's secret files only when its secrets are copied.
Result<AppSpec> previewSpec(const AppSpec &app, const PullRequestEvent &pull, bool copySecrets);

// A preview as the store keeps it.
struct PreviewRecord {
    QString app;    // the preview's own app (previewName)
    QString parent; // the app it previews
    int number = 0;
    QString title;
    QString headBranch;
    QString headCommit; // what the last delivery asked for
    QString repo;       // the address the preview reads (the fork's for a fork)
    bool fork = false;
    QString author;
    QString webUrl;
    qint64 createdMs = 0;
    qint64 updatedMs = 0; // the last push to it (what the TTL counts from)
    QString commentId;    // the forge's id of the comment that links to it; empty: none yet
    qint64 expiresMs(qint64 ttlMs) const { return updatedMs + ttlMs; }
};

class PreviewStore {
public:
    explicit PreviewStore(Database &db) : m_db(db) {}

    Status add(const PreviewRecord &record);
    // NotFound when the app previews nothing.
    Result<PreviewRecord> byApp(const QString &app);
    // NotFound, saying so, when the app has no preview of that pull request.
    Result<PreviewRecord> find(const QString &parent, int number);
    // The app's previews (every app's with parent empty), newest pull request first.
    Result<QList<PreviewRecord>> list(const QString &parent = {});
    // A new head pushed: its commit, title and the time (the TTL starts again).
    Status touch(const QString &app, const QString &headCommit, const QString &title, qint64 nowMs);
    Status setComment(const QString &app, const QString &commentId);

private:
    Database &m_db;
};

} // namespace pando::core::autodeploy
