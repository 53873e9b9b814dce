// Engine: deploy on push (a forge's webhook, verified the forge's way) and by polling
// (core/autodeploy, docs/autodeploy.md).
#include "core/autodeploy/previews.h"
#include "core/autodeploy/pushdecision.h"
#include "core/engine/engineprivate.h"
#include "core/spec/specautodeploy.h"

#include <QDateTime>
#include <QHostAddress>
#include <QJsonArray>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// What the audit line of a delivery says of it.
QJsonObject auditDetail(const autodeploy::Delivery &delivery)
{
    QJsonObject detail{{u"forge"_s, delivery.forge},
                       {u"delivery"_s, delivery.id},
                       {u"event"_s, delivery.event},
                       {u"outcome"_s, delivery.outcome},
                       {u"detail"_s, delivery.detail}};
    if (!delivery.ref.isEmpty())
        detail.insert(u"ref"_s, delivery.ref);
    if (!delivery.commit.isEmpty())
        detail.insert(u"commit"_s, delivery.commit);
    if (!delivery.deployId.isEmpty())
        detail.insert(u"deploy"_s, delivery.deployId);
    return detail;
}

// What a verified delivery asks of the app: a deploy of the pushed commit (pushedRef), something
// of its previews, or nothing; refused when it is about another repository.
enum class Act { Nothing, Refuse, Push, PullRequest };
struct Decided {
    Act act = Act::Nothing;
    QString pushedRef;
};

// Decides, and writes on the delivery what people are told of it (its detail; for a pull
// request, its head's ref and commit).
Result<Decided> decideDelivery(Database &db, const AppSpec &spec, const autodeploy::HookEvent &event,
                               autodeploy::Delivery &delivery)
{
    if (event.kind != autodeploy::HookEvent::Kind::PullRequest) {
        const autodeploy::PushDecision decision = autodeploy::decidePush(spec, event);
        using Action = autodeploy::PushDecision::Action;
        delivery.detail = decision.reason;
        return Decided{decision.action == Action::Refuse   ? Act::Refuse
                       : decision.action == Action::Deploy ? Act::Push
                                                           : Act::Nothing,
                       decision.ref};
    }
    const autodeploy::PullRequestEvent &pull = event.pullRequest;
    delivery.ref = pull.headBranch.isEmpty() ? QString() : u"refs/heads/"_s + pull.headBranch;
    delivery.commit = pull.headCommit;
    auto access = policy::readAppAccess(db);
    if (!access)
        return std::unexpected(access.error());
    const autodeploy::PreviewDecision decision = autodeploy::decidePreview(spec, event, access->previewForks);
    using Action = autodeploy::PreviewDecision::Action;
    delivery.detail = decision.reason;
    if (decision.action == Action::Remove) {
        // A closed request that never had a preview asks nothing.
        auto preview = autodeploy::PreviewStore(db).find(spec.name, pull.number);
        if (!preview && preview.error().code != ErrorCode::NotFound)
            return std::unexpected(preview.error());
        if (!preview) {
            delivery.detail += u"; it has no preview"_s;
            return Decided{};
        }
    }
    return Decided{decision.action == Action::Refuse   ? Act::Refuse
                   : decision.action == Action::Ignore ? Act::Nothing
                                                       : Act::PullRequest,
                   {}};
}

} // namespace

QJsonObject toJson(const autodeploy::Delivery &d)
{
    QJsonObject o{{u"id"_s, d.id},
                  {u"forge"_s, d.forge},
                  {u"event"_s, d.event},
                  {u"ref"_s, d.ref},
                  {u"commit"_s, d.commit},
                  {u"pusher"_s, d.pusher},
                  {u"outcome"_s, d.outcome},
                  {u"detail"_s, d.detail},
                  {u"deploy"_s, d.deployId},
                  {u"received_ms"_s, d.receivedMs},
                  {u"received_at"_s, isoTime(d.receivedMs)}};
    return o;
}

QJsonObject HookView::toJson() const
{
    QJsonArray list;
    for (const autodeploy::Delivery &delivery : deliveries)
        list.append(core::toJson(delivery));
    QJsonObject json{{u"app"_s, app},
                     {u"mode"_s, autoDeployModeName(autodeploy.mode)},
                     {u"branch"_s, branch},
                     {u"tags"_s, autodeploy.tags},
                     {u"path"_s, u"/api/v1/hooks/%1"_s.arg(app)},
                     {u"secret_set"_s, hook.hasSecret},
                     {u"secret_set_by"_s, hook.createdBy},
                     {u"secret_set_at"_s, isoTime(hook.createdMs)},
                     {u"deliveries"_s, list}};
    if (autodeploy.mode == AppSpec::Source::AutoDeploy::Mode::Poll)
        json.insert(u"poll"_s, QJsonObject{{u"every_s"_s, autodeploy.everyMs / 1000},
                                           {u"polled_at"_s, isoTime(poll.polledMs)},
                                           {u"commit"_s, poll.commit},
                                           {u"error"_s, poll.error}});
    return json;
}

