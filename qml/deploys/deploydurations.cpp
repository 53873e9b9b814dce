#include "qml/deploys/deploydurations.h"

#include <QDateTime>
#include <QDateTimeAxis>
#include <QValueAxis>
#include <QXYSeries>
#include <algorithm>
#include <limits>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QXYSeries *asSeries(QObject *object)
{
    auto *series = qobject_cast<QXYSeries *>(object);
    if (object && !series)
        qWarning("DeployDurations: %s is not an XY series", object->metaObject()->className());
    return series;
}

} // namespace

DeployDurations::DeployDurations(QObject *parent) : QObject(parent), m_secondsAxis(new QValueAxis(this))
{
    m_secondsAxis->setMin(0);
    m_secondsAxis->setTickCount(4);
}

void DeployDurations::setModel(QAbstractItemModel *model)
{
    if (m_model == model)
        return;
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (m_model) {
        connect(m_model, &QAbstractItemModel::modelReset, this, &DeployDurations::replot);
        connect(m_model, &QAbstractItemModel::rowsInserted, this, &DeployDurations::replot);
        connect(m_model, &QAbstractItemModel::rowsRemoved, this, &DeployDurations::replot);
        connect(m_model, &QAbstractItemModel::dataChanged, this, &DeployDurations::replot);
    }
    Q_EMIT modelChanged();
    replot();
}

QObject *DeployDurations::succeeded() const
{
    return m_succeeded;
}

void DeployDurations::setSucceeded(QObject *series)
{
    m_succeeded = asSeries(series);
    Q_EMIT seriesChanged();
    replot();
}

QObject *DeployDurations::failed() const
{
    return m_failed;
}

void DeployDurations::setFailed(QObject *series)
{
    m_failed = asSeries(series);
    Q_EMIT seriesChanged();
    replot();
}

void DeployDurations::replot()
{
    QList<QPointF> ok, bad;
    if (m_model) {
        // The model is newest first; a chart reads left to right, oldest first.
        for (int row = m_model->rowCount() - 1; row >= 0; --row) {
            const QModelIndex index = m_model->index(row, 0);
            const auto state = DisplayState::Value(index.data(DeploysModel::StateRole).toInt());
            const qint64 created = index.data(DeploysModel::CreatedMsRole).toLongLong();
            const qint64 duration = index.data(DeploysModel::DurationMsRole).toLongLong();
            if (created <= 0 || duration < 0 || (state != DisplayState::Healthy && state != DisplayState::Failed))
                continue;
            (state == DisplayState::Healthy ? ok : bad).append(QPointF(qreal(created), qreal(duration) / 1000.0));
        }
    }
    if (m_succeeded)
        m_succeeded->replace(ok);
    if (m_failed)
        m_failed->replace(bad);

    const int points = int(ok.size() + bad.size());
    QXYSeries *anchor = m_succeeded ? m_succeeded.data() : m_failed.data();
    if (anchor && points > 0) {
        qreal minX = std::numeric_limits<qreal>::max(), maxX = 0, maxY = 0;
        for (const QList<QPointF> *list : {&ok, &bad})
            for (const QPointF &p : *list) {
                minX = std::min(minX, p.x());
                maxX = std::max(maxX, p.x());
                maxY = std::max(maxY, p.y());
            }
        // A margin on both sides so the first and last points are not cut in half.
        const qreal pad = std::max<qreal>((maxX - minX) * 0.05, 30'000);
        for (QAbstractAxis *axis : anchor->attachedAxes()) {
            if (auto *time = qobject_cast<QDateTimeAxis *>(axis)) {
                time->setRange(QDateTime::fromMSecsSinceEpoch(qint64(minX - pad)),
                               QDateTime::fromMSecsSinceEpoch(qint64(maxX + pad)));
                // Labels as fine as the span: seconds for a burst of deploys, days for months.
                const qreal span = maxX - minX + 2 * pad;
                time->setFormat(span < 600'000.0       ? u"hh:mm:ss"_s
                                : span < 86'400'000.0  ? u"hh:mm"_s
                                : span < 604'800'000.0 ? u"ddd hh:mm"_s
                                                       : u"d MMM"_s);
            } else if (auto *value = qobject_cast<QValueAxis *>(axis)) {
                const qreal top = std::max<qreal>(1.0, maxY * 1.15);
                value->setRange(0, top);
                value->setLabelFormat(top < 10 ? tr("%.1f s") : tr("%.0f s"));
            }
        }
    }
    m_points = points;
    Q_EMIT plotted();
}

} // namespace pando::desktop
