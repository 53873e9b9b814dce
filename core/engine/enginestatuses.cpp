// Engine: commit statuses. Each deploy of an app whose source is read through a token connection
// to a forge is reported on its commit, as CI systems do (context "pando/APP"): pending once the
// fetch has resolved the commit, success with the app's address when it serves, failure (error
// when cancelled) with the failing step and its reason. A preview's pull request has one comment
// that says the same of its latest deploy, edited at each of these moments and when the preview
// goes. Reports run in order on one thread of their own, with the forge API's deadlines; a forge
// that refuses or does not answer never holds up or fails a deploy, and is told in the audit log
// (forge.status or forge.comment, failure).
#include "core/autodeploy/previews.h"
#include "core/engine/engineprivate.h"

#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// Forges cut a status's description at 140 characters (GitHub refuses longer ones).
constexpr qsizetype MaxDescription = 140;

QString described(const QString &text)
{
    return text.size() <= MaxDescription ? text : text.left(MaxDescription - 1) + u'…';
}

// text as a Markdown code span: shown as written, so a branch name or a build's error (which a
// pull request's author can choose) never becomes a mention, a link or markup in Pando's comment.
QString codeSpan(const QString &text)
{
    QString plain = text;
    plain.replace(u'`', u'\'').replace(u'\n', u' ');
    return u'`' + plain + u'`';
}

// What a preview's comment says of the deploy event is about.
QString previewState(const Event &event, const DeployRecord &deploy)
{
    const QString commit = deploy.commit.left(12);
    if (event.type == EventType::DeploySucceeded) {
        const QString url = event.data.value(u"url"_s).toString();
        return url.isEmpty() ? u"**Serving** commit `%1` (deploy %2)."_s.arg(commit, deploy.id)
                             : u"**Serving** commit `%1` at %2 (deploy %3)."_s.arg(commit, url, deploy.id);
    }
    if (event.type == EventType::DeployFailed) {
        if (deploy.status == DeployStatus::Cancelled)
            return u"**Cancelled**: deploy %1 of commit `%2`."_s.arg(deploy.id, commit);
        return u"**Failed**: deploy %1 of commit `%2` stopped at %3: %4"_s.arg(deploy.id, commit, deploy.failedStep,
                                                                               codeSpan(deploy.error.left(500)));
    }
    return u"**Deploying** commit `%1` (deploy %2)…"_s.arg(commit, deploy.id);
}

} // namespace

void Engine::Private::watchCommitStatuses()
{
    if (!options.forgeApis)
        return;
    statusPool.setMaxThreadCount(1); // in order: a pending status never lands after its success
    QObject::connect(
        &events, &EventBus::published, &events,
        [this](const Event &event) {
            const bool fetched = event.type == EventType::DeployStep &&
                                 event.data.value(u"name"_s).toString() == u"fetch"_s &&
                                 event.data.value(u"status"_s).toString() == toString(DeployStepStatus::Succeeded);
            if (!fetched && event.type != EventType::DeploySucceeded && event.type != EventType::DeployFailed)
                return;
            statusPool.start([this, event] {
                reportCommitStatus(event);
                reportOnPreview(event);
            });
        },
        Qt::DirectConnection);
}

std::optional<Result<Engine::Private::ForgeTarget>> Engine::Private::reportTarget(const QString &connection,
                                                                                  const QString &repoUrl)
{
    if (connection.isEmpty())
        return std::nullopt;
    auto store = connectionStore();
    auto found = store ? store->find(connection) : Result<sourceconn::Connection>(std::unexpected(store.error()));
    if (!found || !found->overHttps() || !adapters::hasForgeApi(found->scope.kind))
        return std::nullopt;
    auto address = adapters::parseRepoAddress(repoUrl, found->scope.kind);
    if (!address)
        return Result<ForgeTarget>(std::unexpected(address.error()));
    auto api = forgeApi(connection);
    if (!api)
        return Result<ForgeTarget>(std::unexpected(api.error()));
    return Result<ForgeTarget>(ForgeTarget{std::move(*api), *address});
}

