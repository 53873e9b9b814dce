#pragma once
// The Deploys tab's chart of deploy durations over time: DeployDurations plots a DeploysModel's
// finished deploys into two Qt Charts series (succeeded, failed) and fits the axes, replotting as
// the model changes. The QML declares the chart; the points and ranges are computed here.
//
// Threading: GUI-thread object.

#include "qml/deploys/deploysmodel.h"

#include <QObject>
#include <QPointer>
#include <QValueAxis>
#include <QtQml/qqmlregistration.h>

QT_BEGIN_NAMESPACE
class QXYSeries;
QT_END_NAMESPACE

namespace pando::desktop {

class DeployDurations : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // A DeploysModel, or any list model with its StateRole, CreatedMsRole and DurationMsRole.
    Q_PROPERTY(QAbstractItemModel *model READ model WRITE setModel NOTIFY modelChanged)
    // XY series (a LineSeries or ScatterSeries of a ChartView) sharing a date-time x axis and a
    // value y axis: the x axis gets the deploys' start times, the y axis their seconds.
    Q_PROPERTY(QObject *succeeded READ succeeded WRITE setSucceeded NOTIFY seriesChanged)
    Q_PROPERTY(QObject *failed READ failed WRITE setFailed NOTIFY seriesChanged)
    // How many deploys are plotted; the view hides the chart below two.
    Q_PROPERTY(int points READ points NOTIFY plotted)
    // The seconds (y) axis, made here rather than declared in QML: Qt 6.4's QtCharts type
    // information lists QValueAxis twice (as ValueAxis and as the old ValuesAxis), the second hides
    // the first, and qmllint cannot resolve a ValueAxis written in QML. The chart takes it over
    // when a series is given it (axisY).
    Q_PROPERTY(QValueAxis *secondsAxis READ secondsAxis CONSTANT)

public:
    explicit DeployDurations(QObject *parent = nullptr);

    QAbstractItemModel *model() const { return m_model; }
    void setModel(QAbstractItemModel *model);
    QObject *succeeded() const;
    void setSucceeded(QObject *series);
    QObject *failed() const;
    void setFailed(QObject *series);
    int points() const { return m_points; }
    QValueAxis *secondsAxis() const { return m_secondsAxis; }

    Q_INVOKABLE void replot();

Q_SIGNALS:
    void modelChanged();
    void seriesChanged();
    void plotted();

private:
    QPointer<QAbstractItemModel> m_model;
    QPointer<QXYSeries> m_succeeded;
    QPointer<QXYSeries> m_failed;
    int m_points = 0;
    QPointer<QValueAxis> m_secondsAxis;
};

} // namespace pando::desktop
