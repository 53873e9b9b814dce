#pragma once
// Runs a command in a running container through the Docker exec API (never the docker CLI):
// stdout goes to a callback as it arrives, stderr is kept (its tail) for error messages, and
// the exit code is read back when the stream ends.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <QMap>
#include <QStringList>
#include <functional>

namespace pando::adapters::docker {

struct ExecResult {
    int exitCode = -1;
    QByteArray output;    // stdout, when no sink took it
    QByteArray errorTail; // the last 4 KiB of stderr
};

// env is set for the command only (passwords go there, never into cmd). A sink returning false
// stops reading. timeoutMs 0: no limit.
Result<ExecResult> execIn(const dockerapi::DockerClient &client, const QString &container, const QStringList &cmd,
                          const QMap<QString, QString> &env, int timeoutMs, const CancelToken &cancel,
                          const std::function<bool(QByteArrayView)> &stdoutSink = {});

} // namespace pando::adapters::docker
