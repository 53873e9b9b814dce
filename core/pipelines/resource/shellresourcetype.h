#pragma once
// A resource type defined by three commands (check, in, out) that speak Concourse's protocol:
// a JSON request on stdin, a JSON answer on stdout, logs on stderr. The commands run through a
// TaskRunner: in a container of `image`, or on the host when image is empty.
//
//   check: stdin {"source", "version"}           → stdout [{version}, ...] oldest first
//   in:    stdin {"source", "version", "params"} → stdout {"version", "metadata": [{name, value}]}
//          argv gets the destination directory appended ($1); it is the work dir too
//   out:   stdin {"source", "params"}            → stdout as for in
//          argv gets the step's work directory appended ($1); it is the work dir too
//
// In a container the directory is mounted at /tmp/build/get (in) or /tmp/build/put (out), as
// Concourse does. Answers are validated strictly: invalid JSON, a wrong shape or non-string
// version values fail with Failed, naming the resource and quoting at most 200 bytes of the
// answer. Each stderr line goes to the LogSink. Default timeouts: check 60 s (checks run often
// and must not pile up), in and out 15 min (they move real data); see setTimeouts().
//
// Threading: as ResourceType — calls block, from any thread, concurrently if the runner allows.

#include "adapters/api/resourcetype.h"
#include "adapters/api/taskrunner.h"

#include <QStringList>

namespace pando::core::pipelines {

struct ShellCommands {
    QStringList check;
    QStringList in;
    QStringList out;
};

struct ShellTimeouts {
    int checkMs = 60'000;
    int inMs = 15 * 60'000;
    int outMs = 15 * 60'000;
};

class ShellResourceType final : public adapters::ResourceType {
public:
    ShellResourceType(QString name, adapters::TaskRunner &runner, QString image, ShellCommands commands);

    void setTimeouts(const ShellTimeouts &timeouts) { m_timeouts = timeouts; }
    ShellTimeouts timeouts() const { return m_timeouts; }
    // Extra environment for every command (never secrets in logs: only the LogSink sees stderr).
    void setEnvironment(const QMap<QString, QString> &env) { m_env = env; }
    // The largest answer accepted on stdout (default 1 MiB); more fails with TooLarge.
    void setMaxOutputBytes(qsizetype bytes) { m_maxOutput = bytes; }

    QString name() const override { return m_name; }
    Result<QList<adapters::Version>> check(const QJsonObject &source, const adapters::Version &from,
                                           const CancelToken &cancel, const adapters::LogSink &log) override;
    // in and out get the build's metadata as environment variables, over setEnvironment()'s.
    Result<adapters::VersionMetadata> in(const QJsonObject &source, const adapters::Version &version,
                                         const QJsonObject &params, const QString &dir,
                                         const adapters::BuildMetadata &build, const CancelToken &cancel,
                                         const adapters::LogSink &log) override;
    Result<adapters::VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                          const adapters::BuildMetadata &build, const CancelToken &cancel,
                                          const adapters::LogSink &log) override;

private:
    enum class Step { Check, In, Out };
    Result<QByteArray> invoke(Step step, const QJsonObject &request, const QString &dir,
                              const adapters::BuildMetadata &build, const CancelToken &cancel,
                              const adapters::LogSink &log);
    Result<adapters::VersionMetadata> parseVersionMetadata(Step step, const QByteArray &output) const;
    QString stepName(Step step) const;

    QString m_name;
    adapters::TaskRunner &m_runner;
    QString m_image;
    ShellCommands m_commands;
    ShellTimeouts m_timeouts;
    QMap<QString, QString> m_env;
    qsizetype m_maxOutput = 1 << 20;
};

} // namespace pando::core::pipelines
