#pragma once
// What the pipeline trust tests share: the engine with the pipeline runner as pandod wires it
// (tasks in Docker, checks driven by the test), a pipeline set by nobody in particular, a job run
// to its end, and what a run printed.

#include "app/wiring/pipelinewiring.h"
#include "core/pipelines/runview/runview.h"
#include "core/pipelines/service/pipelineservice.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

namespace pando::test {

inline const QByteArray Image =
    "image_resource: {type: registry-image, source: {repository: pando/busybox, tag: latest}}";

inline QByteArray oneJob(const QByteArray &job, const QByteArray &plan)
{
    return "jobs:\n  - name: " + job + "\n    plan:\n" + plan;
}

// The base of a test class: its initTestCase calls startEngine(), which skips without Docker or
// git and fails the test case when the engine does not start.
class PipelineTrustFixture : public QObject {
protected:
    void startEngine()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
        PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
        QVERIFY(DockerHarness::ensureBaseImage());
        QVERIFY(m_tmp.isValid());
        m_fx = std::make_unique<EngineFixture>();
        QVERIFY(m_fx->start());
        wiring::PipelineWiringOptions options;
        options.service.triggerIntervalMs = 60'000; // the test drives checks itself
        auto installed = wiring::installPipelines(m_fx->engine(), options);
        QVERIFY2(installed, qPrintable(installed ? QString() : installed.error().text()));
    }
    void stopEngine()
    {
        if (m_fx)
            m_fx->stop();
        m_fx.reset();
    }

    core::pipelines::PipelineService &service() { return *m_fx->engine().pipelines(); }

    void setPipeline(const QString &name, const QByteArray &config, const QByteArray &vars = {})
    {
        auto set = service().setPipeline(name, config, vars, false, core::Actor{});
        QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    }

    // The job's run once it has ended (or as it stands after timeoutMs); an errored record saying
    // why when the trigger was refused.
    core::RunRecord runJob(const QString &pipeline, const QString &job, const core::Actor &actor = core::Actor{},
                           int timeoutMs = 60000)
    {
        auto triggered = service().triggerJob(pipeline, job, actor);
        if (!triggered) {
            core::RunRecord none;
            none.status = core::RunStatus::Errored;
            none.error = QStringLiteral("not triggered: ") + triggered.error().text();
            return none;
        }
        QElapsedTimer timer;
        timer.start();
        core::RunRecord run = triggered->run;
        while (timer.elapsed() < timeoutMs) {
            if (auto tree = service().runTree(run.id)) {
                run = tree->run;
                if (run.status != core::RunStatus::Queued && run.status != core::RunStatus::Running)
                    return run;
            }
            QTest::qWait(50);
        }
        return run;
    }

    QStringList outputOf(const QString &runId)
    {
        auto events = service().runEvents(runId, 0, 10000);
        return events ? core::pipelines::outputOf(*events) : QStringList();
    }

    std::unique_ptr<EngineFixture> m_fx;
    QTemporaryDir m_tmp;
};

} // namespace pando::test
