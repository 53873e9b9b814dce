#include "healthprobe.h"

#include <QElapsedTimer>
#include <QTcpSocket>
#include <QThread>

namespace pando::core {

Result<int> probeOnce(const QString &host, int port, const QString &path, int timeoutMs)
{
    // One deadline for the whole probe (connect, send, status line): a server that accepts and
    // then says nothing costs timeoutMs, not three times it.
    QElapsedTimer timer;
    timer.start();
    const auto left = [&] {
        return int(qMax<qint64>(1, timeoutMs - timer.elapsed()));
    };
    const auto noAnswer = [&] {
        return fail(ErrorCode::Timeout, QStringLiteral("no answer within %1 s").arg(timeoutMs / 1000.0, 0, 'g', 3));
    };
    // A health probe needs the status line only; the connection is closed right after.
    QTcpSocket socket;
    socket.connectToHost(host, quint16(port));
    if (!socket.waitForConnected(left())) {
        if (socket.error() == QAbstractSocket::SocketTimeoutError)
            return noAnswer();
        return fail(ErrorCode::Unavailable, socket.errorString().toLower());
    }
    const QByteArray request = "GET " + path.toUtf8() + " HTTP/1.1\r\nHost: " + host.toUtf8() + ':' +
                               QByteArray::number(port) + "\r\nUser-Agent: pando-health\r\nConnection: close\r\n\r\n";
    socket.write(request);
    if (!socket.waitForBytesWritten(left()))
        return socket.error() == QAbstractSocket::SocketTimeoutError
                   ? noAnswer()
                   : fail(ErrorCode::Unavailable, socket.errorString().toLower());
    QByteArray head;
    while (!head.contains('\n') && timer.elapsed() < timeoutMs) {
        if (!socket.waitForReadyRead(left()))
            break;
        head += socket.readAll();
    }
    const bool closed = socket.state() != QAbstractSocket::ConnectedState;
    socket.abort();
    // "HTTP/1.1 200 OK"
    const QList<QByteArray> parts = head.left(head.indexOf('\n')).trimmed().split(' ');
    bool ok = false;
    const int status = parts.size() >= 2 && parts[0].startsWith("HTTP/") ? parts[1].toInt(&ok) : 0;
    if (!ok) {
        if (head.isEmpty() && !closed)
            return noAnswer();
        return fail(ErrorCode::Failed, head.isEmpty() ? QStringLiteral("the connection closed without an answer")
                                                      : QStringLiteral("not an HTTP answer"));
    }
    return status;
}

Result<ProbeResult> probeUntilHealthy(const QString &host, int port, const QString &path, int timeoutMs, int intervalMs,
                                      const CancelToken &cancel, const std::function<Status()> &stillAlive)
{
    QElapsedTimer timer;
    timer.start();
    ProbeResult result;
    QString lastProblem;
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"));
        ++result.attempts;
        const int remaining = int(timeoutMs - timer.elapsed());
        auto status = probeOnce(host, port, path, qBound(50, remaining, 2000));
        if (status) {
            result.status = *status;
            if (*status >= 200 && *status < 400) {
                // An address freed by an exited container can be handed to another one at once,
                // and that one may answer: a healthy answer counts only if ours still runs.
                if (auto alive = stillAlive(); !alive)
                    return std::unexpected(alive.error());
                result.elapsedMs = timer.elapsed();
                return result;
            }
            lastProblem = QStringLiteral("GET %1 answered %2").arg(path).arg(*status);
        } else {
            lastProblem = QStringLiteral("GET %1: %2").arg(path, status.error().message);
        }
        if (auto alive = stillAlive(); !alive)
            return std::unexpected(alive.error());
        if (timer.elapsed() + intervalMs >= timeoutMs)
            return fail(ErrorCode::Timeout,
                        QStringLiteral("not healthy after %1 s (%2 probes); last: %3")
                            .arg(timeoutMs / 1000.0, 0, 'f', 1)
                            .arg(result.attempts)
                            .arg(lastProblem),
                        {},
                        QStringLiteral("check that the app listens on port %1 in its container and answers "
                                       "health.path")
                            .arg(port));
        QThread::msleep(quint64(intervalMs));
    }
}

} // namespace pando::core
