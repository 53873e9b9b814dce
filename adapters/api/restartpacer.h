#pragma once
// How soon a process Pando supervises (the edge, cloudflared) is started again when it keeps
// failing: at once the first time, then after 1, 2, 4 ... s up to a ceiling, so a process that
// cannot run (a refused token, a port someone else holds) is not started on every pass of the
// reconciler; one that ran long enough is forgiven.
//
// Threading: not thread-safe; its owner's lock guards it.

#include <QElapsedTimer>
#include <QString>

namespace pando::adapters {

class RestartPacer {
public:
    struct Timing {
        qint64 firstDelayMs = 1000; // the wait after the second failure in a row
        qint64 maxDelayMs = 60000;
        qint64 stableMs = 60000; // a process that ran this long ended by chance, not by its nature
    };
    RestartPacer() : RestartPacer(Timing{}) {}
    explicit RestartPacer(Timing timing) : m_timing(timing) {}

    // Whether a start may be tried now.
    bool due() const { return remainingMs() == 0; }
    // How long until it may (0: now).
    qint64 remainingMs() const;
    // A start was tried and the process runs (ok), or it did not start.
    void tried(bool ok);
    // What was started is gone (called as often as its absence is seen; counts once per start).
    void ended();
    // "Pando starts it again in N s (after K failures in a row)" while a start waits, else empty.
    QString waitText() const;

private:
    void failed();

    Timing m_timing;
    QElapsedTimer m_since; // since the last start tried, or the last failure seen
    QElapsedTimer m_runningSince;
    qint64 m_delayMs = 0;
    int m_failures = 0;
};

} // namespace pando::adapters