Result<autodeploy::HookStore> Engine::Private::hookStore()
{
    const std::optional<pipelines::SealBox> &opened = seal; // one name the checker can follow
    if (!opened)
        return fail(ErrorCode::Unavailable, u"the secret store is not open"_s);
    return autodeploy::HookStore(db, *opened, clock);
}

Result<HookView> Engine::appHook(const QString &app, int deliveries)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    auto store = d->hookStore();
    if (!store)
        return std::unexpected(store.error());
    HookView view;
    view.app = app;
    view.autodeploy = spec->source.autodeploy;
    view.branch = spec->source.autodeploy.tags.isEmpty() ? spec->source.ref : QString();
    auto info = store->info(app);
    if (!info)
        return std::unexpected(info.error());
    view.hook = *info;
    auto poll = store->pollState(app);
    if (!poll)
        return std::unexpected(poll.error());
    view.poll = *poll;
    auto list = store->deliveries(app, deliveries);
    if (!list)
        return std::unexpected(list.error());
    view.deliveries = *list;
    return view;
}

Result<QByteArray> Engine::setHookSecret(const QString &app, QByteArrayView chosen, const Actor &actor)
{
    if (auto row = AppRepository(d->db).find(app); !row)
        return std::unexpected(row.error());
    auto store = d->hookStore();
    if (!store)
        return std::unexpected(store.error());
    QByteArray secret;
    if (chosen.isEmpty()) {
        auto made = store->newSecret(app, actor.name);
        if (!made)
            return std::unexpected(made.error());
        secret = *made;
    } else {
        if (auto set = store->setSecret(app, chosen, actor.name); !set)
            return std::unexpected(set.error());
        secret = chosen.toByteArray();
    }
    const QJsonObject detail{{u"made"_s, chosen.isEmpty() ? u"random"_s : u"given"_s}};
    if (auto audited = d->audit.record(actor, u"app.hook.secret"_s, u"app/"_s + app, u"success"_s, detail); !audited) {
        pipelines::SealBox::wipe(secret);
        return std::unexpected(unaudited(u"the webhook secret was replaced"_s, audited.error()));
    }
    return secret;
}

Result<adapters::ForgeWebhook> Engine::registerAppHook(const QString &app, const QString &baseUrl, const Actor &actor)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    const QString reachable = u"give the address the forge reaches Pando at, e.g. https://pando.example.com"_s;
    const QUrl base(baseUrl.trimmed());
    const QString host = base.host();
    const QHostAddress literal(host);
    if (!base.isValid() || (base.scheme() != u"https"_s && base.scheme() != u"http"_s) || host.isEmpty() ||
        base.hasQuery() || base.hasFragment() || !base.userInfo().isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not an http(s) address of this server"_s.arg(baseUrl), u"url"_s,
                    reachable);
    if (host == u"localhost"_s || (!literal.isNull() && literal.isLoopback()))
        return fail(ErrorCode::Invalid, u"a forge cannot reach %1: it is this machine's own loopback"_s.arg(host),
                    u"url"_s, reachable);
    QString path = base.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    QUrl hookUrl = base;
    hookUrl.setPath(path + u"/api/v1/hooks/"_s + app);
    if (row->sourceConnection.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"app %1 reads its source through no connection, so Pando cannot reach its forge"_s.arg(app),
                    u"source.connection"_s,
                    u"add a token connection for its forge (pando connections add), or register the webhook by hand "
                    u"with the address and secret pando apps hook %1 and pando apps hook-secret %1 give"_s.arg(app));
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    auto connections = d->connectionStore();
    if (!connections)
        return std::unexpected(connections.error());
    auto connection = connections->find(row->sourceConnection);
    if (!connection)
        return std::unexpected(connection.error());
    auto address = adapters::parseRepoAddress(spec->source.repo, connection->scope.kind);
    if (!address)
        return std::unexpected(address.error());
    auto api = d->forgeApi(row->sourceConnection);
    if (!api)
        return std::unexpected(api.error());
    auto store = d->hookStore();
    if (!store)
        return std::unexpected(store.error());

    // The forge gets the new secret first: until it took it, deliveries signed with the old one
    // (a hook set up by hand) keep working.
    QByteArray secret = autodeploy::HookStore::randomSecret();
    auto registered = (*api)->registerWebhook(*address, hookUrl.toString(), secret, CancelToken());
    Status kept = registered ? store->setSecret(app, secret, actor.name) : Status{};
    pipelines::SealBox::wipe(secret);
    const QJsonObject detail{{u"connection"_s, row->sourceConnection},
                             {u"url"_s, hookUrl.toString()},
                             {u"hook"_s, registered ? registered->id : QString()},
                             {u"error"_s, registered ? QString() : registered.error().text()}};
    auto audited = d->audit.record(actor, u"app.hook.register"_s, u"app/"_s + app,
                                   registered && kept ? u"success"_s : u"failure"_s, detail);
    if (!registered)
        return std::unexpected(d->forgeRefusal(row->sourceConnection, registered.error()));
    if (!kept)
        return fail(ErrorCode::Internal,
                    u"the forge took the webhook, but Pando could not keep its secret: %1"_s.arg(kept.error().text()),
                    u"app/"_s + app, u"register it again: pando apps hook-register %1"_s.arg(app));
    if (!audited)
        return std::unexpected(unaudited(u"the webhook was registered"_s, audited.error()));
    return registered;
}

