#include "adapters/kit/streamkit/execqueue.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::streamkit {

void ExecQueue::write(const QByteArray &data)
{
    QMutexLocker lock(&m_mutex);
    if (m_ended || m_inputClosed)
        return;
    m_pending += data;
    wake();
}

void ExecQueue::closeInput()
{
    QMutexLocker lock(&m_mutex);
    if (m_ended || m_inputClosed)
        return;
    m_inputClosed = true;
    wake();
}

void ExecQueue::resize(int columns, int rows)
{
    QMutexLocker lock(&m_mutex);
    if (m_ended || columns <= 0 || rows <= 0)
        return;
    m_size = std::pair{columns, rows};
    wake();
}

ExecQueue::Pending ExecQueue::take()
{
    QMutexLocker lock(&m_mutex);
    Pending next;
    next.data = std::exchange(m_pending, {});
    next.closeInput = m_inputClosed && !m_closeReported;
    m_closeReported = m_inputClosed;
    next.size = std::exchange(m_size, std::nullopt);
    return next;
}

void ExecQueue::end()
{
    QMutexLocker lock(&m_mutex);
    m_ended = true;
    m_pending.clear();
}

void ExecQueue::wake() const
{
    const char byte = 1;
    (void)!::write(m_wake, &byte, 1);
}

WakePipe::~WakePipe()
{
    if (read >= 0)
        ::close(read);
    if (write >= 0)
        ::close(write);
}

Result<std::unique_ptr<WakePipe>> WakePipe::make()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return fail(ErrorCode::Internal, u"no pipe: %1"_s.arg(qt_error_string(errno)));
    auto pipe = std::make_unique<WakePipe>();
    pipe->read = fds[0];
    pipe->write = fds[1];
    return pipe;
}

void WakePipe::drain() const
{
    char buffer[64];
    while (::read(read, buffer, sizeof(buffer)) > 0) {
    }
}

} // namespace pando::adapters::streamkit
