// pando-desktop in a real X session: Xvfb as the display and trayer as the system tray host,
// watched from outside over the X protocol the way a user sees it: the tray icon embedded and
// shown in trayer's panel, the main window closed (WM_DELETE_WINDOW, what a window manager's
// close button sends) while the process stays in the tray, and SIGTERM ending it cleanly. The
// control: without a tray host the same close ends the app, so the close does reach it.
// The desktop attaches to a real API server over fake adapters (test::TestInstall).

#include "tests/app/server/fakes.h"
#include "tests/support/component.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sys/prctl.h>
#include <xcb/xcb.h>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

constexpr int StartTimeoutMs = 20000;

template<typename T> using Reply = std::unique_ptr<T, decltype(&std::free)>;

template<typename T> Reply<T> reply(T *r)
{
    return Reply<T>(r, &std::free);
}

// One client connection to the X server under test: what the tests ask the server about its
// windows, and the one message they send (a window manager's close).
class XConnection {
public:
    explicit XConnection(const QString &display)
    {
        int screenNumber = 0;
        m_c = xcb_connect(display.toLocal8Bit().constData(), &screenNumber);
        if (xcb_connection_has_error(m_c)) {
            xcb_disconnect(m_c);
            m_c = nullptr;
            return;
        }
        m_screen = screenNumber;
        xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(m_c));
        for (int i = 0; i < screenNumber && it.rem; ++i)
            xcb_screen_next(&it);
        m_root = it.data->root;
    }
    ~XConnection()
    {
        if (m_c)
            xcb_disconnect(m_c);
    }
    XConnection(const XConnection &) = delete;
    XConnection &operator=(const XConnection &) = delete;

    bool isOpen() const { return m_c != nullptr; }
    xcb_window_t root() const { return m_root; }
    int screen() const { return m_screen; }

    xcb_atom_t atom(const QByteArray &name)
    {
        auto r = reply(xcb_intern_atom_reply(
            m_c, xcb_intern_atom(m_c, 0, static_cast<uint16_t>(name.size()), name.constData()), nullptr));
        return r ? r->atom : xcb_atom_t(XCB_ATOM_NONE);
    }

    xcb_window_t selectionOwner(xcb_atom_t selection)
    {
        auto r = reply(xcb_get_selection_owner_reply(m_c, xcb_get_selection_owner(m_c, selection), nullptr));
        return r ? r->owner : xcb_window_t(XCB_WINDOW_NONE);
    }

    // WM_CLASS: {instance, class}, empty when the window has none (or is gone).
    QStringList wmClass(xcb_window_t window)
    {
        auto r = reply(xcb_get_property_reply(
            m_c, xcb_get_property(m_c, 0, window, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 0, 256), nullptr));
        if (!r || r->format != 8)
            return {};
        const QByteArray value(static_cast<const char *>(xcb_get_property_value(r.get())),
                               xcb_get_property_value_length(r.get()));
        QStringList parts;
        for (const QByteArray &part : value.split('\0'))
            if (!part.isEmpty())
                parts.append(QString::fromLatin1(part));
        return parts;
    }

    QList<xcb_window_t> children(xcb_window_t window)
    {
        auto r = reply(xcb_query_tree_reply(m_c, xcb_query_tree(m_c, window), nullptr));
        if (!r)
            return {};
        const xcb_window_t *list = xcb_query_tree_children(r.get());
        return QList<xcb_window_t>(list, list + xcb_query_tree_children_length(r.get()));
    }

    // Mapped, and every ancestor mapped too: what can be seen.
    bool isViewable(xcb_window_t window)
    {
        auto r = reply(xcb_get_window_attributes_reply(m_c, xcb_get_window_attributes(m_c, window), nullptr));
        return r && r->map_state == XCB_MAP_STATE_VIEWABLE;
    }

    QSize size(xcb_window_t window)
    {
        auto r = reply(xcb_get_geometry_reply(m_c, xcb_get_geometry(m_c, window), nullptr));
        return r ? QSize(r->width, r->height) : QSize();
    }

    // What a window manager sends when the user clicks a window's close button (ICCCM 4.2.8.1).
    void sendClose(xcb_window_t window)
    {
        xcb_client_message_event_t event{};
        event.response_type = XCB_CLIENT_MESSAGE;
        event.format = 32;
        event.window = window;
        event.type = atom("WM_PROTOCOLS");
        event.data.data32[0] = atom("WM_DELETE_WINDOW");
        event.data.data32[1] = XCB_CURRENT_TIME;
        xcb_send_event(m_c, 0, window, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char *>(&event));
        xcb_flush(m_c);
    }

    // The window tree with WM_CLASS and size, for failure messages.
    QString describe(xcb_window_t window = XCB_WINDOW_NONE, int depth = 0)
    {
        if (window == XCB_WINDOW_NONE)
            window = m_root;
        const QSize s = size(window);
        QString text = QString(depth * 2, u' ') + u"0x%1 %2 %3x%4%5\n"_s.arg(window, 0, 16)
                                                      .arg(wmClass(window).join(u'/'))
                                                      .arg(s.width())
                                                      .arg(s.height())
                                                      .arg(isViewable(window) ? u" viewable"_s : QString());
        for (xcb_window_t child : children(window))
            text += describe(child, depth + 1);
        return text;
    }

