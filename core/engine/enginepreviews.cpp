// Engine: preview deployments (core/autodeploy/previews.h, docs/autodeploy.md). A pull request's
// delivery makes, updates or removes the app that previews it; a preview nothing was pushed to
// for its app's preview.ttl is removed by the poller's tick; removing an app removes its previews.
#include "core/autodeploy/previews.h"
#include "core/engine/engineprivate.h"
#include "core/policy/sourceaccess.h"

#include <QDateTime>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::core {

QJsonObject PreviewView::toJson() const
{
    QJsonObject json{{u"app"_s, record.app},
                     {u"parent"_s, record.parent},
                     {u"number"_s, record.number},
                     {u"title"_s, record.title},
                     {u"head_branch"_s, record.headBranch},
                     {u"head_commit"_s, record.headCommit},
                     {u"repo"_s, record.repo},
                     {u"fork"_s, record.fork},
                     {u"author"_s, record.author},
                     {u"web_url"_s, record.webUrl},
                     {u"created_at"_s, isoTime(record.createdMs)},
                     {u"updated_at"_s, isoTime(record.updatedMs)},
                     {u"expires_at"_s, isoTime(expiresMs)},
                     {u"commented"_s, !record.commentId.isEmpty()}};
    if (app) {
        json.insert(u"status"_s, toString(app->status));
        json.insert(u"url"_s, app->url);
        if (app->lastDeploy)
            json.insert(u"deploy"_s, QJsonObject{{u"id"_s, app->lastDeploy->id},
                                                 {u"status"_s, toString(app->lastDeploy->status)},
                                                 {u"commit"_s, app->lastDeploy->commit}});
    }
    return json;
}

Result<QList<PreviewView>> Engine::previews(const QString &app)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    auto records = autodeploy::PreviewStore(d->db).list(app);
    if (!records)
        return std::unexpected(records.error());
    QList<PreviewView> out;
    for (const autodeploy::PreviewRecord &record : std::as_const(*records)) {
        PreviewView view{record, record.expiresMs(spec->preview.ttlMs), std::nullopt};
        if (auto previewRow = AppRepository(d->db).find(record.app); previewRow)
            if (auto shown = d->view(*previewRow); shown)
                view.app = *shown;
        out << view;
    }
    return out;
}

Status Engine::removePreview(const QString &app, int number, const Actor &actor)
{
    if (auto row = AppRepository(d->db).find(app); !row)
        return std::unexpected(row.error());
    auto found = autodeploy::PreviewStore(d->db).find(app, number);
    if (!found)
        return std::unexpected(found.error());
    return takeDownPreview(*found, actor, u"it was removed on Pando"_s);
}

Status Engine::takeDownPreview(const autodeploy::PreviewRecord &preview, const Actor &actor, const QString &why)
{
    // Its deploys end first: one still running would start a container after the teardown.
    if (auto deploys = DeployRepository(d->db).listForApp(preview.app, 20); deploys) {
        for (const DeployRecord &deploy : std::as_const(*deploys)) {
            if (!isFinished(deploy.status))
                discardResult(cancelDeploy(deploy.id, actor), "the removal stops what the cancel could not");
        }
    }
    auto removed = removeApp(preview.app, actor, ServiceData::Delete);
    if (removed)
        d->tellPullRequestItWent(preview, why);
    return removed;
}

