#pragma once
// A stream socket to a local daemon (the Docker engine, incusd) that a caller drives itself with
// poll(): a connection an HTTP upgrade handed over.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QByteArrayView>
#include <QString>
#include <utility>

namespace pando::adapters::streamkit {

// A file descriptor closed with its owner.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    UniqueFd(UniqueFd &&other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept
    {
        if (this != &other)
            reset(std::exchange(other.m_fd, -1));
        return *this;
    }
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    ~UniqueFd() { reset(); }
    int get() const { return m_fd; }
    void reset(int fd = -1);

private:
    int m_fd = -1;
};

// Connects to the unix socket at path; Unavailable saying that whom ("the Docker engine")
// does not answer.
Result<UniqueFd> connectUnix(const QString &path, const QString &whom);
// Writes all of data, waiting while the socket is full; false once the peer is gone.
bool writeAll(int fd, QByteArrayView data);
// Reads an HTTP answer's head (up to its blank line) within timeoutMs or until cancel; what came
// after it is left in rest. Unavailable when the peer closes first or says nothing in time.
Result<QByteArray> readHead(int fd, int timeoutMs, const CancelToken &cancel, QByteArray *rest, const QString &where);

} // namespace pando::adapters::streamkit