Result<autodeploy::Delivery> Engine::receiveHook(const QString &app, const autodeploy::HookRequest &request,
                                                 const Actor &source)
{
    if (request.body.size() > autodeploy::MaxHookPayloadBytes)
        return fail(ErrorCode::TooLarge,
                    u"the payload has %1 bytes, more than the %2 a webhook may send"_s.arg(request.body.size())
                        .arg(autodeploy::MaxHookPayloadBytes),
                    u"body"_s, u"send push and pull request events only; Pando reads their refs and commits"_s);
    if (const qint64 wait = d->hookThrottle.waitMs({}, source.source); wait > 0)
        return fail(ErrorCode::Unauthorized, u"too many webhook deliveries with a wrong signature from this address"_s,
                    u"headers"_s, u"try again in %1 s"_s.arg((wait + 999) / 1000));
    auto forge = autodeploy::detectForge(request);
    if (!forge)
        return std::unexpected(forge.error());
    auto store = d->hookStore();
    if (!store)
        return std::unexpected(store.error());
    // An unknown app and one without a secret are checked against a secret nobody has, so that
    // the answer (and how long it takes) is a wrong signature's.
    std::optional<QByteArray> secret;
    auto row = AppRepository(d->db).find(app);
    if (row) {
        auto stored = store->secret(app);
        if (!stored)
            return std::unexpected(stored.error());
        secret = *stored;
    } else if (row.error().code != ErrorCode::NotFound) {
        return std::unexpected(row.error());
    }
    const QByteArray key = secret ? *secret : QByteArray::number(QRandomGenerator::system()->generate64(), 16) + "!";
    Status verified = autodeploy::verify(*forge, request, key);
    if (secret)
        pipelines::SealBox::wipe(*secret);
    if (!verified) {
        d->hookThrottle.recordFailure({}, source.source);
        (void)d->audit.recordUnauthenticated(source, u"app.hook"_s, u"app/"_s + app,
                                             QJsonObject{{u"reason"_s, verified.error().message}});
        return std::unexpected(verified.error());
    }
    auto event = autodeploy::parse(*forge, request);
    if (!event)
        return std::unexpected(event.error());
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());

    autodeploy::Delivery delivery;
    delivery.app = app;
    delivery.id = event->deliveryId;
    delivery.forge = autodeploy::forgeName(*forge);
    delivery.event = event->eventName;
    delivery.ref = event->ref;
    delivery.commit = event->commit;
    delivery.pusher = event->pusher;
    delivery.receivedMs = d->clock.nowMs();
    auto decided = decideDelivery(d->db, *spec, *event, delivery);
    if (!decided)
        return std::unexpected(decided.error());
    const Act act = decided->act;
    const QString pushedRef = decided->pushedRef;
    delivery.outcome = act == Act::Nothing ? u"ignored"_s : act == Act::Refuse ? u"failed"_s : u"accepted"_s;
    if (auto recorded = store->recordDelivery(delivery); !recorded)
        return std::unexpected(recorded.error());
    Actor actor = source;
    actor.name = u"hook:%1"_s.arg(delivery.forge);
    if (!delivery.pusher.isEmpty())
        actor.name += u":"_s + delivery.pusher.left(100);
    if (auto audited = d->audit.record(actor, u"app.hook"_s, u"app/"_s + app,
                                       act == Act::Refuse ? u"failure"_s : u"success"_s, auditDetail(delivery));
        !audited) {
        (void)store->settleDelivery(app, delivery.id, u"failed"_s, audited.error().text(), {});
        return std::unexpected(audited.error());
    }
    d->services.publish(EventType::AppHookDelivered, app, {}, core::toJson(delivery));
    if (act == Act::Refuse)
        return fail(ErrorCode::Invalid, delivery.detail, u"body.repository"_s,
                    u"point this webhook at the app that deploys that repository"_s);
    if (act == Act::Push || act == Act::PullRequest) {
        // Resolving the commit fetches: the forge is answered first (GitHub waits 10 s).
        d->hookPool.start([this, delivery, pushedRef, act, event = *event, parent = *row, spec = *spec, actor] {
            auto store = d->hookStore();
            // A deploy's id; for a pull request, empty when its preview was removed.
            const Result<QString> queued = [&]() -> Result<QString> {
                if (act == Act::PullRequest)
                    return actOnPullRequest(parent, spec, event, actor);
                auto deployed = deploy(delivery.app, pushedRef, actor);
                if (!deployed)
                    return std::unexpected(deployed.error());
                return deployed->id;
            }();
            autodeploy::Delivery settled = delivery;
            settled.outcome = !queued ? u"failed"_s : queued->isEmpty() ? u"removed"_s : u"deployed"_s;
            settled.detail = queued ? delivery.detail : queued.error().text();
            settled.deployId = queued ? *queued : QString();
            if (store)
                if (auto recorded = store->settleDelivery(settled.app, settled.id, settled.outcome, settled.detail,
                                                          settled.deployId);
                    !recorded)
                    qWarning("engine: settling webhook delivery %s: %s", qPrintable(settled.id),
                             qPrintable(recorded.error().text()));
            d->services.publish(EventType::AppHookDelivered, settled.app, settled.deployId, core::toJson(settled));
            if (!queued)
                (void)d->audit.record(actor, u"app.hook"_s, u"app/"_s + settled.app, u"failure"_s,
                                      auditDetail(settled));
        });
    }
    return delivery;
}

