// pando-desktop: the desktop app. Without arguments it runs this computer's own engine
// (InProcessSession over the user's data directory); with --server and --token-file (or PANDO_TOKEN) it attaches to a
// remote install. One instance per user: a second start raises the first window.

#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "app/desktop/shell/desktoptrace.h"
#include "app/desktop/shell/selfcheck.h"
#include "app/desktop/shell/singleinstance.h"
#include "app/desktop/shell/trayicon.h"
#include "app/desktop/shell/windowplace.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QIcon>
#include <QLibraryInfo>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QScreen>
#include <QSettings>
#include <QSocketNotifier>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>
#include <QTranslator>
#include <QtQml/qqmlextensionplugin.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <expected>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

Q_IMPORT_QML_PLUGIN(Pando_AppsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_DeploysPlugin)
Q_IMPORT_QML_PLUGIN(Pando_LogsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)
Q_IMPORT_QML_PLUGIN(Pando_StatesPlugin)

using namespace Qt::StringLiterals;
using namespace pando::desktop;

namespace {

struct Options {
    QUrl server;
    QString token;
    QString dataDir;
    QString auditSinks;
    bool singleInstance = true;
    bool check = false; // --check: open every dialog once, then exit
};

// --lang is read before the parser exists, because the parser's own texts are translated.
QString languageArgument(const QStringList &arguments)
{
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        if (arguments.at(i) == u"--lang"_s && i + 1 < arguments.size())
            return arguments.at(i + 1);
        if (arguments.at(i).startsWith(u"--lang="_s))
            return arguments.at(i).mid(7);
    }
    return {};
}

// Installs the built-in translation (:/i18n/pando_<lang>.qm) for `language`, or for the system's
// UI languages ($LANGUAGE, then the locale) when it is empty, and Qt's own where it is installed.
void installTranslation(const QString &language, QTranslator &pando, QTranslator &qt)
{
    const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
    if (!language.isEmpty())
        QLocale::setDefault(locale); // dates and numbers follow a forced language too
    if (pando.isEmpty() && !pando.load(locale, u"pando"_s, u"_"_s, u":/i18n"_s)) {
        if (!language.isEmpty())
            qWarning("pando-desktop: --lang %s: no translation built in; showing English", qPrintable(language));
        // English is the source language, but its plural forms ("1 app", "2 apps") are a
        // translation too: without it a C or untranslated locale read "2 app(s)".
        (void)pando.load(u"pando_en"_s, u":/i18n"_s);
    }
    if (qt.isEmpty())
        (void)qt.load(locale, u"qtbase"_s, u"_"_s, QLibraryInfo::path(QLibraryInfo::TranslationsPath));
    QCoreApplication::installTranslator(&pando);
    QCoreApplication::installTranslator(&qt);
}

// The token in the first line of path; the error says what was wrong with the file.
std::expected<QString, QString> readTokenFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::unexpected(
            QCoreApplication::translate("main", "--token-file: cannot read %1: %2").arg(path, file.errorString()));
    const QString token = QString::fromUtf8(file.read(4096)).section(u'\n', 0, 0).trimmed();
    if (token.isEmpty())
        return std::unexpected(QCoreApplication::translate("main", "--token-file: %1 holds no token").arg(path));
    return token;
}

