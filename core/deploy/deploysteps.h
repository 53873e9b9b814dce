#pragma once
// The steps of a deploy, as a table: each step is a function of one responsibility that takes
// the deploy's DeployRun, does its part and hands on what later steps need (the checkout, the
// plan, the container). The runner (deployrunner.cpp) walks the table and owns what every step
// shares: the step records, the cancellation checks between steps, the approval hold and the
// failure path. A step is therefore readable on its own, and testable on its own with a
// DeployRun built by hand (tests/core/deploy).
//
// Threading: the steps block; they run on the deploy's worker thread, one after the other.

#include "core/deploy/secretinjection.h"
#include "core/deploy/services.h"
#include "core/detection/detection.h"
#include "core/services/appservices.h"
#include "core/spec/appspec.h"
#include "core/state/records.h"

#include <QLatin1String>
#include <QMutex>
#include <array>
#include <memory>
#include <mutex>

namespace pando::core {

// One deploy on its way through the steps: what the runner read before the first step, and
// what each step hands on to the next.
class StepLog;

struct DeployRun {
    DeployRun(Services &services, DeployRecord record, AppRecord appRecord, const CancelToken &token);
    ~DeployRun(); // removes the checkout
    DeployRun(const DeployRun &) = delete;
    DeployRun &operator=(const DeployRun &) = delete;

    // Saves the deploy's progress (commit, image, container); a failure is logged, not fatal:
    // the steps' own records and the runtime's labels are what recovery goes by.
    void save();

    Services &s;
    const CancelToken &cancel;
    DeployRecord deploy;
    AppRecord app;          // the app as the deploy began
    QString previous;       // the deploy serving when this one began (empty: the first)
    bool resumed = false;   // queued again after its approval: the steps before it ran already
    int seq = 0;            // the next step's number
    StepLog *log = nullptr; // the running step's output, while a recorded step runs