Result<QStringList> Engine::pollOnce(const QString &only)
{
    auto apps = AppRepository(d->db).list();
    if (!apps)
        return std::unexpected(apps.error());
    auto store = d->hookStore();
    if (!store)
        return std::unexpected(store.error());
    QStringList changes;
    const qint64 now = d->clock.nowMs();
    for (const AppRecord &app : std::as_const(*apps)) {
        if (!only.isEmpty() && app.name != only)
            continue;
        auto spec = parseAppSpec(app.specYaml.toUtf8());
        if (!spec || spec->source.autodeploy.mode != AppSpec::Source::AutoDeploy::Mode::Poll)
            continue;
        {
            QMutexLocker lock(&d->mutex);
            if (d->removing.contains(app.name))
                continue;
        }
        auto state = store->pollState(app.name);
        if (!state)
            return std::unexpected(state.error());
        if (only.isEmpty() && state->polledMs > 0 && now - state->polledMs < spec->source.autodeploy.everyMs)
            continue;
        auto commit = d->resolveSource(*spec, app.sourceTrusted, app.sourceConnection, u"source.ref"_s);
        if (!commit) {
            const QString error = commit.error().text();
            if (error != state->error)
                changes << u"%1: polling %2 failed: %3"_s.arg(app.name, spec->source.ref, error);
            if (auto recorded = store->recordPoll(app.name, state->commit, error); !recorded)
                return std::unexpected(recorded.error());
            continue;
        }
        QString newest;
        if (auto last = DeployRepository(d->db).listForApp(app.name, 1); last && !last->isEmpty())
            newest = last->first().commit;
        if (*commit != state->commit && *commit != newest) {
            const Actor actor{u"system:autodeploy"_s, u"engine"_s, {}};
            auto queued = deploy(app.name, *commit, actor);
            changes << (queued ? u"%1: %2 moved to %3; deploy %4"_s.arg(app.name, spec->source.ref, commit->left(12),
                                                                        queued->id)
                               : u"%1: %2 moved to %3; the deploy was refused: %4"_s.arg(
                                     app.name, spec->source.ref, commit->left(12), queued.error().text()));
        }
        if (auto recorded = store->recordPoll(app.name, *commit, {}); !recorded)
            return std::unexpected(recorded.error());
    }
    return changes;
}

} // namespace pando::core