// Parsed before QApplication exists, so --help and --version work without a display.
int parseArguments(const QStringList &arguments, Options &options)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QCoreApplication::translate("main", "Pando Desktop: your apps, deploys, pipelines and approvals."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption server(
        u"server"_s,
        QCoreApplication::translate("main",
                                    "Attach to the Pando install at this URL instead of this computer's engine."),
        u"url"_s);
    const QCommandLineOption tokenFile(
        u"token-file"_s,
        QCoreApplication::translate("main", "A file holding the API token for --server (default: $PANDO_TOKEN)."),
        u"file"_s);
    // Still recognised, to refuse it with a reason: a token in argv is readable by every user of
    // the machine (ps, /proc/PID/cmdline).
    QCommandLineOption token(u"token"_s, QString(), u"token"_s);
    token.setFlags(QCommandLineOption::HiddenFromHelp);
    const QCommandLineOption dataDir(
        u"data-dir"_s,
        QCoreApplication::translate("main", "This computer's engine data directory (default: ~/.local/share/pando)."),
        u"dir"_s);
    const QCommandLineOption auditSinks(
        u"audit-sinks"_s,
        QCoreApplication::translate(
            "main", "A JSON file of syslog/HTTPS sinks this computer's engine pushes its audit log to."),
        u"file"_s);
    const QCommandLineOption noSingle(
        u"no-single-instance"_s,
        QCoreApplication::translate("main", "Start even when another pando-desktop runs for this user."));
    const QCommandLineOption lang(
        u"lang"_s, QCoreApplication::translate("main", "Show the app in this language (default: the system's)."),
        u"language"_s);
    const QCommandLineOption check(
        u"check"_s, QCoreApplication::translate("main", "Open every dialog once, close it and exit: non-zero, saying "
                                                        "what failed, when a part of Qt this app needs is missing."));
    parser.addOptions({server, tokenFile, token, dataDir, auditSinks, noSingle, lang, check});

    QTextStream err(stderr);
    if (!parser.parse(arguments)) {
        err << parser.errorText() << Qt::endl;
        return 2;
    }
    QTextStream out(stdout);
    if (parser.isSet(help)) {
        // Without a QCoreApplication yet, the parser cannot know the program's name.
        out << parser.helpText().replace(u"<executable_name>"_s, QCoreApplication::applicationName());
        return 0;
    }
    if (parser.isSet(version)) {
        out << QCoreApplication::applicationName() << ' ' << QCoreApplication::applicationVersion() << Qt::endl;
        return 0;
    }
    if (!parser.positionalArguments().isEmpty()) {
        err << QCoreApplication::translate("main", "pando-desktop takes no arguments, got: %1")
                   .arg(parser.positionalArguments().join(u' '))
            << Qt::endl;
        return 2;
    }
    if (parser.isSet(token)) {
        err << QCoreApplication::translate("main",
                                           "--token is not taken: every user of this computer could read it (ps). "
                                           "Put the token in a file only you can read and pass --token-file FILE, "
                                           "or set PANDO_TOKEN")
            << Qt::endl;
        return 2;
    }
    if (parser.isSet(tokenFile)) {
        auto read = readTokenFile(parser.value(tokenFile));
        if (!read) {
            err << read.error() << Qt::endl;
            return 2;
        }
        options.token = *read;
    } else {
        options.token = qEnvironmentVariable("PANDO_TOKEN");
    }
    if (parser.isSet(server)) {
        options.server = QUrl::fromUserInput(parser.value(server));
        if (!options.server.isValid() || options.server.host().isEmpty()) {
            err << QCoreApplication::translate("main", "--server: %1 is not a URL").arg(parser.value(server))
                << Qt::endl;
            return 2;
        }
        if (options.token.isEmpty()) {
            err << QCoreApplication::translate("main", "--server needs --token-file FILE (or PANDO_TOKEN)") << Qt::endl;
            return 2;
        }
    }
    options.dataDir = parser.value(dataDir);
    options.auditSinks = parser.value(auditSinks);
    options.singleInstance = !parser.isSet(noSingle);
    options.check = parser.isSet(check);
    return -1;
}

