#include "app/desktop/shell/selfcheck.h"
#include "qml/apps/appcreator.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QList>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QScopeGuard>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QStringList *g_warnings = nullptr;
QtMessageHandler g_previous = nullptr;

void collectWarning(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (g_warnings && type != QtDebugMsg && type != QtInfoMsg)
        g_warnings->append(message);
    if (g_previous)
        g_previous(type, context, message);
}

bool waitForVisible(QObject *object, bool visible)
{
    const QDeadlineTimer deadline(3000);
    while (object->property("visible").toBool() != visible) {
        if (deadline.hasExpired())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    return true;
}

QString describe(const QObject *dialog)
{
    return dialog->objectName().isEmpty() ? QString::fromUtf8(dialog->metaObject()->className()) : dialog->objectName();
}

// Popups (Dialog, Menu, ToolTip…) and QtQuick.Dialogs' dialogs, in the order the views hold them.
QList<QObject *> dialogsOf(QQuickWindow *window)
{
    QList<QObject *> found;
    const QList<QObject *> objects =
        window->findChildren<QObject *>() + window->contentItem()->findChildren<QObject *>();
    for (QObject *object : objects) {
        if ((object->inherits("QQuickPopup") || object->inherits("QQuickAbstractDialog")) && !found.contains(object))
            found.append(object);
    }
    return found;
}

} // namespace

int checkDialogs(QQuickWindow *window, QTextStream &out)
{
    QStringList warnings;
    g_warnings = &warnings;
    g_previous = qInstallMessageHandler(collectWarning);
    const auto restore = qScopeGuard([] {
        qInstallMessageHandler(g_previous);
        g_warnings = nullptr;
    });

    QStringList failures;
    const QList<QObject *> dialogs = dialogsOf(window);
    if (dialogs.isEmpty())
        failures.append(u"the window holds no dialog at all: its views did not load"_s);
    for (QObject *dialog : dialogs) {
        const qsizetype failed = failures.size();
        const qsizetype warned = warnings.size();
        // Qt 6.4 crashes opening its QML file dialog without this module: say so instead.
        if (dialog->inherits("QQuickFileDialog") || dialog->inherits("QQuickFolderDialog")) {
            const QString problem = AppCreator::importProblem(qmlEngine(dialog), u"Qt.labs.folderlistmodel"_s);
            if (!problem.isEmpty()) {
                failures.append(u"%1 cannot open: %2 (install qml6-module-qt-labs-folderlistmodel)"_s.arg(
                    describe(dialog), problem));
                continue;
            }
        }
        QMetaObject::invokeMethod(dialog, "open");
        if (!waitForVisible(dialog, true)) {
            failures.append(u"%1 did not open"_s.arg(describe(dialog)));
            continue;
        }
        QMetaObject::invokeMethod(dialog, dialog->inherits("QQuickPopup") ? "close" : "reject");
        if (!waitForVisible(dialog, false))
            failures.append(u"%1 did not close"_s.arg(describe(dialog)));
        for (qsizetype i = warned; i < warnings.size(); ++i)
            failures.append(u"%1: %2"_s.arg(describe(dialog), warnings.at(i)));
        if (failures.size() == failed)
            out << "pando-desktop --check: opened and closed " << describe(dialog) << Qt::endl;
    }
    // The built-in translation is loaded, English included: plural forms are a translation.
    const QString plural = QCoreApplication::translate("pando::desktop::DesktopState", "%n app(s) failing", nullptr, 2);
    if (plural.contains(u"(s)"_s))
        failures.append(u"no built-in translation is loaded: a plural reads \"%1\""_s.arg(plural));
    for (const QString &failure : std::as_const(failures))
        out << "pando-desktop --check: " << failure << Qt::endl;
    out << "pando-desktop --check: dialogs checked: " << dialogs.size() << ", problems: " << failures.size()
        << Qt::endl;
    return failures.isEmpty() ? 0 : 1;
}

} // namespace pando::desktop
