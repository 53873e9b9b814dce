#include "deploysteps.h"

#include "adapters/api/repoaddress.h"

#include <QHostAddress>

#include "core/policy/sourceaccess.h"

#include "core/capacity/capacity.h"
#include "core/deploy/appaddresses.h"
#include "core/deploy/buildcache.h"
#include "core/deploy/healthprobe.h"
#include "core/deploy/imagereuse.h"
#include "core/deploy/servicestep.h"
#include "core/deploy/steplog.h"
#include "core/deploy/steprecorder.h"
#include "core/detection/registryprobe.h"
#include "core/state/repositories.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

namespace pando::core {

namespace {

// How long a running container may read without an address after the runtime said it had one.
constexpr int AddressSettleMs = 3000;

// What approvers see: what will run and what changed since the version serving now. Values of
// environment variables and build arguments stay out: they may be secrets.
QJsonObject planForApprovers(const DeployRecord &deploy, const AppSpec &spec, const Plan &plan, const AppSpec *current,
                             const DeployRecord *serving, const policy::Decision &decision)
{
    QJsonObject o{{QStringLiteral("app"), deploy.app},
                  {QStringLiteral("deploy"), deploy.id},
                  {QStringLiteral("ref"), deploy.ref},
                  {QStringLiteral("commit"), deploy.commit},
                  {spec.source.isImage() ? QStringLiteral("image") : QStringLiteral("repo"),
                   spec.source.isImage() ? spec.source.image : spec.source.repo},
                  {QStringLiteral("dockerfile"), plan.dockerfile},
                  {QStringLiteral("port"), plan.container.port},
                  {QStringLiteral("memory_bytes"), plan.container.memoryBytes},
                  {QStringLiteral("cpus"), plan.container.cpus},
                  {QStringLiteral("egress"), egressName(spec.network.egress)},
                  {QStringLiteral("env"), QJsonArray::fromStringList(plan.container.env.keys())},
                  {QStringLiteral("reasons"), QJsonArray::fromStringList(decision.reasons)}};
    if (!plan.container.command.isEmpty())
        o.insert(QStringLiteral("command"), QJsonArray::fromStringList(plan.container.command));
    if (!plan.notes.isEmpty())
        o.insert(QStringLiteral("notes"), QJsonArray::fromStringList(plan.notes));
    if (serving != nullptr) {
        QJsonObject was{{QStringLiteral("deploy"), serving->id}, {QStringLiteral("commit"), serving->commit}};
        if (current != nullptr) {
            was.insert(QStringLiteral("repo"), current->source.repo);
            was.insert(QStringLiteral("memory_bytes"), current->run.memoryBytes);
            was.insert(QStringLiteral("cpus"), current->run.cpus);
            was.insert(QStringLiteral("egress"), egressName(current->network.egress));
        }
        o.insert(QStringLiteral("serving"), was);
    }
    return o;
}

// Asks for sign-off when the host policy wants it: records the approval step as waiting and
// the deploy as awaiting-approval, and returns true (the runner stops here).
Result<bool> holdForApproval(DeployRun &run)
{
    Services &s = run.s;
    if (s.approvals == nullptr || s.approvalPolicy == nullptr || s.approvalPolicy->isEmpty())
        return false;
    // What serves now is what the change rules compare against.
    std::optional<DeployRecord> serving;
    std::optional<AppSpec> current;
    if (!run.previous.isEmpty()) {
        if (auto found = DeployRepository(s.db).find(run.previous)) {
            serving = *found;
            if (!found->specYaml.isEmpty())
                if (auto parsed = parseAppSpec(found->specYaml.toUtf8()))
                    current = *parsed;
        }
    }
    DeployRecord &deploy = run.deploy;
    const policy::Decision decision = s.approvalPolicy->decide(current ? &*current : nullptr, run.spec, deploy.app);
    if (!decision.needsApproval)
        return false;

    StepRecorder step(s, deploy, run.seq++, QStringLiteral("approval"));
    const QJsonObject shown = planForApprovers(deploy, run.spec, run.plan, current ? &*current : nullptr,
                                               serving ? &*serving : nullptr, decision);
    const QString summary =
        QStringLiteral("deploy %1 of %2 at %3: %4")
            .arg(deploy.id, deploy.app, deploy.commit.left(12), decision.reasons.join(QStringLiteral("; ")));
    auto requested = s.approvals->request(
        QString(approval::KindDeploy), QStringLiteral("deploy/") + deploy.id, Actor{deploy.actor, {}, {}}, summary,
        QString::fromUtf8(QJsonDocument(shown).toJson(QJsonDocument::Compact)), s.approvalTtlMs);
    if (!requested)
        return std::unexpected(step.failWith(requested.error()));
    deploy.approvalId = requested->id;
    deploy.status = DeployStatus::AwaitingApproval;
    if (auto saved = DeployRepository(s.db).update(deploy); !saved)
        return std::unexpected(step.failWith(saved.error()));
    step.waitFor(QStringLiteral("waiting for approval %1 (%2); approve with `pando approvals approve %1`")
                     .arg(requested->id, decision.reasons.join(QStringLiteral("; "))));
    s.publish(EventType::DeployAwaitingApproval, deploy.app, deploy.id,
              QJsonObject{{QStringLiteral("approval"), requested->id},
                          {QStringLiteral("reasons"), QJsonArray::fromStringList(decision.reasons)}});
    return true;
}

// A deploy resumed after its approval uses it once: a second run of this job (a crash right
// here, say) finds it used and fails rather than deploying twice on one sign-off.
Status consumeApproval(DeployRun &run)
{
    DeployRecord &deploy = run.deploy;
    auto used = run.s.approvals != nullptr
                    ? run.s.approvals->consume(deploy.approvalId)
                    : Result<ApprovalRecord>(fail(ErrorCode::Internal, QStringLiteral("approvals are not available")));
    if (!used) {
        deploy.failedStep = QStringLiteral("approval");
        deploy.error = used.error().text();
        finishWaitingSteps(run.s, deploy, DeployStepStatus::Failed, used.error().text());
        return std::unexpected(used.error());
    }
    finishWaitingSteps(
        run.s, deploy, DeployStepStatus::Succeeded,
        QStringLiteral("%1 approved by %2%3")
            .arg(used->id, used->decidedBy, used->reason.isEmpty() ? QString() : QStringLiteral(": ") + used->reason));
    return {};
}

// The command that adds a connection to image's registry ("… --url https://ghcr.io …").
QString addRegistryCommand(const QString &image)
{
    const auto address = adapters::parseImageAddress(image);
    QString registry = QStringLiteral("https://HOST");
    if (address) {
        const bool loopback = address->host == QLatin1String("localhost") || QHostAddress(address->host).isLoopback();
        registry = (loopback ? QStringLiteral("http://") : QStringLiteral("https://")) + address->host +
                   (address->port < 0 ? QString() : QStringLiteral(":%1").arg(address->port));
    }
    return QStringLiteral("pando connections add NAME --kind registry --url %1 --token-user USER (the password or "
                          "token on standard input)")
        .arg(registry);
}

// A pull through a connection that its registry refused (or that found no such image), said of
// where: how to ask the registry what it answers that connection.
Error refusedThrough(const QString &connection, const QString &image, const QString &where, Error e)
{
    e.code = ErrorCode::Failed;
    e.where = where;
    e.hint = QStringLiteral("it was pulled through connection %1; pando connections test %1 %2 says what its registry "
                            "answers")
                 .arg(connection, image);
    return e;
}

// A build of an image source that could not have the image: said of source.image, not of the
// Dockerfile Pando wrote for it. Another failure (the engine gone) stays as it was.
Error unpulled(const AppSpec::Source &source, const QString &connection, Error e)
{
    if (!connection.isEmpty() && (e.code == ErrorCode::Unauthorized || e.code == ErrorCode::NotFound))
        return refusedThrough(connection, source.image, QStringLiteral("source.image"), std::move(e));
    static const QLatin1String baseImage("the base image ");
    if (!e.message.startsWith(baseImage))
        return e;
    e.message = QStringLiteral("the image ") + e.message.mid(baseImage.size());
    e.where = QStringLiteral("source.image");
    if (e.message.contains(QLatin1String("wants a login"))) {
        e.hint = QStringLiteral("add a connection to its registry that you may use, then update the app: ") +
                 addRegistryCommand(source.image);
        return e;
    }
    if (source.pullsAlways())
        e.hint += QStringLiteral("%1source.pull: missing deploys the engine's copy when its registry cannot be asked")
                      .arg(e.hint.isEmpty() ? QString() : QStringLiteral("; "));
    return e;
}

// A repository build that could not have a base image: through the connection that pulled it,
// how to test that; without one, on a registry that wants a login, how to give the build one.
Error unpulledBase(const DeployRun &run, const QHash<QString, QString> &through, Error e)
{
    const QString image = e.where; // a pull's error is said of its image
    if (const QString connection = through.value(image);
        !connection.isEmpty() && (e.code == ErrorCode::Unauthorized || e.code == ErrorCode::NotFound))
        return refusedThrough(connection, image, QStringLiteral("%1 (FROM %2)").arg(run.detection.dockerfile, image),
                              std::move(e));
    static const QLatin1String baseImage("the base image ");
    if (!e.message.startsWith(baseImage) || !e.message.contains(QLatin1String("wants a login")))
        return e;
    e.hint =
        QStringLiteral("Pando pulls it through a registry connection that the app's spec writer may use: add "
                       "one (%1), or have an administrator grant one (pando grants add connection/NAME USER user), "
                       "then deploy again")
            .arg(addRegistryCommand(e.message.mid(baseImage.size()).section(u' ', 0, 0)));
    return e;
}

// The runtime takes container names of limited length; refused at plan time, with the figures.
Status checkNameLength(const DeployRun &run, const adapters::RuntimeCapabilities &caps)
{
    const QString name = containerName(run.deploy.app, run.deploy.id);
    if (caps.maxNameLength <= 0 || name.size() <= caps.maxNameLength)
        return {};
    return fail(ErrorCode::Invalid,
                QStringLiteral("the %1 runtime takes names of at most %2 characters, and this app's are %3 (%4)")
                    .arg(caps.kind)
                    .arg(caps.maxNameLength)
                    .arg(name.size())
                    .arg(name),
                QStringLiteral("name"),
                QStringLiteral("use an app name of at most %1 characters")
                    .arg(caps.maxNameLength - (name.size() - run.deploy.app.size())));
}

} // namespace

DeployRun::DeployRun(Services &services, DeployRecord record, AppRecord appRecord, const CancelToken &token)
    : s(services), cancel(token), deploy(std::move(record)), app(std::move(appRecord))
{
    previous = app.currentDeploy;
    resumed = !deploy.approvalId.isEmpty();
}

DeployRun::~DeployRun()
{
    // The app's other work need not wait for the tree to go.
    if (appLock.owns_lock())
        appLock.unlock();
    if (!checkoutDir.isEmpty())
        QDir(checkoutDir).removeRecursively();
}

void DeployRun::save()
{
    if (auto saved = DeployRepository(s.db).update(deploy); !saved)
        qWarning("deploy %s: saving its progress failed: %s", qPrintable(deploy.id), qPrintable(saved.error().text()));
}

namespace deploysteps {

namespace {

// An image source's "checkout": a build context of its own holding a Dockerfile of one line,
// FROM the image. Building it pulls the image (or takes the engine's copy) and gives it the
// install's labels and the deploy's tag, so that it is the install's to keep and remove like a
// built one; everything from the plan on is the same for both sources.
Result<StepEnd> imageContext(DeployRun &run)
{
    const QString dir = run.s.workRoot(run.deploy.app) + QStringLiteral("/image-") + run.deploy.id;
    QDir(dir).removeRecursively();
    if (!QDir().mkpath(dir) || !QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return fail(ErrorCode::Failed, QStringLiteral("cannot make the build directory"), dir);
    run.checkoutDir = dir;
    QFile dockerfile(dir + QStringLiteral("/Dockerfile"));
    const QByteArray line = "FROM " + run.spec.source.image.toUtf8() + '\n';
    if (!dockerfile.open(QIODevice::WriteOnly | QIODevice::NewOnly) || dockerfile.write(line) != line.size() ||
        !dockerfile.flush())
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot write the build's Dockerfile: %1").arg(dockerfile.errorString()), dir);
    return StepEnd{run.spec.source.pullsAlways()
                       ? QStringLiteral("image %1, asked of its registry at the build").arg(run.spec.source.image)
                       : QStringLiteral("image %1, the engine's copy when it has one").arg(run.spec.source.image)};
}

} // namespace

Result<StepEnd> fetch(DeployRun &run)
{
    DeployRecord &deploy = run.deploy;
    // The spec as it was when the deploy was asked for: editing the app meanwhile (while this
    // deploy waits for approval, say) does not change what it runs.
    auto spec = parseAppSpec((deploy.specYaml.isEmpty() ? run.app.specYaml : deploy.specYaml).toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    run.spec = *spec;
    if (run.spec.source.isImage())
        return imageContext(run);
    run.ref = deploy.ref.isEmpty() ? run.spec.source.ref : deploy.ref;
    // The commit resolved when the deploy was asked for; a branch that moved since does not
    // change what this deploy builds.
    const QString target = deploy.commit.isEmpty() ? run.ref : deploy.commit;
    QDir().mkpath(run.s.workRoot(deploy.app));
    // With the means of whoever wrote the spec, under the settings as they are now: an
    // administrator who turned a setting off stops members' apps from using it at their next deploy.
    auto settings = policy::readAppAccess(run.s.db);
    if (!settings)
        return std::unexpected(settings.error());
    const bool trusted = run.app.sourceTrusted;
    if (auto allowed = policy::checkSource(run.spec.source.repo, trusted, *settings); !allowed)
        return std::unexpected(allowed.error());
    auto access = fetchAccess(run.s, trusted, *settings, run.app.sourceConnection);
    if (!access)
        return std::unexpected(access.error());
    auto checkout = run.s.source.checkout(run.spec.source.repo, target, run.s.workRoot(deploy.app), *access, run.cancel,
                                          [](const QString &) {});
    if (std::optional<adapters::SourceCredential> &credential = access->credential)
        credential->wipe();
    if (!checkout)
        noteRefusal(run.s, run.app.sourceConnection, checkout.error());
    if (!checkout && !trusted && checkout.error().code != ErrorCode::NotFound &&
        checkout.error().code != ErrorCode::Cancelled)
        return std::unexpected(policy::unreadableSource(run.spec.source.repo));
    if (!checkout)
        return std::unexpected(checkout.error());
    run.checkoutDir = checkout->directory;
    deploy.commit = checkout->commit;
    run.save();
    return StepEnd{QStringLiteral("%1 at %2").arg(run.ref, checkout->commit.left(12))};
}

namespace {

// What the detect step adds when the repository publishes an image of itself (registryprobe.h):
// the offer in the log, the image in the step's line.
QString publishedNote(DeployRun &run)
{
    const QList<PublishedImage> published = publishedImages(run.checkoutDir, run.spec.source.repo);
    if (published.isEmpty())
        return {};
    if (run.log)
        run.log->add(publishedImagesOffer(published));
    return QStringLiteral("; publishes %1 (source.image can deploy it)").arg(published.first().image);
}

} // namespace

Result<StepEnd> detect(DeployRun &run)
{
    auto detected = core::detect(run.spec, run.checkoutDir);
    if (!detected)
        return std::unexpected(detected.error());
    run.detection = *detected;
    if (run.detection.builder != u"generated")
        return StepEnd{QStringLiteral("%1 (%2)").arg(run.detection.dockerfile, run.detection.builder) +
                       publishedNote(run)};
    // No Dockerfile: the one written for the stack goes into Pando's own checkout, as a new file
    // (never through a link the repository holds), and the log shows it whole.
    QFile::remove(run.detection.dockerfilePath);
    QFile file(run.detection.dockerfilePath);
    if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly) ||
        file.write(run.detection.generated.toUtf8()) != run.detection.generated.toUtf8().size() || !file.flush())
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot write the generated Dockerfile: %1").arg(file.errorString()),
                    QStringLiteral("build.dockerfile"));
    if (run.log) {
        run.log->add(QStringLiteral("no Dockerfile: %1; building it with this Dockerfile:").arg(run.detection.summary));
        for (const QString &line : run.detection.generated.trimmed().split(u'\n'))
            run.log->add(QStringLiteral("  ") + line);
    }
    return StepEnd{QStringLiteral("no Dockerfile: %1, built with a generated one").arg(run.detection.summary) +
                   publishedNote(run)};
}

Result<StepEnd> plan(DeployRun &run)
{
    Services &s = run.s;
    // The spec's runtime, or the install's default one.
    auto caps = s.runtime.capabilitiesOf(run.spec.runtime);
    if (!caps)
        return std::unexpected(caps.error());
    if (auto fits = checkNameLength(run, *caps); !fits)
        return std::unexpected(fits.error());
    auto planned = makePlan(run.spec, s.policy, *caps, run.checkoutDir);
    if (!planned)
        return std::unexpected(planned.error());
    if (run.detection.builder == u"generated")
        planned->dockerfile = run.detection.dockerfile;
    // Room on the runtime beside what other apps committed (core/capacity).
    auto room = capacity::checkRoom(s.db, s.runtime, s.policy, run.deploy.app, run.spec, *caps, planned->container);
    if (!room)
        return std::unexpected(room.error());
    if (!room->isEmpty())
        planned->notes << *room;
    run.plan = *planned;
    auto injected = SecretInjection::prepare(s, run.deploy.app, run.spec);
    if (!injected)
        return std::unexpected(injected.error());
    run.secrets = std::move(*injected);
    if (auto servicesOk = checkServicesPlan(s, run.spec); !servicesOk)
        return std::unexpected(servicesOk.error());
    auto addresses = planAddresses(s.db, s.router, run.deploy.app, run.spec);
    if (!addresses)
        return std::unexpected(addresses.error());
    run.addresses = *addresses;
    if (!run.addresses.isEmpty()) {
        QStringList urls;
        const auto [http, https] = s.router.addressPorts();
        for (const adapters::Address &address : std::as_const(run.addresses))
            urls << address.url(http, https).toString() + QStringLiteral(" (TLS ") +
                        adapters::tlsModeName(address.tls) + QLatin1Char(')');
        run.plan.notes << QStringLiteral("served at ") + urls.join(QStringLiteral(", "));
    }
    qint64 servingSince = 0;
    if (!run.previous.isEmpty())
        if (auto serving = DeployRepository(s.db).find(run.previous))
            servingSince = serving->startedMs;
    if (const QString said = run.secrets.describe(servingSince); !said.isEmpty())
        run.plan.notes << said; // names only
    return StepEnd{run.plan.notes.join(QStringLiteral("; "))};
}

Result<StepEnd> approval(DeployRun &run)
{
    if (run.resumed) {
        if (auto used = consumeApproval(run); !used)
            return std::unexpected(used.error());
        return StepEnd{};
    }
    auto held = holdForApproval(run);
    if (!held)
        return std::unexpected(held.error());
    return StepEnd{.hold = *held};
}

// The port the container listens on: run.port, or else the one the image exposes (its EXPOSE
// lines and its base images'; the Dockerfile's where the runtime cannot tell). $PORT says it in
// the app's environment unless the spec sets PORT itself. What is noteworthy goes to the log and
// comes back for the step's line.
Result<QString> settlePort(DeployRun &run)
{
    QList<int> exposed;
    if (auto ports = run.s.runtime.exposedPorts(run.deploy.imageId))
        exposed = *ports;
    else if (run.detection.exposedPort > 0)
        exposed = {run.detection.exposedPort};
    QStringList listed;
    for (const int port : std::as_const(exposed))
        listed << QString::number(port);
    int port = run.spec.run.port;
    QString note;
    if (port == 0) {
        if (exposed.isEmpty())
            return fail(ErrorCode::Invalid, QStringLiteral("the spec names no port, and the image exposes none"),
                        QStringLiteral("run.port"),
                        QStringLiteral("set run.port to the port the app listens on in its container, or EXPOSE it "
                                       "in the Dockerfile"));
        // The Dockerfile's own EXPOSE before one a base image brings.
        port = exposed.contains(run.detection.exposedPort) ? run.detection.exposedPort : exposed.first();
        note = exposed.size() == 1 ? QStringLiteral("port %1, which the image exposes").arg(port)
                                   : QStringLiteral("port %1 of the %2 the image exposes; run.port picks another")
                                         .arg(port)
                                         .arg(listed.join(QStringLiteral(", ")));
    } else if (!exposed.isEmpty() && !exposed.contains(port)) {
        run.portNote =
            QStringLiteral("the image exposes %1, but run.port is %2").arg(listed.join(QStringLiteral(", "))).arg(port);
        note = run.portNote + QStringLiteral(": the app must listen on %1").arg(port);
    }
    if (!note.isEmpty() && run.log)
        run.log->add(note);
    run.deploy.port = port;
    run.plan.container.port = port;
    run.plan.container.env = containerEnv(run.spec, port);
    return note;
}

Result<StepEnd> build(DeployRun &run)
{
    DeployRecord &deploy = run.deploy;
    const auto withPort = [&run](const QString &detail) -> Result<StepEnd> {
        auto note = settlePort(run);
        if (!note)
            return std::unexpected(note.error());
        run.save();
        return StepEnd{note->isEmpty() ? detail : detail + QStringLiteral("; ") + *note};
    };
    if (const auto reused = reuseImage(run.s, deploy, run.spec)) {
        deploy.imageId = reused->imageId;
        return withPort(
            QStringLiteral("%1, built by %2 from the same commit").arg(reused->imageId.left(19), reused->fromDeploy));
    }
    adapters::BuildRequest request;
    request.contextDir = run.plan.contextDir;
    request.dockerfile = run.plan.dockerfile;
    request.runtime = run.spec.runtime;
    request.tag = imageTag(deploy.app, deploy.id);
    request.labels = run.s.labels();
    request.buildArgs = run.spec.build.args;
    request.pull = run.spec.source.isImage() && run.spec.source.pullsAlways();
    // A private image: pulled with its registry connection's login before the build (always, or
    // when the engine does not have it, as source.pull says).
    if (run.spec.source.isImage() && !run.app.sourceConnection.isEmpty()) {
        auto login = registryLogin(run.s, run.app.sourceConnection);
        if (!login)
            return std::unexpected(login.error());
        request.pullFirst.append({run.spec.source.image, std::move(*login), request.pull});
    }
    // A repository's private base images: pulled first, when the engine does not have them,
    // through the registry connections the spec's writer may use.
    QHash<QString, QString> through;
    if (!run.spec.source.isImage()) {
        auto logins = baseImageLogins(run.s, run.app, run.detection.baseImages);
        if (!logins)
            return std::unexpected(logins.error());
        for (BaseImageLogin &login : *logins) {
            if (run.log)
                run.log->add(QStringLiteral("%1 is pulled through connection %2 when the engine does not have it")
                                 .arg(login.image, login.connection));
            through.insert(login.image, login.connection);
            request.pullFirst.append({login.image, std::move(login.credential), false});
        }
    }
    QList<BuildCacheRecord> leftovers;
    const qint64 startedMs = run.s.clock.nowMs();
    request.leftover = [&leftovers, &deploy, startedMs](const QString &id, qint64 bytes) {
        leftovers.append({id, deploy.app, deploy.id, int(leftovers.size()), bytes, startedMs});
    };
    auto image = run.s.runtime.build(request, run.cancel, [&run](const QString &line) {
        if (run.log)
            run.log->add(line);
    });
    for (adapters::CredentialedPull &pulled : request.pullFirst)
        pulled.credential.wipe();
    keepBuildCache(run.s, deploy.app, deploy.id, leftovers);
    if (!image)
        return std::unexpected(run.spec.source.isImage()
                                   ? unpulled(run.spec.source, run.app.sourceConnection, image.error())
                                   : unpulledBase(run, through, image.error()));
    deploy.imageId = *image;
    if (run.spec.source.isImage()) {
        deploy.commit = *image; // what the tag named when this deploy pulled it
        return withPort(QStringLiteral("%1 as %2").arg(run.spec.source.image, image->left(19)));
    }
    return withPort(image->left(19));
}

bool hasRepository(const DeployRun &run)
{
    return !run.spec.source.isImage();
}

bool hasServices(const DeployRun &run)
{
    return !run.spec.services.isEmpty();
}

Result<StepEnd> services(DeployRun &run)
{
    auto ready = provisionServices(run.s, run.deploy.app, run.spec, run.cancel, run.checkoutDir);
    if (!ready)
        return std::unexpected(ready.error());
    run.provisioned = std::move(*ready);
    return StepEnd{run.provisioned.summary.join(QStringLiteral("; "))};
}

Result<StepEnd> start(DeployRun &run)
{
    DeployRecord &deploy = run.deploy;
    adapters::ContainerSpec cs = run.plan.container;
    cs.name = containerName(deploy.app, deploy.id);
    cs.image = deploy.imageId;
    cs.labels.insert(run.s.labels(deploy.app, deploy.id));
    run.secrets.applyTo(cs);
    applyServices(run.provisioned, cs);
    auto id = run.s.runtime.run(cs);
    run.secrets.scrub(cs);
    scrubServices(run.provisioned, cs);
    run.secrets.wipe();
    if (!id)
        return std::unexpected(id.error());
    deploy.containerId = *id;
    run.save();
    auto info = run.s.runtime.inspect(*id);
    if (!info)
        return std::unexpected(info.error());
    run.container = *info;
    // An instance whose process just ended can still read as running while its network is
    // already gone: ask again for a moment before calling it addressless. One that exited has
    // no address either; the health step says why it exited.
    const QDeadlineTimer settling(AddressSettleMs);
    while (run.container.address.isEmpty() && run.container.state == QLatin1String("running") &&
           !settling.hasExpired() && !run.cancel.isCancelled()) {
        QThread::msleep(50);
        info = run.s.runtime.inspect(*id);
        if (!info)
            return std::unexpected(info.error());
        run.container = *info;
    }
    if (run.container.address.isEmpty() && run.container.state == QLatin1String("running"))
        return fail(ErrorCode::Failed, QStringLiteral("the container has no address"));
    return StepEnd{QStringLiteral("%1 at %2:%3").arg(id->left(12), run.container.address).arg(run.plan.container.port)};
}

Result<StepEnd> health(DeployRun &run)
{
    adapters::Runtime &runtime = run.s.runtime;
    const QString containerId = run.deploy.containerId;
    const QString address = run.container.address;
    auto alive = [&runtime, containerId, address]() -> Status {
        auto info = runtime.inspect(containerId);
        if (info && info->state != QLatin1String("running") && info->state != QLatin1String("created"))
            return fail(ErrorCode::Failed,
                        QStringLiteral("the container stopped (%1, exit code %2)").arg(info->state).arg(info->exitCode),
                        {}, QStringLiteral("see its output in the deploy's health step or with `pando logs`"));
        // A container that restarted has a new address; what answered at the old one was not it.
        if (info && info->state == QLatin1String("running") && !info->address.isEmpty() && info->address != address)
            return fail(ErrorCode::Failed,
                        QStringLiteral("the container restarted (now at %1, probed at %2)").arg(info->address, address),
                        {}, QStringLiteral("see its output in the deploy's health step or with `pando logs`"));
        return {};
    };
    const Plan &plan = run.plan;
    auto probed = probeUntilHealthy(run.container.address, plan.container.port, plan.healthPath,
                                    plan.healthTimeoutSeconds * 1000, plan.healthIntervalMs, run.cancel, alive);
    if (!probed) {
        Error error = probed.error();
        // The app's last words usually say why it did not come up; without them the error
        // above still says what failed.
        // The step's log keeps its last 200 lines; the error quotes the last 5.
        QStringList lines;
        discardResult(runtime.logs(containerId, 200, false, run.cancel,
                                   [&lines, &run](const adapters::LogLine &l) {
                                       lines << l.text;
                                       if (run.log)
                                           run.log->add(l.text, l.stderrStream);
                                   }),
                      "its last output only adds to the health error");
        if (!lines.isEmpty())
            error.message += QStringLiteral("; last output: ") +
                             lines.mid(std::max<qsizetype>(0, lines.size() - 5)).join(QStringLiteral(" | "));
        // Probed on a port the image does not expose: likely the reason, and cheap to fix.
        if (!run.portNote.isEmpty() && error.code == ErrorCode::Timeout)
            error.hint = run.portNote + QStringLiteral(": set run.port to the port the app listens on");
        return std::unexpected(error);
    }
    return StepEnd{
        QStringLiteral("GET %1 → %2 after %3 probe(s)").arg(plan.healthPath).arg(probed->status).arg(probed->attempts)};
}

Result<StepEnd> switchTraffic(DeployRun &run)
{
    Services &s = run.s;
    DeployRecord &deploy = run.deploy;
    auto route = s.router.ensure(deploy.app, run.app.routePort);
    if (!route)
        return std::unexpected(route.error());
    if (route->port != run.app.routePort)
        if (auto kept = AppRepository(s.db).setRoutePort(deploy.app, route->port, s.clock.nowMs()); !kept)
            // The router keeps the port it gave; the next deploy asks for it again.
            qWarning("deploy %s: recording route port %d failed: %s", qPrintable(deploy.id), route->port,
                     qPrintable(kept.error().text()));
    // The new addresses first: on an error nothing has moved and the old version serves on.
    const std::optional<adapters::Route> before = s.router.route(deploy.app);
    if (auto addressed = s.router.setAddresses(deploy.app, addressChange(run.spec, run.addresses)); !addressed)
        return std::unexpected(addressed.error());
    if (auto switched = s.router.setBackend(deploy.app, run.container.address, run.plan.container.port); !switched) {
        if (before)
            discardResult(
                s.router.setAddresses(deploy.app, adapters::AddressChange{before->addresses, false, before->signIn}),
                "the switch's error is the one to report");
        return std::unexpected(switched.error());
    }
    if (auto saved = AppRepository(s.db).setCurrentDeploy(deploy.app, deploy.id, s.clock.nowMs()); !saved) {
        // Put the old backend back so what serves matches what is recorded.
        if (!run.previous.isEmpty()) {
            auto old = DeployRepository(s.db).find(run.previous);
            if (old && !old->containerId.isEmpty())
                if (auto info = s.runtime.inspect(old->containerId))
                    if (auto back = s.router.setBackend(deploy.app, info->address, run.plan.container.port); !back)
                        qWarning("deploy %s: routing back to %s failed: %s", qPrintable(deploy.id),
                                 qPrintable(run.previous), qPrintable(back.error().text()));
        }
        return std::unexpected(saved.error());
    }
    // The runner records this step's end before the deploy says it succeeded, so that whoever
    // sees the deploy succeed finds every step it took ended.
    return StepEnd{.detail = route->url.toString(), .live = true};
}

Result<StepEnd> retire(DeployRun &run)
{
    if (run.s.retireGraceMs > 0 && !run.previous.isEmpty())
        QThread::msleep(quint64(run.s.retireGraceMs));
    retireOldVersions(run.s, run.deploy.app, run.deploy.id);
    return StepEnd{run.previous.isEmpty() ? QStringLiteral("nothing to retire")
                                          : QStringLiteral("retired ") + run.previous};
}

} // namespace deploysteps

