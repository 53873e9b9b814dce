#include "core/deploy/steplog.h"
#include "core/deploy/deploylogfeed.h"
#include "core/state/repositories.h"

namespace pando::core {

namespace {
constexpr int BatchLines = 100;
constexpr qint64 BatchMs = 500;
} // namespace

StepLog::StepLog(Database &db, Clock &clock, DeployLogFeed *feed, QString deployId, int seq)
    : m_db(db), m_clock(clock), m_feed(feed), m_deployId(std::move(deployId)), m_seq(seq)
{
    m_sinceFlush.start();
}

StepLog::~StepLog()
{
    close();
}

void StepLog::close()
{
    if (!m_tail.empty()) {
        const int firstTail = m_tail.front().line;
        if (const int left = firstTail - HeadLines - 1; left > 0)
            m_held.append(
                {m_seq, firstTail - 1, m_clock.nowMs(), false, QStringLiteral("… %1 lines left out …").arg(left)});
        m_held.append(QList<StepLogLine>(m_tail.begin(), m_tail.end()));
        m_tail.clear();
    }
    flush();
    // Lines left out are never stored: the feed need not hold them for anyone.
    if (m_feed && m_added > m_stored)
        m_feed->stored(m_deployId, m_seq, m_added);
}

void StepLog::add(const QString &text, bool stderrStream)
{
    QString body = text;
    while (body.endsWith(QLatin1Char('\n')) || body.endsWith(QLatin1Char('\r')))
        body.chop(1);
    const qint64 now = m_clock.nowMs();
    QList<StepLogLine> printed;
    for (const QString &part : body.split(QLatin1Char('\n'))) {
        printed.append({m_seq, ++m_added, now, stderrStream, part});
        keep(printed.constLast());
    }
    if (m_feed)
        m_feed->printed(m_deployId, printed);
    if (m_held.size() >= BatchLines || m_sinceFlush.elapsed() >= BatchMs)
        flush();
}

void StepLog::keep(const StepLogLine &line)
{
    if (line.line <= HeadLines) {
        m_held.append(line);
        return;
    }
    m_tail.push_back(line);
    if (m_tail.size() > size_t(MaxLines - HeadLines - 1))
        m_tail.pop_front();
}

void StepLog::flush()
{
    m_sinceFlush.restart();
    if (m_held.isEmpty())
        return;
    if (auto written = DeployRepository(m_db).appendStepLog(m_deployId, m_held); !written)
        qWarning("deploy %s: keeping step %d's output failed: %s", qPrintable(m_deployId), m_seq,
                 qPrintable(written.error().text()));
    m_stored = m_held.constLast().line;
    m_held.clear();
    if (m_feed)
        m_feed->stored(m_deployId, m_seq, m_stored);
}

} // namespace pando::core
