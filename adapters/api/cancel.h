#pragma once
// A cancellation token shared between whoever starts long work and the I/O loops doing it.
// Copies share one flag; cancel() may be called from any thread.

#include <atomic>
#include <memory>

namespace pando {

class CancelToken {
public:
    CancelToken() : m_flag(std::make_shared<std::atomic_bool>(false)) {}
    void cancel() const { m_flag->store(true); }
    bool isCancelled() const { return m_flag->load(); }

private:
    std::shared_ptr<std::atomic_bool> m_flag;
};

} // namespace pando
