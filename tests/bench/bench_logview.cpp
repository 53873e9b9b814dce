// The Logs tab while an app writes 100,000 lines per second: LogView (the real QML, offscreen,
// software renderer, 1280×800) following its LogModel while a timer appends 1,000-line blocks of
// coloured output every 10 ms (a late tick catches up), against the same view redrawn as often with nothing appended,
// side by side in one run. Printed: the lines per second the view took in, frames drawn, each
// frame's time on the GUI thread (polish, sync and render: QQuickWindow::beforeFrameBegin to
// afterFrameEnd) at the median, 99th percentile and worst, and the longest the event loop was
// held up (how late a 10 ms tick came). Target: >= 100,000 lines/s with frames and stalls
// under 16 ms.
// PANDO_BENCH_QUICK=1: one short round, no verdict. PANDO_BENCH_SECONDS=N (default 5).

#include "app/desktop/logs/logmodel.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickView>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>
#include <algorithm>
#include <cstdio>

Q_IMPORT_QML_PLUGIN(Pando_LogsPlugin)

using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

constexpr int TickMs = 10;
constexpr int LinesPerTick = 1000; // 100,000 lines per second

struct Figures {
    qint64 lines = 0;
    double seconds = 0;
    QList<double> frameMs;
    double worstStallMs = 0;

    double percentile(double p) const
    {
        if (frameMs.isEmpty())
            return 0;
        QList<double> sorted = frameMs;
        std::sort(sorted.begin(), sorted.end());
        return sorted.at(std::min<qsizetype>(sorted.size() - 1, qsizetype(p * double(sorted.size()))));
    }
};

QByteArray block(qint64 first)
{
    QByteArray out;
    out.reserve(LinesPerTick * 90);
    for (qint64 i = first; i < first + LinesPerTick; ++i) {
        out += "\x1b[32m2026-11-29T12:00:00Z\x1b[0m worker-";
        out += QByteArray::number(i % 8);
        out += " \x1b[1mINFO\x1b[0m handled request ";
        out += QByteArray::number(i);
        out += " in 3 ms\n";
    }
    return out;
}

// Runs the view for `ms`, appending when `append` (else just asking for a frame each tick).
Figures run(QQuickView &view, LogModel *model, bool append, int ms)
{
    Figures f;
    QElapsedTimer frame;
    const auto begin = QObject::connect(
        &view, &QQuickWindow::beforeFrameBegin, &view, [&] { frame.start(); }, Qt::DirectConnection);
    const auto end = QObject::connect(
        &view, &QQuickWindow::afterFrameEnd, &view,
        [&] {
            if (frame.isValid())
                f.frameMs.append(double(frame.nsecsElapsed()) / 1e6);
        },
        Qt::DirectConnection);
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(TickMs);
    QObject::connect(&tick, &QTimer::timeout, &view, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (lastTick > 0)
            f.worstStallMs = std::max(f.worstStallMs, double(now - lastTick) / 1e6 - TickMs);
        lastTick = now;
        if (append) {
            // On schedule: a late tick catches up, as a log stream's backlog would arrive.
            const qint64 due = now * (1000 / TickMs) * LinesPerTick / 1'000'000'000;
            do {
                model->appendData(block(f.lines));
                f.lines += LinesPerTick;
            } while (f.lines < due);
        } else {
            view.update();
        }
    });
    tick.start();
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
    tick.stop();
    // Up to the last tick: the lines were offered on schedule until then, late ticks catching
    // up, so the rate says the view took them all in; whether it stayed responsive doing so is
    // what the frame times and stalls say.
    f.seconds = double(lastTick > 0 ? lastTick : clock.nsecsElapsed()) / 1e9;
    model->flush();
    QCoreApplication::processEvents();
    QObject::disconnect(begin);
    QObject::disconnect(end);
    return f;
}

void print(const char *what, const Figures &f)
{
    std::printf("%s: %.0f lines/s, %lld frames (%.0f/s), frame time median %.2f ms, p99 %.2f ms, worst %.2f ms; "
                "longest event-loop stall %.2f ms\n",
                what, double(f.lines) / f.seconds, qlonglong(f.frameMs.size()), double(f.frameMs.size()) / f.seconds,
                f.percentile(0.5), f.percentile(0.99), f.percentile(1.0), f.worstStallMs);
}

} // namespace

int main(int argc, char *argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    QQuickStyle::setStyle(u"Fusion"_s);
    QGuiApplication app(argc, argv);
    const bool quick = qEnvironmentVariableIsSet("PANDO_BENCH_QUICK");
    const int seconds = quick ? 1 : std::max(1, qEnvironmentVariableIntValue("PANDO_BENCH_SECONDS") ?: 5);

    QQuickView view;
    view.engine()->addImportPath(u"qrc:/qt/qml"_s);
    view.setInitialProperties({{u"session"_s, QVariant::fromValue<QObject *>(nullptr)}, {u"app"_s, QString()}});
    view.setResizeMode(QQuickView::SizeRootObjectToView);
    view.setSource(QUrl(u"qrc:/qt/qml/Pando/Logs/LogView.qml"_s));
    if (view.status() != QQuickView::Ready) {
        std::fprintf(stderr, "bench_logview: LogView did not load\n");
        return 1;
    }
    view.resize(1280, 800);
    view.show();
    auto *model = qobject_cast<LogModel *>(view.rootObject()->property("logModel").value<QObject *>());
    if (!model) {
        std::fprintf(stderr, "bench_logview: LogView has no logModel\n");
        return 1;
    }
    // A screenful first, so the idle round redraws real rows too.
    model->appendData(block(0));
    model->flush();
    QCoreApplication::processEvents();

    const Figures idle = run(view, model, false, seconds * 1000);
    const Figures busy = run(view, model, true, seconds * 1000);
    print("idle (redrawn each tick)", idle);
    print("appending", busy);
    const double rate = double(busy.lines) / busy.seconds;
    const double p99 = busy.percentile(0.99);
    std::printf("bench_logview: %.0f lines/s into the following view, frame time p99 %.2f ms (idle %.2f ms, ratio "
                "%.2f), longest stall %.2f ms, %lld lines held (target: >= 100000 lines/s, frames and stalls < 16 "
                "ms)\n",
                rate, p99, idle.percentile(0.99), p99 / std::max(0.01, idle.percentile(0.99)), busy.worstStallMs,
                qlonglong(model->rowCount()));
    if (quick) {
        std::printf("quick mode: no verdict\n");
        return 0;
    }
    return rate >= 100000 && p99 < 16 && busy.worstStallMs < 16 ? 0 : 1;
}