void Engine::Private::reportCommitStatus(const Event &event)
{
    if (statusCancel.isCancelled())
        return;
    auto deploy = DeployRepository(db).find(event.deployId);
    if (!deploy || deploy->commit.isEmpty())
        return; // failed before its commit was known: there is nothing to put a status on
    auto app = AppRepository(db).find(deploy->app);
    if (!app)
        return;
    const QString connection = app->sourceConnection;
    auto spec = parseAppSpec(deploy->specYaml.toUtf8());
    if (!spec)
        return;
    auto target = reportTarget(connection, spec->source.repo);
    if (!target)
        return; // no API to report to

    adapters::CommitStatus status;
    status.commit = deploy->commit;
    status.context = u"pando/"_s + deploy->app;
    if (event.type == EventType::DeploySucceeded) {
        status.state = adapters::CommitState::Success;
        status.targetUrl = event.data.value(u"url"_s).toString();
        status.description = described(u"%1 serves this commit (deploy %2)"_s.arg(deploy->app, deploy->id));
    } else if (event.type == EventType::DeployFailed) {
        const bool cancelled = deploy->status == DeployStatus::Cancelled;
        status.state = cancelled ? adapters::CommitState::Error : adapters::CommitState::Failure;
        status.description =
            described(cancelled ? u"deploy %1 was cancelled"_s.arg(deploy->id)
                                : u"deploy %1 failed at %2: %3"_s.arg(deploy->id, deploy->failedStep, deploy->error));
    } else {
        status.state = adapters::CommitState::Pending;
        status.description = described(u"deploying %1 (deploy %2)"_s.arg(deploy->app, deploy->id));
    }

    const Status reported = *target ? (*target)->api->setCommitStatus((*target)->repo, status, statusCancel)
                                    : Status(std::unexpected(target->error()));
    if (reported || statusCancel.isCancelled())
        return;
    qWarning("engine: reporting deploy %s to its forge through connection %s: %s", qPrintable(deploy->id),
             qPrintable(connection), qPrintable(reported.error().text()));
    discardResult(audit.record(Actor::system(u"forge"_s), u"forge.status"_s, u"deploy/"_s + deploy->id, u"failure"_s,
                               QJsonObject{{u"app"_s, deploy->app},
                                           {u"connection"_s, connection},
                                           {u"commit"_s, deploy->commit},
                                           {u"error"_s, reported.error().text()}}),
                  "the warning above says it when the audit log cannot");
}

void Engine::Private::reportOnPreview(const Event &event)
{
    if (statusCancel.isCancelled())
        return;
    auto preview = autodeploy::PreviewStore(db).byApp(event.app);
    if (!preview)
        return; // not a preview
    auto deploy = DeployRepository(db).find(event.deployId);
    if (!deploy || deploy->commit.isEmpty())
        return;
    tellPullRequest(*preview, previewState(event, *deploy), false);
}

void Engine::Private::tellPullRequestItWent(const autodeploy::PreviewRecord &preview, const QString &why)
{
    // Only a comment there is is edited: the pull request of a preview never deployed hears nothing.
    if (!options.forgeApis || preview.commentId.isEmpty())
        return;
    statusPool.start([this, preview, why] {
        if (!statusCancel.isCancelled())
            tellPullRequest(preview, u"**Removed**: %1. Nothing of the preview is left."_s.arg(why), true);
    });
}

void Engine::Private::tellPullRequest(const autodeploy::PreviewRecord &preview, const QString &state, bool gone)
{
    // The pull request is the parent's, read through its connection: a fork's preview reads the
    // fork with nobody's means, but its pull request is on the app's repository.
    auto parent = AppRepository(db).find(preview.parent);
    if (!parent)
        return;
    auto spec = parseAppSpec(parent->specYaml.toUtf8());
    if (!spec)
        return;
    auto target = reportTarget(parent->sourceConnection, spec->source.repo);
    if (!target)
        return; // no API to comment through
    QString text = u"**Pando** previews this pull request as app `%1`.\n\n"_s.arg(preview.app) + state;
    if (!gone)
        text += u"\n\nEach push to %1 deploys again, and this comment says how it went. The preview is removed "
                u"with everything it made when the pull request closes, or after %2 h without a push. Its deploys "
                u"report on each commit as `pando/%3`."_s.arg(codeSpan(preview.headBranch))
                    .arg(spec->preview.ttlMs / 3600000)
                    .arg(preview.app);

    Result<QString> said = [&]() -> Result<QString> {
        if (!*target)
            return std::unexpected(target->error());
        adapters::ForgeApi &api = *(*target)->api;
        const adapters::RepoAddress &address = (*target)->repo;
        if (!preview.commentId.isEmpty()) {
            auto edited = api.editPullRequestComment(address, preview.number, preview.commentId, text, statusCancel);
            if (edited)
                return preview.commentId;
            if (edited.error().code != ErrorCode::NotFound || edited.error().where != u"comment"_s)
                return std::unexpected(edited.error());
        }
        return api.commentOnPullRequest(address, preview.number, text, statusCancel);
    }();
    if (said) {
        if (*said != preview.commentId && !gone)
            discardResult(autodeploy::PreviewStore(db).setComment(preview.app, *said),
                          "a comment not recorded is posted again at the next deploy, which is the lesser harm");
        return;
    }
    if (statusCancel.isCancelled())
        return;
    qWarning("engine: commenting on pull request #%d of %s: %s", preview.number, qPrintable(preview.parent),
             qPrintable(said.error().text()));
    discardResult(audit.record(Actor::system(u"forge"_s), u"forge.comment"_s, u"app/"_s + preview.app, u"failure"_s,
                               QJsonObject{{u"connection"_s, parent->sourceConnection},
                                           {u"pull_request"_s, preview.number},
                                           {u"error"_s, said.error().text()}}),
                  "the warning above says it when the audit log cannot");
}

} // namespace pando::core