Session *makeSession(const Options &options, QSettings &settings, QObject *parent)
{
    if (!options.server.isEmpty()) {
        settings.setValue(u"connection/last"_s, options.server.toString());
        return new RemoteSession(options.server, options.token, parent);
    }
    settings.setValue(u"connection/last"_s, u"local"_s);
    InProcessOptions local;
    local.engine.dataDir = !options.dataDir.isEmpty()
                               ? options.dataDir
                               : QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + u"/pando"_s;
    // The Settings view's engine settings; --audit-sinks on the command line wins over its file.
    local.settings = EngineSettingsForm::stored(settings);
    if (!options.auditSinks.isEmpty())
        local.settings.auditSinks = options.auditSinks;
    return new InProcessSession(std::move(local), parent);
}

// The start's first load leaves megabytes freed but still resident: every list's JSON on both
// sides of the in-process engine's loopback hop, parsed and copied into the models, on the GUI
// thread and the engine's. glibc keeps freed memory in its arenas, so without this the resident
// set stays at the start's peak for good (about 6 MB with 1,000 apps, bench_desktop). Handed back
// once, when the apps have arrived and the other lists had time to.
void releaseStartBuffers(AppsModel *apps)
{
#ifdef __GLIBC__
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = QObject::connect(apps, &AppsModel::loadingChanged, apps, [apps, once] {
        if (!apps->isLoaded())
            return;
        QObject::disconnect(*once);
        QTimer::singleShot(500, apps, [] { ::malloc_trim(0); });
    });
#else
    Q_UNUSED(apps);
#endif
}

// SIGTERM and SIGINT (a logout, systemd, Ctrl-C in a terminal) end the app the way Quit does:
// the event loop returns, the window's place is saved and the engine shuts down. The handler only
// writes a byte to a pipe; the GUI thread reads it and quits.
int g_quitPipe[2] = {-1, -1};

void onQuitSignal(int)
{
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(g_quitPipe[1], &byte, 1);
}

void quitOnTerminationSignals(QCoreApplication *app)
{
    if (::pipe2(g_quitPipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        qWarning("pando-desktop: no pipe for SIGTERM/SIGINT (%s); they end the app abruptly", std::strerror(errno));
        return;
    }
    auto *notifier = new QSocketNotifier(g_quitPipe[0], QSocketNotifier::Read, app);
    QObject::connect(notifier, &QSocketNotifier::activated, app, [] {
        char buffer[16];
        while (::read(g_quitPipe[0], buffer, sizeof buffer) > 0) {
        }
        QCoreApplication::quit();
    });
    struct sigaction action {};
    action.sa_handler = onQuitSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
}

void showWindow(QQuickWindow *window)
{
    window->show();
    window->raise();
    window->requestActivate();
}

} // namespace