private:
    xcb_connection_t *m_c = nullptr;
    xcb_window_t m_root = XCB_WINDOW_NONE;
    int m_screen = 0;
};

bool isDesktopWindow(XConnection &x, xcb_window_t window)
{
    const QStringList cls = x.wmClass(window);
    return !cls.isEmpty() && cls.first() == u"pando-desktop"_s;
}

// pando-desktop's windows inside the tray host's windows (trayer reparents each icon into a
// socket window of its panel), those that are shown.
QList<xcb_window_t> embeddedIcons(XConnection &x)
{
    QList<xcb_window_t> icons;
    const std::function<void(xcb_window_t)> collect = [&](xcb_window_t window) {
        for (xcb_window_t child : x.children(window)) {
            if (isDesktopWindow(x, child) && x.isViewable(child))
                icons.append(child);
            collect(child);
        }
    };
    for (xcb_window_t top : x.children(x.root())) {
        const QStringList cls = x.wmClass(top);
        if (cls.size() == 2 && cls.at(1).compare(u"trayer"_s, Qt::CaseInsensitive) == 0)
            collect(top);
    }
    return icons;
}

// pando-desktop's main window: a top-level window of its own that is shown and window-sized.
xcb_window_t mainWindow(XConnection &x)
{
    for (xcb_window_t top : x.children(x.root()))
        if (isDesktopWindow(x, top) && x.isViewable(top) && x.size(top).width() >= 200)
            return top;
    return XCB_WINDOW_NONE;
}

// Spins the event loop (the API server the desktop talks to lives on this thread) until done().
bool waitUntil(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QTest::qWait(50);
    }
    return true;
}

// A child of this test: merged output, and ended by the kernel should the test itself die
// (a timeout, a crash) before its cleanup ran.
std::unique_ptr<QProcess> child()
{
    auto process = std::make_unique<QProcess>();
    process->setProcessChannelMode(QProcess::MergedChannels);
    process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    return process;
}

void stop(std::unique_ptr<QProcess> &process)
{
    if (!process)
        return;
    if (process->state() != QProcess::NotRunning) {
        process->terminate();
        if (!process->waitForFinished(5000)) {
            process->kill();
            process->waitForFinished(5000);
        }
    }
    process.reset();
}

} // namespace

