#pragma once
// A running deploy's output as it is printed, for whoever follows the deploy now (the API's
// WebSocket GET /api/v1/deploys/{id}/log/follow, and through it `pando deploy --wait` and the
// desktop). The store (deploy_step_logs) is written in batches and keeps only a step's first and
// last lines; the feed hands each line on the moment a step prints it.
//
// A follower joins first and reads the store after: join() answers the lines printed and not
// stored yet, and every line printed from then on goes to its callback. The store, that answer and
// the callback together hold every line kept, each with the same number (StepLogLine::line), so
// the follower sends each once by comparing numbers. Numbers count the lines a step printed: past
// a step's first StepLog::HeadLines, those the store leaves out make the numbers jump.
//
// Threading: every member may be called from any thread. deliver runs on the printing thread
// with the feed's lock held: it must only hand the lines to its own thread (a queued call) and
// must not call the feed.

#include "core/state/records.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>
#include <deque>
#include <functional>

namespace pando::core {

class DeployLogFeed {
public:
    using Deliver = std::function<void(const QList<StepLogLine> &lines)>;

    struct Joined {
        quint64 id = 0;              // for leave()
        QList<StepLogLine> unstored; // printed, not in the store yet; by step, then number
    };
    Joined join(const QString &deployId, Deliver deliver);
    void leave(quint64 id);

    // StepLog's side: lines a step printed (numbered), and that the store now holds the step's
    // lines up to a number (those left out before it are dropped too).
    void printed(const QString &deployId, const QList<StepLogLine> &lines);
    void stored(const QString &deployId, int seq, int throughLine);

    // How many lines wait for the store (for tests).
    qsizetype unstoredCount() const;

private:
    // At most this many unstored lines per step: more than StepLog keeps beyond its head, so
    // nothing the store will write is dropped here first.
    static constexpr qsizetype MaxUnstored = 5100;

    struct Watcher {
        QString deployId;
        Deliver deliver;
    };
    mutable QMutex m_mutex;
    quint64 m_nextId = 1;
    QHash<quint64, Watcher> m_watchers;
    QHash<QString, QHash<int, std::deque<StepLogLine>>> m_unstored; // deploy → step → lines
};

} // namespace pando::core
