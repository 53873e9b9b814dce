#pragma once
// A deploy step's output, kept with the deploy (deploy_step_logs) so a failure can be read after
// the fact and while it happens: the build's lines, the last words of a container that did not
// come up. Lines are written in batches (every 100 lines or half a second, and at the end), so a
// reader polling GET /api/v1/deploys/{id}/log sees a running build grow.
//
// A step keeps at most MaxLines: the first HeadLines as they come, then the last lines, with one
// line saying how many were left out between them: a build's end (its error) is never lost. Lines
// are numbered in the order printed, so past the head the numbers jump where lines were left out
// (the line saying so takes the number before the tail's first). Every line printed, kept or not,
// goes to the DeployLogFeed at once, for those following the deploy live.
// ANSI escapes and carriage-return redraws are kept as they came; readers render or strip them.
//
// Threading: one StepLog per step, used on the thread running the deploy.

#include "core/common/clock.h"
#include "core/state/records.h"

#include <QElapsedTimer>
#include <QList>
#include <deque>

namespace pando::core {

class Database;
class DeployLogFeed;

class StepLog {
public:
    static constexpr int MaxLines = 5000;
    static constexpr int HeadLines = 1000;

    // feed may be null (nobody follows deploys live).
    StepLog(Database &db, Clock &clock, DeployLogFeed *feed, QString deployId, int seq);
    ~StepLog(); // close()
    // Writes what is left (the kept tail after a line saying how many were left out); before
    // the step's end is recorded, so whoever sees it ended reads all of its output.
    void close();
    StepLog(const StepLog &) = delete;
    StepLog &operator=(const StepLog &) = delete;

    // One line (a trailing newline is dropped; several lines are split).
    void add(const QString &text, bool stderrStream = false);
    // Writes what is held now.
    void flush();

private:
    void keep(const StepLogLine &line);

    Database &m_db;
    Clock &m_clock;
    DeployLogFeed *m_feed = nullptr;
    QString m_deployId;
    int m_seq = 0;
    int m_added = 0;                // lines given, kept or not: the last one's number
    int m_stored = 0;               // the store holds the lines up to this number
    QList<StepLogLine> m_held;      // not written yet
    std::deque<StepLogLine> m_tail; // past HeadLines: the last ones, written at close()
    QElapsedTimer m_sinceFlush;
};

} // namespace pando::core
