#pragma once
// What a caller feeds a running command (adapters::ExecInput), queued for the loop that drives
// the command's streams: whoever feeds it may be on any thread, the loop takes what is pending
// each time the queue wakes it (a byte on a pipe it polls).

#include "adapters/api/error.h"
#include "adapters/api/runtime.h"

#include <QMutex>
#include <memory>
#include <optional>
#include <utility>

namespace pando::adapters::streamkit {

class ExecQueue final : public ExecInput {
public:
    // What the loop does next: input to write, whether the input then ends, a new terminal size.
    struct Pending {
        QByteArray data;
        bool closeInput = false;
        std::optional<std::pair<int, int>> size; // columns, rows
    };

    // wakeFd: the write end of the loop's pipe (non-blocking), valid until end().
    explicit ExecQueue(int wakeFd) : m_wake(wakeFd) {}
    void write(const QByteArray &data) override;
    void closeInput() override;
    void resize(int columns, int rows) override;
    // The loop's side. closeInput is reported once.
    Pending take();
    // The command ended: what is fed from now on goes nowhere, and the pipe is not touched.
    void end();

private:
    void wake() const;
    int m_wake;
    QMutex m_mutex;
    QByteArray m_pending;
    bool m_inputClosed = false;
    bool m_closeReported = false;
    std::optional<std::pair<int, int>> m_size;
    bool m_ended = false;
};

// A pipe the loop polls and the queue wakes, both ends closed with it.
struct WakePipe {
    int read = -1;
    int write = -1;
    WakePipe(const WakePipe &) = delete;
    WakePipe &operator=(const WakePipe &) = delete;
    WakePipe() = default;
    ~WakePipe();
    static Result<std::unique_ptr<WakePipe>> make();
    void drain() const;
};

} // namespace pando::adapters::streamkit
