#pragma once
// The host task runner: runs a task's argv directly on this machine, in its own process group,
// with a minimal environment (PATH, HOME=workDir and the task's own variables, never pandod's),
// and streams its raw output to the caller. For trusted pipelines on a single-user install and
// for resource scripts in tests; isolation comes from the Docker runner.
//
// Mounts: on the host, inputs are already directories, so each Mount becomes a symlink at
// Mount.path (relative to workDir, or an absolute path inside workDir) pointing at hostPath,
// created before the run and removed after it. readOnly cannot be enforced on the host.
//
// Exit codes: a command ended by a signal reports 128 + the signal number, as shells do.
//
// Threading: run() blocks the calling thread, polling the process's pipes itself (no event
// loop), so it may be called from any thread, concurrently.

#include "adapters/api/taskrunner.h"

namespace pando::adapters::host {

class HostTaskRunner final : public TaskRunner {
public:
    HostTaskRunner();

    // The PATH tasks get unless their env sets one.
    static QString defaultPath();
    // How long a task has between SIGTERM and SIGKILL after a timeout or a cancel (default 2 s).
    void setKillGraceMs(int ms) { m_killGraceMs = ms; }

    QString kind() const override { return QStringLiteral("host"); }
    Result<QString> imageDigest(const QString &image) override;
    Result<int> removeLeftovers(const QMap<QString, QString> &) override { return 0; }
    Result<TaskResult> run(const TaskSpec &spec, const CancelToken &cancel,
                           const std::function<void(const OutputChunk &)> &output) override;

private:
    int m_killGraceMs = 2000;
};

} // namespace pando::adapters::host
