#pragma once
// The desktop view tests' window and screenshots: Pando's whole window opened offscreen, and each
// view rendered there saved as
// <build>/screenshots/<name>.png (PANDO_BINARY_DIR, else the working directory) for people to
// look at, and checked to be more than a blank page by counting its colours.

#include <QDir>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QSet>
#include <QTest>

namespace pando::test {

// Pando's whole window (the Shell module's Main.qml) loaded in engine, resized and shown until
// exposed; every warning the engine gives is appended to warnings. Null when it did not load.
inline QQuickWindow *openMainWindow(QQmlApplicationEngine &engine, QStringList &warnings, QSize size = {1280, 800})
{
    engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
    QObject::connect(&engine, &QQmlEngine::warnings, &engine, [&warnings](const QList<QQmlError> &list) {
        for (const QQmlError &e : list)
            warnings.append(e.toString());
    });
    engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Pando/Shell/Main.qml")));
    auto *window =
        engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().first());
    if (!window)
        return nullptr;
    window->resize(size);
    window->show();
    return QTest::qWaitForWindowExposed(window) ? window : nullptr;
}

inline QString screenshotDir()
{
    QString dir = qEnvironmentVariable("PANDO_BINARY_DIR");
    if (dir.isEmpty())
        dir = QDir::currentPath();
    return QDir(dir).filePath(QStringLiteral("screenshots"));
}

// Saves the image as <screenshotDir>/<name>.png and says where; empty when it could not.
inline QString saveScreenshot(const QImage &image, const QString &name)
{
    const QString dir = screenshotDir();
    const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
    if (!QDir().mkpath(dir) || !image.save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

// How many distinct colours the image holds (every other pixel; counting stops at limit).
inline int distinctColours(const QImage &image, int limit = 1000)
{
    QSet<QRgb> seen;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); y += 2) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); x += 2) {
            seen.insert(line[x]);
            if (seen.size() >= limit)
                return int(seen.size());
        }
    }
    return int(seen.size());
}

} // namespace pando::test
