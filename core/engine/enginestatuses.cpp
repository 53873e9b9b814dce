// Engine: commit statuses. Each deploy of an app whose source is read through a token connection
// to a forge is reported on its commit, as CI systems do (context "pando/APP"): pending once the
// fetch has resolved the commit, success with the app's address when it serves, failure (error
// when cancelled) with the failing step and its reason. Reports run in order on one thread of
// their own, with the forge API's deadlines; a forge that refuses or does not answer never holds
// up or fails a deploy, and is told in the audit log (forge.status, failure).
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
            statusPool.start([this, event] { reportCommitStatus(event); });
        },
        Qt::DirectConnection);
}

void Engine::Private::reportCommitStatus(const Event &event)
{
    if (statusCancel.isCancelled())
        return;
    auto deploy = DeployRepository(db).find(event.deployId);
    if (!deploy || deploy->commit.isEmpty())
        return; // failed before its commit was known: there is nothing to put a status on
    auto app = AppRepository(db).find(deploy->app);
    if (!app || app->sourceConnection.isEmpty())
        return;
    const QString connection = app->sourceConnection;
    auto store = connectionStore();
    auto found = store ? store->find(connection) : Result<sourceconn::Connection>(std::unexpected(store.error()));
    if (!found || !found->isToken() || found->scope.kind == adapters::ForgeKind::Generic)
        return; // no API to report to
    auto spec = parseAppSpec(deploy->specYaml.toUtf8());
    if (!spec)
        return;

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

    Status reported = [&]() -> Status {
        auto address = adapters::parseRepoAddress(spec->source.repo, found->scope.kind);
        if (!address)
            return std::unexpected(address.error());
        auto api = forgeApi(connection);
        if (!api)
            return std::unexpected(api.error());
        return (*api)->setCommitStatus(*address, status, statusCancel);
    }();
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

} // namespace pando::core
