// bench_desktop's floor for pando-desktop's first frame: an empty Qt Quick window, nothing else (no
// QML engine, no controls, no engine of Pando's), shown at pando-desktop's size on whatever
// platform and scene graph backend the environment names. It says "first frame" on stderr when
// its first frame is swapped, then waits to be ended (its resident set is measured meanwhile).

#include <QGuiApplication>
#include <QQuickWindow>
#include <cstdio>

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    QQuickWindow window;
    window.resize(1280, 800);
    QObject::connect(
        &window, &QQuickWindow::frameSwapped, &window,
        [] {
            std::fprintf(stderr, "emptyquickwindow: first frame\n");
            std::fflush(stderr);
        },
        Qt::SingleShotConnection);
    window.show();
    return QGuiApplication::exec();
}