Result<QString> Engine::actOnPullRequest(const AppRecord &parent, const AppSpec &spec,
                                         const autodeploy::HookEvent &event, const Actor &actor)
{
    const autodeploy::PullRequestEvent &pull = event.pullRequest;
    // One pull request's deliveries come close together (opened, then the first push): one at a time.
    QMutexLocker serial(&d->previewMutex);
    autodeploy::PreviewStore store(d->db);
    auto existing = store.find(parent.name, pull.number);
    if (!existing && existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());
    if (pull.action == autodeploy::PullRequestEvent::Action::Closed) {
        if (!existing)
            return QString();
        const QString why = pull.merged ? u"the pull request was merged"_s : u"the pull request was closed"_s;
        if (auto removed = takeDownPreview(*existing, actor, why); !removed)
            return std::unexpected(removed.error());
        return QString();
    }

    autodeploy::PreviewRecord record;
    if (existing) {
        record = *existing;
        if (auto touched = store.touch(record.app, pull.headCommit, pull.title, d->clock.nowMs()); !touched)
            return std::unexpected(touched.error());
    } else {
        const bool copySecrets = spec.preview.copySecrets && !pull.fork;
        auto previewSpec = autodeploy::previewSpec(spec, pull, copySecrets);
        if (!previewSpec)
            return std::unexpected(previewSpec.error());
        if (auto taken = AppRepository(d->db).find(previewSpec->name); taken)
            return fail(ErrorCode::Conflict,
                        u"an app named %1 exists and is no preview; the preview of pull request #%2 needs that name"_s
                            .arg(previewSpec->name)
                            .arg(pull.number),
                        u"name"_s, u"rename or remove app %1"_s.arg(previewSpec->name));
        record.app = previewSpec->name;
        record.parent = parent.name;
        record.number = pull.number;
        record.title = pull.title;
        record.headBranch = pull.headBranch;
        record.headCommit = pull.headCommit;
        record.repo = previewSpec->source.repo;
        record.fork = pull.fork;
        record.author = event.pusher;
        record.webUrl = pull.webUrl;
        record.createdMs = record.updatedMs = d->clock.nowMs();
        Private::NewApp made;
        made.spec = *previewSpec;
        made.text = QJsonDocument(previewSpec->toJson()).toJson(QJsonDocument::Indented);
        // A fork is read with nobody's means; the app's own pull requests as the app is.
        made.trusted = pull.fork ? false : parent.sourceTrusted;
        made.connection = pull.fork ? QString() : parent.sourceConnection;
        made.writer = pull.fork ? QString() : parent.specWriter;
        made.auditDetail = QJsonObject{{u"repo"_s, record.repo},
                                       {u"connection"_s, made.connection},
                                       {u"preview_of"_s, parent.name},
                                       {u"pull_request"_s, pull.number}};
        // Whoever may act on the app may act on its previews, from the same commit on.
        made.alsoInTransaction = [this, &record, &parent]() -> Status {
            if (auto added = autodeploy::PreviewStore(d->db).add(record); !added)
                return added;
            return d->grants.copy(authz::ObjectKind::App, parent.name, record.app);
        };
        auto created = d->createApp(made, actor);
        if (!created)
            return std::unexpected(created.error());
        if (copySecrets) {
            if (auto copied = d->copyAppSecrets(parent.name, record.app); !copied) {
                discardResult(removeApp(record.app, actor, ServiceData::Delete), "the copy's error is the one to tell");
                return std::unexpected(copied.error());
            }
        }
    }
    auto queued = deploy(record.app, pull.headCommit, actor);
    if (!queued)
        return std::unexpected(queued.error());
    return queued->id;
}

Result<QStringList> Engine::expirePreviews()
{
    auto records = autodeploy::PreviewStore(d->db).list();
    if (!records)
        return std::unexpected(records.error());
    QStringList done;
    const qint64 now = d->clock.nowMs();
    const Actor actor = Actor::system(u"preview"_s);
    for (const autodeploy::PreviewRecord &record : std::as_const(*records)) {
        qint64 ttlMs = AppSpec::Preview{}.ttlMs;
        if (auto parent = AppRepository(d->db).find(record.parent); parent) {
            if (auto spec = parseAppSpec(parent->specYaml.toUtf8()); spec)
                ttlMs = spec->preview.ttlMs;
        }
        if (now < record.expiresMs(ttlMs))
            continue;
        {
            QMutexLocker lock(&d->mutex);
            if (d->removing.contains(record.app))
                continue;
        }
        auto removed =
            takeDownPreview(record, actor, u"nothing was pushed to the pull request for %1 h"_s.arg(ttlMs / 3600000));
        done << (removed ? u"%1: nothing was pushed to pull request #%2 for %3 h; removed"_s.arg(record.app)
                               .arg(record.number)
                               .arg(ttlMs / 3600000)
                         : u"%1: expired, but the removal was refused: %2"_s.arg(record.app, removed.error().text()));
    }
    return done;
}

} // namespace pando::core
