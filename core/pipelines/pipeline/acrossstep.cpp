// The across modifier: a step run once per combination of its vars' values, each combination
// read again from the step as written with those values as ((.:var)) (its attempts, timeout and
// hooks with it), under one step of the run's tree. As many run at once as the vars' max_in_flight allow; fail_fast
// stops the rest after the first that fails.
#include "core/pipelines/pipeline/execution.h"

namespace pando::core::pipelines::detail {

namespace {

using core::detail::DocNode;

// Past this many combinations a typo (a list of lists multiplied out) is more likely than a plan.
constexpr qsizetype MaxCombinations = 1000;

} // namespace

Outcome Execution::runAcross(const Step &step, const QString &parentId, const CancelToken &cancel)
{
    RunStepRecord rec = begin(step, parentId, 1);
    QStringList names;
    for (const AcrossVar &var : step.across)
        names << var.name;
    rec.kind = QStringLiteral("across");
    rec.name = QStringLiteral("%1 across %2")
                   .arg(step.name.isEmpty() ? stepKindName(step.kind) : step.name, names.join(QStringLiteral(", ")));
    m_log.step(rec);

    // Each var's values: a list, or the list a load_var step loaded.
    DocNode locals;
    {
        QMutexLocker lock(&m_mutex);
        locals = m_locals;
    }
    std::vector<std::vector<DocNode>> values;
    qsizetype combinations = 1;
    int limit = 1;
    for (size_t i = 0; i < step.across.size(); ++i) {
        const AcrossVar &var = step.across[i];
        const QString where = QStringLiteral("%1.across[%2].values").arg(step.location).arg(i);
        DocNode list = *var.values;
        if (list.kind == DocNode::Kind::Scalar) {
            InterpolationSources sources;
            sources.locals = &locals;
            if (auto filled = interpolate(list, sources, where); !filled)
                return errored(rec, filled.error());
        }
        if (list.kind != DocNode::Kind::Sequence)
            return errored(rec, Error{ErrorCode::Invalid,
                                      QStringLiteral("the values of across var %1 are not a list").arg(var.name), where,
                                      QStringLiteral("load a list (format: json or yaml), or write the values out")});
        combinations *= qsizetype(list.items.size());
        if (combinations > MaxCombinations)
            return errored(rec, Error{ErrorCode::Invalid,
                                      QStringLiteral("across makes more than %1 combinations").arg(MaxCombinations),
                                      step.location + QStringLiteral(".across"),
                                      QStringLiteral("split the step, or take fewer values")});
        limit *= var.maxInFlight == 0 ? qMax(1, int(list.items.size())) : var.maxInFlight;
        values.push_back(std::move(list.items));
    }

    LinkedCancel group(cancel, 0);
    std::vector<Outcome> outcomes(size_t(combinations), Outcome::Succeeded);
    std::atomic_bool failedFast = false;
    {
        ParallelGroup branches(m_deps.parallelPool != nullptr ? *m_deps.parallelPool : ParallelPool::shared(),
                               qMin(limit, int(MaxCombinations)));
        for (qsizetype index = 0; index < combinations; ++index) {
            if (failedFast)
                break; // fail_fast: no new combination starts
            // The combination's values: the last var changes fastest, as Concourse orders them.
            DocNode these;
            these.kind = DocNode::Kind::Map;
            qsizetype rest = index;
            for (size_t v = step.across.size(); v-- > 0;) {
                const auto count = qsizetype(values[v].size());
                these.entries.emplace(these.entries.begin(), step.across[v].name, values[v][size_t(rest % count)]);
                rest /= count;
            }
            auto once = acrossIteration(step, these, int(index));
            if (!once) {
                outcomes[size_t(index)] = errored(rec, once.error());
                return outcomes[size_t(index)];
            }
            branches.run([this, &step, &rec, &outcomes, &group, &failedFast, index, once = std::move(*once)] {
                const Outcome o = runStep(once, rec.stepId, group.token());
                outcomes[size_t(index)] = o;
                if (step.acrossFailFast && o != Outcome::Succeeded && o != Outcome::Aborted) {
                    failedFast = true;
                    group.cancelAll();
                }
            });
        }
    } // every combination started has ended
    QList<Outcome> combined;
    for (Outcome o : outcomes) {
        // As in_parallel's fail_fast: what it cut short made the step fail, not abort.
        if (failedFast && !cancel.isCancelled() && o == Outcome::Aborted)
            continue;
        combined << o;
    }
    Outcome outcome = combineParallel(combined);
    if (cancel.isCancelled() && outcome != Outcome::Succeeded)
        outcome = Outcome::Aborted;
    // The step's own modifiers and hooks went with each combination.
    return finish(rec, outcome, {});
}

} // namespace pando::core::pipelines::detail
