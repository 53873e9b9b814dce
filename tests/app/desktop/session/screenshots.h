#pragma once
// The desktop view tests' screenshots: each view rendered offscreen is saved as
// <build>/screenshots/<name>.png (PANDO_BINARY_DIR, else the working directory) for people to
// look at, and checked to be more than a blank page by counting its colours.

#include <QDir>
#include <QImage>
#include <QSet>

namespace pando::test {

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