int main(int argc, char *argv[])
{
    // The in-process engine's data directory holds password hashes, the audit log and run.env
    // values: whatever it (or SQLite, libgit2, the blob store) creates is the user's alone.
    ::umask(077);
    QCoreApplication::setOrganizationName(u"pando"_s);
    QCoreApplication::setApplicationName(u"pando-desktop"_s);
    QCoreApplication::setApplicationVersion(QStringLiteral(PANDO_VERSION));

    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    const QString language = languageArgument(arguments);
    QTranslator pandoTranslator;
    QTranslator qtTranslator;
    Options options;
    int exit = -1;
    {
        // --help, --version and argument errors need no display, but do need the translation,
        // which only an application object carries: a plain one until the QApplication exists.
        QCoreApplication parsing(argc, argv);
        installTranslation(language, pandoTranslator, qtTranslator);
        exit = parseArguments(arguments, options);
    }
    if (exit >= 0)
        return exit;

    // Fusion follows the system palette (light or dark) and looks the same in widgets and QML.
    QQuickStyle::setStyle(u"Fusion"_s);
    QApplication app(argc, argv);
    quitOnTerminationSignals(&app);
    QCoreApplication::installTranslator(&pandoTranslator);
    QCoreApplication::installTranslator(&qtTranslator);
    QApplication::setStyle(u"Fusion"_s);
    QApplication::setWindowIcon(QIcon(u":/pando/icons/pando.svg"_s));
    QApplication::setApplicationDisplayName(QApplication::translate("main", "Pando"));

    // --check touches none of the user's settings or data: it runs on a scratch directory and
    // never starts the engine.
    QTemporaryDir scratch;
    if (options.check) {
        if (!scratch.isValid()) {
            qCritical("pando-desktop --check: no scratch directory: %s", qPrintable(scratch.errorString()));
            return 1;
        }
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, scratch.path());
        options.server.clear();
        options.dataDir = scratch.filePath(u"data"_s);
        options.singleInstance = false;
    }

    SingleInstance instance(u"pando-desktop.socket"_s);
    if (options.singleInstance) {
        if (instance.askRunningInstance())
            return 0; // the running one shows its window
        if (QString why; !instance.listen(&why))
            qWarning("pando-desktop: cannot listen for a second start (%s); starting anyway", qPrintable(why));
    }

    QSettings settings;
    // Owned here, not by the application object: it must go (stopping its engine on its thread)
    // while the application, its event dispatcher and timers, still exist.
    const std::unique_ptr<Session> session(makeSession(options, settings, nullptr));
    DesktopState state(session.get());
    DesktopState::setInstance(&state);

    QQmlApplicationEngine engine;
    engine.addImportPath(u"qrc:/qt/qml"_s);
    // The views are made when first shown (Main.qml); --check opens every view's dialogs.
    engine.setInitialProperties({{u"loadEveryView"_s, options.check}});
    engine.load(QUrl(u"qrc:/qt/qml/Pando/Shell/Main.qml"_s));
    auto *window =
        engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().first());
    if (!window) {
        qCritical("pando-desktop: the main window did not load (see the QML errors above)");
        return 1;
    }
    if (options.check) {
        window->show();
        QTextStream out(stdout);
        return checkDialogs(window, out);
    }
    if (const QRect saved = settings.value(u"window/geometry"_s).toRect(); saved.isValid()) {
        const QScreen *screen = QGuiApplication::screenAt(saved.center());
        if (!screen)
            screen = window->screen();
        if (const QRect fitted = fitIntoScreen(saved, screen ? screen->availableGeometry() : QRect()); fitted.isValid())
            window->setGeometry(fitted);
    }
    const auto saveGeometry = [window, &settings] {
        if (window->isVisible())
            settings.setValue(u"window/geometry"_s, window->geometry());
    };
    QObject::connect(window, &QWindow::widthChanged, &app, saveGeometry);
    QObject::connect(window, &QWindow::heightChanged, &app, saveGeometry);
    QObject::connect(window, &QWindow::xChanged, &app, saveGeometry);
    QObject::connect(window, &QWindow::yChanged, &app, saveGeometry);
    QObject::connect(&instance, &SingleInstance::raiseRequested, window, [window] { showWindow(window); });

    // With a tray, closing the window keeps the app (and its engine) running there.
    std::unique_ptr<TrayIcon> tray;
    if (TrayIcon::isAvailable()) {
        tray = std::make_unique<TrayIcon>(&state);
        QApplication::setQuitOnLastWindowClosed(false);
        QObject::connect(tray.get(), &TrayIcon::openRequested, window, [window] { showWindow(window); });
        QObject::connect(tray.get(), &TrayIcon::quitRequested, &app, &QCoreApplication::quit);
        QObject::connect(tray.get(), &TrayIcon::appRequested, window, [window, &state](const QString &name) {
            state.apps()->setSelectedRow(state.apps()->rowOf(name));
            showWindow(window);
        });
        QObject::connect(tray.get(), &TrayIcon::approvalRequested, window, [window, &state](const QString &id) {
            state.showApproval(id);
            showWindow(window);
        });
        tray->setWindow(window);
        tray->show();
    }
    traceDesktop(window, state);
    releaseStartBuffers(state.apps());
    showWindow(window);
    session->open();
    const int code = QApplication::exec();
    saveGeometry();
    return code;
}