    // Handed on from step to step.
    AppSpec spec;                       // fetch: the spec as it was when the deploy was asked for
    QString ref;                        // fetch: the ref asked for
    QString checkoutDir;                // fetch: the tree, removed when the run ends (needed until the build)
    Detection detection;                // detect
    Plan plan;                          // plan
    QList<adapters::Address> addresses; // plan: where the edge serves the app (core/deploy/appaddresses.h)
    SecretInjection secrets;            // plan: opened there, wiped once the container exists
    QString portNote;                   // build: what the image exposes, when it is not run.port
    ProvisionedServices provisioned;    // services
    adapters::ContainerInfo container;  // start
    // Held from the switch to the end: the switch and the retire never interleave with the
    // reconciler's or a removal's actions on the app.
    std::shared_ptr<QMutex> appMutex;
    std::unique_lock<QMutex> appLock;
};

// How a step ended when it did not fail.
struct StepEnd {
    QString detail;    // recorded with the step
    bool hold = false; // the deploy now waits (for approval): the runner stops, nothing failed
    bool live = false; // the new version serves (at `detail`): once the step is recorded, the
                       // runner marks the deploy succeeded
};

enum class Recording {
    Always,        // a step record from its start to its end
    QuietOnResume, // as Always, but on a deploy resumed after its approval (the step ran and was
                   // recorded before the deploy waited) only recorded if it fails
    BySelf,        // the step records itself (approval: a step only when it asks for sign-off)
};

struct DeployStep {
    QLatin1String name; // the step's record, as people and the API see it
    Recording recording;
    Result<StepEnd> (*run)(DeployRun &run);
    // Whether the step applies to this deploy (nullptr: always); a step that does not is not
    // recorded at all.
    bool (*applies)(const DeployRun &run) = nullptr;
    bool checkCancelAfter = false; // a cancelled deploy stops after this step
    bool locksApp = false;         // from this step to the end the app's lock is held
};

namespace deploysteps {

// Parses the deploy's spec and checks out the commit it names (an image source: writes the one-line
// Dockerfile the build step builds FROM the image).
Result<StepEnd> fetch(DeployRun &run);
// Finds how to build the checkout (the Dockerfile and its context).
Result<StepEnd> detect(DeployRun &run);
// Plans the container against the host policy, the runtime's capabilities and its room, and
// opens the app's secrets.
Result<StepEnd> plan(DeployRun &run);
// Asks for sign-off when the host policy wants it (the deploy holds), or, on a deploy resumed
// after its approval, uses that approval once.
Result<StepEnd> approval(DeployRun &run);
// Builds the image, or reuses the one built from the same commit with the same settings. An
// image source is built FROM the image (pulled first when its source.pull says so).
Result<StepEnd> build(DeployRun &run);
// Whether the app deploys from a repository (detect applies), not from an image.
bool hasRepository(const DeployRun &run);
// Provisions the app's backing services; applies only to a spec with services.
Result<StepEnd> services(DeployRun &run);
bool hasServices(const DeployRun &run);
// Starts the new version's container, with its secrets and services, and finds its address.
Result<StepEnd> start(DeployRun &run);
// Probes the new container until it answers healthy (its last output says why when not).
Result<StepEnd> health(DeployRun &run);
// Routes the app to the new container and records it as the app's current deploy.
Result<StepEnd> switchTraffic(DeployRun &run);
// Lets the old version finish what it serves, then removes it.
Result<StepEnd> retire(DeployRun &run);

} // namespace deploysteps

// The deploy pipeline, in order.
inline constexpr std::array<DeployStep, 10> DeploySteps{{
    {.name = QLatin1String("fetch"),
     .recording = Recording::QuietOnResume,
     .run = deploysteps::fetch,
     .checkCancelAfter = true},
    {.name = QLatin1String("detect"),
     .recording = Recording::QuietOnResume,
     .run = deploysteps::detect,
     .applies = deploysteps::hasRepository},
    {.name = QLatin1String("plan"),
     .recording = Recording::QuietOnResume,
     .run = deploysteps::plan,
     .checkCancelAfter = true},
    // The host policy may hold the deploy here, with the plan shown to approvers.
    {.name = QLatin1String("approval"), .recording = Recording::BySelf, .run = deploysteps::approval},
    {.name = QLatin1String("build"),
     .recording = Recording::Always,
     .run = deploysteps::build,
     .checkCancelAfter = true},
    // The app's backing services run and accept connections before it starts.
    {.name = QLatin1String("services"),
     .recording = Recording::Always,
     .run = deploysteps::services,
     .applies = deploysteps::hasServices,
     .checkCancelAfter = true},
    {.name = QLatin1String("start"), .recording = Recording::Always, .run = deploysteps::start},
    {.name = QLatin1String("health"),
     .recording = Recording::Always,
     .run = deploysteps::health,
     .checkCancelAfter = true},
    // From here on the new version serves.
    {.name = QLatin1String("switch"),
     .recording = Recording::Always,
     .run = deploysteps::switchTraffic,
     .locksApp = true},
    {.name = QLatin1String("retire"), .recording = Recording::Always, .run = deploysteps::retire},
}};

consteval bool everyStepComplete()
{
    for (const DeployStep &step : DeploySteps)
        if (step.name.isEmpty() || step.run == nullptr)
            return false;
    return true;
}
// GCC cannot compare a function's address with null in a constant expression under ASan.
#ifndef __SANITIZE_ADDRESS__
static_assert(everyStepComplete(), "every deploy step needs a name and a function");
#endif

// Stops and removes the app's containers except keepDeploy's, and its images except
// keepDeploy's and the one before it (so a redeploy of the previous version is quick).
void retireOldVersions(Services &s, const QString &app, const QString &keepDeploy);
// Removes whatever deployId created on the runtime (its container and image).
void removeDeployObjects(Services &s, const QString &app, const QString &deployId);

} // namespace pando::core