void retireOldVersions(Services &s, const QString &app, const QString &keepDeploy)
{
    auto containers = s.runtime.containers(s.labels(app));
    if (containers) {
        for (const adapters::ContainerInfo &c : *containers) {
            if (c.labels.value(QLatin1String(adapters::LabelDeploy)) == keepDeploy || isServiceContainer(c))
                continue;
            discardResult(s.runtime.stop(c.id, 10), "removing it below stops it too; that error is the one to tell");
            if (auto removed = s.runtime.remove(c.id); !removed)
                qWarning("retire %s: removing container %s failed: %s", qPrintable(app), qPrintable(c.id),
                         qPrintable(removed.error().text()));
        }
    }
    // Keep the serving image and the one a rollback goes back to (Engine::rollback): the newest
    // before it that succeeded with another commit. A redeploy of the same commit does not push
    // the previous version's image out.
    auto history = DeployRepository(s.db).listForApp(app, 50);
    QSet<QString> keep{keepDeploy};
    if (history) {
        QString servingCommit;
        for (const DeployRecord &d : std::as_const(*history))
            if (d.id == keepDeploy)
                servingCommit = d.commit;
        for (const DeployRecord &d : std::as_const(*history)) {
            if (d.id != keepDeploy && d.status == DeployStatus::Succeeded && !d.imageId.isEmpty() &&
                d.commit != servingCommit) {
                keep.insert(d.id);
                break;
            }
        }
    }
    untagImages(s, app, [&keep](const QString &deployId) { return keep.contains(deployId); });
}

void removeDeployObjects(Services &s, const QString &app, const QString &deployId)
{
    auto containers = s.runtime.containers(s.labels(app, deployId));
    if (containers)
        for (const adapters::ContainerInfo &c : *containers)
            if (auto removed = s.runtime.remove(c.id); !removed)
                qWarning("deploy %s: removing container %s failed: %s", qPrintable(deployId), qPrintable(c.id),
                         qPrintable(removed.error().text()));
    // By its tag, which another install's image could carry: only if it is this install's.
    if (auto removed = s.runtime.removeOwnImage(imageTag(app, deployId), s.labels()); !removed)
        qWarning("deploy %s: removing its image failed: %s", qPrintable(deployId), qPrintable(removed.error().text()));
}

} // namespace pando::core
