#include "app/desktop/shell/desktoptrace.h"
#include "app/desktop/shell/desktopstate.h"

#include <QElapsedTimer>
#include <QFile>
#include <QMetaEnum>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTimer>
#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

void say(const QByteArray &line)
{
    std::fprintf(stderr, "pando-desktop: %s\n", line.constData());
    std::fflush(stderr);
}

// The CPU time the calling thread used so far: a frame's own cost, which waiting for a CPU (other
// processes on a busy machine) does not inflate the way it does the wall clock.
qint64 threadCpuNsecs()
{
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return qint64(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

QByteArray milliseconds(qint64 nsecs)
{
    return QByteArray::number(double(nsecs) / 1e6, 'f', 1);
}

// This process's resident set in MB, as /proc says (the figure bench_desktop compares).
QByteArray residentMb()
{
    QFile status(u"/proc/self/status"_s);
    if (!status.open(QIODevice::ReadOnly))
        return "?";
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return QByteArray::number(line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0, 'f', 1);
    return "?";
}

// The walk PANDO_DESKTOP_TRACE=walk takes once the start settled: view switches, then a scroll
// through the list that has the keyboard. One step at a time, each timed to its frame.
class Walk : public QObject {
public:
    explicit Walk(QQuickWindow *window) : QObject(window), m_window(window) {}

    void start()
    {
        say("settled, resident " + residentMb() + " MB");
        nextSwitch();
    }

private:
    // Pages the way the palette's "view" entries do (Main.qml's go()), the window's own path.
    static constexpr std::array Tour{DesktopState::View::Pipelines, DesktopState::View::Approvals,
                                     DesktopState::View::Apps};
    static constexpr int Switches = 3 * int(Tour.size());
    // Pixels a frame: 6,000 px/s at 60 frames a second, a brisk flick (about two rows a frame).
    static constexpr qreal ScrollStep = 100;

    // Makes `change`, then gives `done` the time from before it to the frame that shows it: the
    // wall clock's and the GUI thread's CPU time (the software renderer draws on that thread).
    void timeFrame(const std::function<void()> &change, std::function<void(qint64, qint64)> done)
    {
        auto timer = std::make_shared<QElapsedTimer>();
        timer->start();
        const qint64 cpu = threadCpuNsecs();
        connect(
            m_window, &QQuickWindow::frameSwapped, this,
            [timer, cpu, done = std::move(done)] { done(timer->nsecsElapsed(), threadCpuNsecs() - cpu); },
            Qt::SingleShotConnection);
        change();
        m_window->update();
    }

    void nextSwitch()
    {
        if (m_switches == Switches) {
            startScroll();
            return;
        }
        const DesktopState::View view = Tour.at(std::size_t(m_switches % Tour.size()));
        const bool first = !m_visited.contains(view);
        m_visited.append(view);
        const QByteArray name = QMetaEnum::fromType<DesktopState::View>().valueToKey(int(view));
        timeFrame(
            [this, view, name] {
                if (!QMetaObject::invokeMethod(m_window, "go", Q_ARG(QString, u"view"_s),
                                               Q_ARG(QString, QString::number(int(view)))))
                    say("walk: the window cannot switch to " + name);
            },
            [this, name, first](qint64 nsecs, qint64 cpu) {
                say("view switch to " + name + ": " + milliseconds(nsecs) + " ms (cpu " + milliseconds(cpu) + " ms)" +
                    (first ? ", first visit" : ""));
                ++m_switches;
                // Let what the view asked for on showing arrive before the next switch.
                QTimer::singleShot(200, this, [this] { nextSwitch(); });
            });
    }

    void startScroll()
    {
        say("views visited, resident " + residentMb() + " MB");
        QQuickItem *item = m_window->activeFocusItem();
        while (item && !item->inherits("QQuickFlickable"))
            item = item->parentItem();
        if (!item) {
            say("walk: no list has the keyboard to scroll");
            finish();
            return;
        }
        m_list = item;
        m_list->setProperty("contentY", m_list->property("originY"));
        QTimer::singleShot(200, this, [this] {
            m_scrolling.start();
            scrollStep();
        });
    }

    void scrollStep()
    {
        const qreal end =
            m_list->property("originY").toReal() + m_list->property("contentHeight").toReal() - m_list->height();
        const qreal at = m_list->property("contentY").toReal();
        if (at >= end || m_frames.size() >= 100000) {
            const qint64 elapsed = m_scrolling.nsecsElapsed();
            const qint64 worst = m_frames.isEmpty() ? 0 : *std::max_element(m_frames.cbegin(), m_frames.cend());
            say("scrolled " + QByteArray::number(m_list->property("count").toInt()) + " rows in " +
                QByteArray::number(m_frames.size()) + " frames, " + milliseconds(elapsed) + " ms, " +
                QByteArray::number(elapsed > 0 ? double(m_frames.size()) * 1e9 / double(elapsed) : 0, 'f', 0) +
                " fps, worst frame " + milliseconds(worst) + " ms");
            finish();
            return;
        }
        timeFrame([this, at, end] { m_list->setProperty("contentY", std::min(at + ScrollStep, end)); },
                  [this](qint64 nsecs, qint64 cpu) {
                      m_frames.append(nsecs);
                      say("scroll frame " + milliseconds(nsecs) + " ms (cpu " + milliseconds(cpu) + " ms)");
                      QTimer::singleShot(0, this, [this] { scrollStep(); });
                  });
    }

    void finish() { say("walk done, resident " + residentMb() + " MB"); }

    QQuickWindow *m_window;
    QList<DesktopState::View> m_visited{DesktopState::View::Apps};
    int m_switches = 0;
    QQuickItem *m_list = nullptr;
    QElapsedTimer m_scrolling;
    QList<qint64> m_frames;
};

} // namespace

void traceDesktop(QQuickWindow *window, DesktopState &state)
{
    if (!qEnvironmentVariableIsSet("PANDO_DESKTOP_TRACE"))
        return;
    const bool walk = qgetenv("PANDO_DESKTOP_TRACE") == "walk";
    QObject::connect(
        window, &QQuickWindow::frameSwapped, window, [] { say("first frame"); }, Qt::SingleShotConnection);
    AppsModel *apps = state.apps();
    auto told = std::make_shared<bool>(false);
    QObject::connect(apps, &AppsModel::loadingChanged, window, [window, apps, told, walk] {
        if (*told || !apps->isLoaded())
            return;
        *told = true;
        // Said once the list is on screen: the next frame after the rows arrived.
        QObject::connect(
            window, &QQuickWindow::frameSwapped, window,
            [window, apps, walk] {
                say("apps view drawn with " + QByteArray::number(apps->rowCount()) + " apps");
                if (walk)
                    QTimer::singleShot(1000, window, [window] { (new Walk(window))->start(); });
            },
            Qt::SingleShotConnection);
        window->update();
    });
}

} // namespace pando::desktop
