#include "core/deploy/deploylogfeed.h"

#include <algorithm>

namespace pando::core {

DeployLogFeed::Joined DeployLogFeed::join(const QString &deployId, Deliver deliver)
{
    QMutexLocker lock(&m_mutex);
    Joined joined;
    joined.id = m_nextId++;
    m_watchers.insert(joined.id, Watcher{deployId, std::move(deliver)});
    const auto steps = m_unstored.constFind(deployId);
    if (steps == m_unstored.cend())
        return joined;
    QList<int> seqs = steps->keys();
    std::sort(seqs.begin(), seqs.end());
    for (int seq : seqs)
        for (const StepLogLine &line : steps->value(seq))
            joined.unstored.append(line);
    return joined;
}

void DeployLogFeed::leave(quint64 id)
{
    QMutexLocker lock(&m_mutex);
    m_watchers.remove(id);
}

void DeployLogFeed::printed(const QString &deployId, const QList<StepLogLine> &lines)
{
    if (lines.isEmpty())
        return;
    QMutexLocker lock(&m_mutex);
    QHash<int, std::deque<StepLogLine>> &steps = m_unstored[deployId];
    for (const StepLogLine &line : lines) {
        std::deque<StepLogLine> &held = steps[line.seq];
        held.push_back(line);
        if (qsizetype(held.size()) > MaxUnstored)
            held.pop_front();
    }
    for (const Watcher &watcher : std::as_const(m_watchers))
        if (watcher.deployId == deployId)
            watcher.deliver(lines);
}

void DeployLogFeed::stored(const QString &deployId, int seq, int throughLine)
{
    QMutexLocker lock(&m_mutex);
    const auto steps = m_unstored.find(deployId);
    if (steps == m_unstored.end())
        return;
    const auto held = steps->find(seq);
    if (held != steps->end()) {
        while (!held->empty() && held->front().line <= throughLine)
            held->pop_front();
        if (held->empty())
            steps->erase(held);
    }
    if (steps->isEmpty())
        m_unstored.erase(steps);
}

qsizetype DeployLogFeed::unstoredCount() const
{
    QMutexLocker lock(&m_mutex);
    qsizetype count = 0;
    for (const auto &steps : m_unstored)
        for (const auto &held : steps)
            count += qsizetype(held.size());
    return count;
}

} // namespace pando::core