class TestTrayHost : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    QString m_xvfbProgram;
    QString m_trayerProgram;
    std::unique_ptr<QTemporaryDir> m_home; // the desktop's settings, data and runtime directories
    std::unique_ptr<QProcess> m_xvfb;
    std::unique_ptr<QProcess> m_trayer;
    std::unique_ptr<QProcess> m_desktop;
    std::unique_ptr<XConnection> m_x;
    QString m_display;

    void stopAll()
    {
        stop(m_desktop);
        stop(m_trayer);
        m_x.reset();
        stop(m_xvfb);
        m_home.reset();
    }

    // The desktop's output and the window tree, for failure messages.
    QString diagnostics()
    {
        QString text;
        if (m_desktop)
            text += u"pando-desktop output:\n"_s + QString::fromLocal8Bit(m_desktop->readAll());
        if (m_trayer)
            text += u"trayer output:\n"_s + QString::fromLocal8Bit(m_trayer->readAll());
        if (m_x)
            text += u"X windows on %1:\n"_s.arg(m_display) + m_x->describe();
        return text;
    }

    // Starts Xvfb on a display number nobody uses (no socket, no lock file) and connects to it.
    // Another server may take the same number in between: the lock file then names its pid, not
    // ours, and the next number is tried.
    bool startXvfb(QString *why)
    {
        for (int n = 20; n < 400; ++n) {
            const QString lock = u"/tmp/.X%1-lock"_s.arg(n);
            if (QFile::exists(u"/tmp/.X11-unix/X%1"_s.arg(n)) || QFile::exists(lock))
                continue;
            const QString display = u":%1"_s.arg(n);
            auto xvfb = child();
            xvfb->start(m_xvfbProgram, {display, u"-screen"_s, u"0"_s, u"1280x800x24"_s, u"-nolisten"_s, u"tcp"_s});
            if (!xvfb->waitForStarted(5000)) {
                *why = u"%1 did not start: %2"_s.arg(m_xvfbProgram, xvfb->errorString());
                return false;
            }
            const auto ours = [&] {
                QFile file(lock);
                return file.open(QIODevice::ReadOnly) && file.readAll().trimmed().toLongLong() == xvfb->processId();
            };
            std::unique_ptr<XConnection> x;
            const bool up = waitUntil(
                [&] {
                    if (xvfb->state() != QProcess::Running)
                        return true;
                    if (!ours())
                        return false;
                    x = std::make_unique<XConnection>(display);
                    return x->isOpen();
                },
                10000);
            if (xvfb->state() != QProcess::Running)
                continue; // lost the number to another server
            if (!up || !x || !x->isOpen()) {
                *why = u"Xvfb %1 did not accept connections within 10 s: %2"_s.arg(
                    display, QString::fromLocal8Bit(xvfb->readAll()));
                stop(xvfb);
                return false;
            }
            m_xvfb = std::move(xvfb);
            m_x = std::move(x);
            m_display = display;
            return true;
        }
        *why = u"no free X display number between :20 and :399"_s;
        return false;
    }

    // Starts trayer and waits until it owns the system tray selection of the screen.
    bool startTrayer(QString *why)
    {
        m_trayer = child();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"DISPLAY"_s, m_display);
        env.remove(u"WAYLAND_DISPLAY"_s);
        m_trayer->setProcessEnvironment(env);
        m_trayer->start(m_trayerProgram, {u"--edge"_s, u"top"_s, u"--align"_s, u"right"_s, u"--widthtype"_s,
                                          u"request"_s, u"--height"_s, u"24"_s});
        const xcb_atom_t selection = m_x->atom("_NET_SYSTEM_TRAY_S" + QByteArray::number(m_x->screen()));
        const bool owned = waitUntil(
            [&] {
                return m_trayer->state() == QProcess::NotRunning || m_x->selectionOwner(selection) != XCB_WINDOW_NONE;
            },
            10000);
        if (owned && m_trayer->state() != QProcess::NotRunning)
            return true;
        *why = u"trayer on %1 %2: %3"_s.arg(m_display,
                                            owned ? u"exited"_s : u"owned no system tray selection within 10 s"_s,
                                            QString::fromLocal8Bit(m_trayer->readAll()));
        return false;
    }

    // Starts pando-desktop on the display, attached to the test install, in a home of its own
    // (settings, data, single-instance socket) and without a session bus, so that its icon goes
    // to the X tray host rather than to a desktop's StatusNotifier host.
    bool startDesktop(QString *why)
    {
        m_home = std::make_unique<QTemporaryDir>();
        const QDir home(m_home->path());
        for (const QString &sub : {u"config"_s, u"data"_s, u"cache"_s, u"run"_s})
            home.mkpath(sub);
        QFile::setPermissions(home.filePath(u"run"_s), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"DISPLAY"_s, m_display);
        env.insert(u"QT_QPA_PLATFORM"_s, u"xcb"_s);
        env.remove(u"WAYLAND_DISPLAY"_s);
        env.remove(u"PANDO_TOKEN"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, home.filePath(u"config"_s));
        env.insert(u"XDG_DATA_HOME"_s, home.filePath(u"data"_s));
        env.insert(u"XDG_CACHE_HOME"_s, home.filePath(u"cache"_s));
        env.insert(u"XDG_RUNTIME_DIR"_s, home.filePath(u"run"_s));
        env.insert(u"DBUS_SESSION_BUS_ADDRESS"_s, u"unix:path="_s + home.filePath(u"run/no-bus"_s));
        m_desktop = child();
        m_desktop->setProcessEnvironment(env);
        // The token in a file of the user's, never in argv (every user of the machine sees that).
        const QString tokenFile = home.filePath(u"config/token"_s);
        QFile file(tokenFile);
        if (!file.open(QIODevice::WriteOnly) || file.write(m_install.token.toUtf8() + '\n') <= 0) {
            *why = u"cannot write the token file: "_s + file.errorString();
            return false;
        }
        file.close();
        m_desktop->start(QStringLiteral(PANDO_DESKTOP_PROGRAM),
                         {u"--server"_s, m_install.baseUrl(), u"--token-file"_s, tokenFile, u"--no-single-instance"_s});
        if (!m_desktop->waitForStarted(5000)) {
            *why = u"pando-desktop did not start: "_s + m_desktop->errorString();
            return false;
        }
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_xvfbProgram = QStandardPaths::findExecutable(u"Xvfb"_s);
        m_trayerProgram = QStandardPaths::findExecutable(u"trayer"_s);
        PANDO_REQUIRE_COMPONENT(!m_xvfbProgram.isEmpty(), u"Xvfb (Debian package xvfb) is not installed"_s);
        PANDO_REQUIRE_COMPONENT(!m_trayerProgram.isEmpty(), u"trayer (Debian package trayer) is not installed"_s);
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
    }

    void cleanup() { stopAll(); }

    void iconEmbeddedAndClosingKeepsTheAppInTheTray()
    {
        QString why;
        QVERIFY2(startXvfb(&why), qPrintable(why));
        QVERIFY2(startTrayer(&why), qPrintable(why));
        QVERIFY2(startDesktop(&why), qPrintable(why));

        // The icon sits in trayer's panel, shown, and the main window is up.
        bool up = waitUntil([&] { return !embeddedIcons(*m_x).isEmpty() && mainWindow(*m_x) != XCB_WINDOW_NONE; },
                            StartTimeoutMs);
        QVERIFY2(up, qPrintable(up ? QString() : u"no embedded icon and main window:\n"_s + diagnostics()));
        QCOMPARE(embeddedIcons(*m_x).size(), 1);
        const xcb_window_t window = mainWindow(*m_x);

        // Closing the window hides it; the process and its icon stay.
        m_x->sendClose(window);
        const bool hidden = waitUntil([&] { return !m_x->isViewable(window); }, 10000);
        QVERIFY2(hidden, qPrintable(hidden ? QString() : u"the window stayed after a close:\n"_s + diagnostics()));
        QTest::qWait(1500);
        const bool alive = m_desktop->state() == QProcess::Running;
        QVERIFY2(alive, qPrintable(alive ? QString()
                                         : u"pando-desktop ended (code %1) when its window closed:\n"_s.arg(
                                               m_desktop->exitCode()) +
                                               diagnostics()));
        QCOMPARE(embeddedIcons(*m_x).size(), 1);
        QCOMPARE(mainWindow(*m_x), xcb_window_t(XCB_WINDOW_NONE));

        // SIGTERM ends it the way Quit does: a normal exit with code 0, its icon gone.
        QVERIFY(::kill(pid_t(m_desktop->processId()), SIGTERM) == 0);
        const bool ended = waitUntil([&] { return m_desktop->state() == QProcess::NotRunning; }, 15000);
        QVERIFY2(ended, qPrintable(ended ? QString() : u"still running 15 s after SIGTERM:\n"_s + diagnostics()));
        const bool clean = m_desktop->exitStatus() == QProcess::NormalExit && m_desktop->exitCode() == 0;
        QVERIFY2(clean, qPrintable(clean ? QString()
                                         : u"after SIGTERM: %1, code %2\n"_s
                                                   .arg(m_desktop->exitStatus() == QProcess::CrashExit ? u"killed"_s
                                                                                                       : u"exited"_s)
                                                   .arg(m_desktop->exitCode()) +
                                               diagnostics()));
        QVERIFY(waitUntil([&] { return embeddedIcons(*m_x).isEmpty(); }, 5000));
        // And quietly: the session and its timers went before the application did.
        const QString said = QString::fromLocal8Bit(m_desktop->readAll());
        QVERIFY2(!said.contains(u"QObject::"_s) && !said.contains(u"Timers"_s), qPrintable(said));
    }

    // The control: no tray host, so no icon, and the same close ends the app.
    void withoutTrayHostClosingQuits()
    {
        QString why;
        QVERIFY2(startXvfb(&why), qPrintable(why));
        QVERIFY2(startDesktop(&why), qPrintable(why));
        const bool up = waitUntil([&] { return mainWindow(*m_x) != XCB_WINDOW_NONE; }, StartTimeoutMs);
        QVERIFY2(up, qPrintable(up ? QString() : u"no main window:\n"_s + diagnostics()));
        QVERIFY(embeddedIcons(*m_x).isEmpty());
        m_x->sendClose(mainWindow(*m_x));
        const bool ended = waitUntil([&] { return m_desktop->state() == QProcess::NotRunning; }, 15000);
        QVERIFY2(ended,
                 qPrintable(ended ? QString() : u"still running after its only window closed:\n"_s + diagnostics()));
        QCOMPARE(m_desktop->exitStatus(), QProcess::NormalExit);
        QCOMPARE(m_desktop->exitCode(), 0);
    }

    void cleanupTestCase() { stopAll(); }
};

QTEST_GUILESS_MAIN(TestTrayHost)
#include "tst_trayhost.moc"
