#include "app/desktop/shell/palettesearch.h"
#include "qml/apps/appsmodel.h"
#include "qml/runs/pipelinesmodel.h"

#include <QVariantMap>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

struct Match {
    int score = 0;
    int order = 0; // views, then apps, then pipelines, then actions, at equal scores
    QVariantMap entry;
};

} // namespace

PaletteSearch::PaletteSearch(AppsModel *apps, PipelinesModel *pipelines, QObject *parent)
    : QObject(parent), m_apps(apps), m_pipelines(pipelines)
{}

int PaletteSearch::score(const QString &query, const QString &text)
{
    const QString q = query.trimmed().toCaseFolded();
    if (q.isEmpty())
        return 0;
    const QString t = text.toCaseFolded();
    if (t.startsWith(q))
        return 0;
    if (const qsizetype at = t.indexOf(q); at >= 0)
        return 1 + int(at);
    // The letters in order, each gap between them a point worse.
    qsizetype from = 0;
    int gaps = 0;
    for (const QChar c : q) {
        const qsizetype at = t.indexOf(c, from);
        if (at < 0)
            return -1;
        gaps += int(at - from);
        from = at + 1;
    }
    return 1000 + gaps;
}

QVariantList PaletteSearch::entries(const QString &query) const
{
    QList<Match> matches;
    const auto add = [&](int order, const QString &kind, const QVariant &key, const QString &label, const QString &hint,
                         int state) {
        const int s = score(query, label);
        if (s < 0)
            return;
        matches.append(Match{
            s, order,
            QVariantMap{
                {u"kind"_s, kind}, {u"key"_s, key}, {u"label"_s, label}, {u"hint"_s, hint}, {u"state"_s, state}}});
    };
    const QStringList views{tr("Apps"),    tr("Pipelines"),   tr("Approvals"), tr("Activity"),
                            tr("Sources"), tr("Connections"), tr("Settings")};
    for (int i = 0; i < views.size(); ++i)
        add(0, u"view"_s, i, views.at(i), tr("view"), -1);
    for (int row = 0; row < m_apps->rowCount(); ++row) {
        const QModelIndex i = m_apps->index(row);
        add(1, u"app"_s, i.data(AppsModel::NameRole), i.data(AppsModel::NameRole).toString(),
            tr("app · %1").arg(i.data(AppsModel::StatusTextRole).toString()), i.data(AppsModel::StateRole).toInt());
    }
    for (int row = 0; row < m_pipelines->rowCount(); ++row) {
        const QModelIndex i = m_pipelines->index(row);
        add(2, u"pipeline"_s, i.data(PipelinesModel::NameRole), i.data(PipelinesModel::NameRole).toString(),
            tr("pipeline · %1").arg(i.data(PipelinesModel::LastRunTextRole).toString()),
            i.data(PipelinesModel::LastRunStateRole).toInt());
    }
    add(3, u"action"_s, u"new-app"_s, tr("New app…"), tr("action · Ctrl+N"), -1);
    add(3, u"action"_s, u"refresh"_s, tr("Refresh"), tr("action · Ctrl+R"), -1);
    if (const QString selected = m_apps->selected().value(u"name"_s).toString(); !selected.isEmpty())
        add(3, u"action"_s, u"deploy"_s, tr("Deploy %1").arg(selected), tr("action · Ctrl+D"), -1);

    std::stable_sort(matches.begin(), matches.end(), [](const Match &a, const Match &b) {
        return std::tie(a.score, a.order) < std::tie(b.score, b.order);
    });
    QVariantList out;
    for (qsizetype i = 0; i < matches.size() && i < MaxEntries; ++i)
        out.append(matches.at(i).entry);
    return out;
}

} // namespace pando::desktop
