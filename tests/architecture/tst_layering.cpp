// The layers of ARCHITECTURE.md as a test: every #include and every CMake link edge in the tree
// must point down. core sees only adapters/api; an adapter sees adapters/api, the kits and its
// own folder, never core or another concrete adapter (what two adapters share goes to a kit);
// a kit sees adapters/api and other kits; nothing below app/ sees app/ or qml/, and nothing
// below app/ reaches Qt's GUI modules. The rules are checked on rows of their own first, so the
// test is shown to fail on each kind of edge it forbids.

#include "tests/support/component.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

// Where a file or a CMake target sits: "core", "api", "kit:NAME", "adapter:KIND/NAME", "app",
// "qml", or "" for what no rule covers (tests, scripts, docs).
QString layerOf(const QString &path)
{
    const QStringList parts = path.split(QLatin1Char('/'));
    const QString top = parts.value(0);
    if (top == QLatin1String("core"))
        return QStringLiteral("core");
    if (top == QLatin1String("app"))
        return QStringLiteral("app");
    if (top == QLatin1String("qml"))
        return QStringLiteral("qml");
    if (top == QLatin1String("adapters") && parts.size() >= 3) {
        if (parts[1] == QLatin1String("api"))
            return QStringLiteral("api");
        if (parts[1] == QLatin1String("kit"))
            return QStringLiteral("kit:") + parts[2];
        if (parts.size() >= 4)
            return QStringLiteral("adapter:") + parts[1] + QLatin1Char('/') + parts[2];
    }
    return {};
}

// Why an edge from one layer to another is forbidden; empty when it is allowed.
QString forbidden(const QString &from, const QString &to)
{
    if (from.isEmpty() || to.isEmpty() || from == to || from == QLatin1String("app") || from == QLatin1String("qml"))
        return {};
    if (to == QLatin1String("app") || to == QLatin1String("qml"))
        return QStringLiteral("only app/ and qml/ may use app/ and qml/");
    if (from == QLatin1String("core"))
        return to == QLatin1String("api") ? QString() : QStringLiteral("core sees only adapters/api");
    if (from == QLatin1String("api"))
        return QStringLiteral("adapters/api is the bottom layer");
    if (to == QLatin1String("core"))
        return QStringLiteral("adapters never see core");
    if (to == QLatin1String("api") || to.startsWith(QLatin1String("kit:")))
        return {};
    if (from.startsWith(QLatin1String("kit:")))
        return QStringLiteral("a kit sees only adapters/api and other kits");
    return QStringLiteral("an adapter never sees another concrete adapter: move what they share to adapters/kit/");
}

// Qt's GUI modules, which nothing below app/ may reach (by module path or by class header).
bool isGuiInclude(const QString &include)
{
    static const QRegularExpression gui(QStringLiteral(
        "^(QtGui|QtQuick|QtQml|QtQuickControls2|QtWidgets|QtCharts|QtSvg)(/|$)|^(QQml|QQuick|QGui|QWidget|QApplication|"
        "QPainter|QImage|QPixmap|QIcon|QColor|QFont|QWindow)"));
    return gui.match(include).hasMatch();
}

// The path a quoted include names, relative to the tree: "core/x.h" as it is, "x.h" beside the
// file that includes it.
QString resolveInclude(const QString &file, const QString &include)
{
    static const QStringList roots{QStringLiteral("core/"), QStringLiteral("adapters/"), QStringLiteral("app/"),
                                   QStringLiteral("qml/"), QStringLiteral("tests/")};
    for (const QString &root : roots) {
        if (include.startsWith(root))
            return include;
    }
    const QString dir = file.section(QLatin1Char('/'), 0, -2);
    return QDir::cleanPath(dir + QLatin1Char('/') + include);
}

struct Violation {
    QString where; // "file:line" or "CMakeLists.txt: target"
    QString edge;
    QString why;
};

QString describe(const QList<Violation> &violations)
{
    QStringList lines;
    for (const Violation &v : violations)
        lines.append(v.where + QStringLiteral(": ") + v.edge + QStringLiteral(" (") + v.why + QLatin1Char(')'));
    return lines.join(QLatin1Char('\n'));
}

// One file's include edges that break a rule.
QList<Violation> checkIncludes(const QString &file, const QByteArray &text)
{
    static const QRegularExpression includeLine(QStringLiteral("^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]"));
    QList<Violation> found;
    const QString from = layerOf(file);
    if (from.isEmpty() || from == QLatin1String("app") || from == QLatin1String("qml"))
        return found;
    const QList<QByteArray> lines = text.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const auto match = includeLine.match(QString::fromUtf8(lines[i]));
        if (!match.hasMatch())
            continue;
        const QString include = match.captured(2);
        const QString where = file + QLatin1Char(':') + QString::number(i + 1);
        if (isGuiInclude(include)) {
            found.append({where, include, QStringLiteral("nothing below app/ uses Qt's GUI modules")});
            continue;
        }
        if (match.captured(1) != QLatin1String("\""))
            continue;
        const QString target = resolveInclude(file, include);
        if (const QString why = forbidden(from, layerOf(target)); !why.isEmpty())
            found.append({where, include, why});
    }
    return found;
}

// Every target a CMakeLists.txt adds, with the folder it sits in.
QHash<QString, QString> targetFolders(const QHash<QString, QByteArray> &lists)
{
    static const QRegularExpression addTarget(QStringLiteral("add_library\\(\\s*([A-Za-z0-9_]+)"));
    QHash<QString, QString> folders;
    for (auto it = lists.begin(); it != lists.end(); ++it) {
        auto matches = addTarget.globalMatch(QString::fromUtf8(it.value()));
        while (matches.hasNext())
            folders.insert(matches.next().captured(1), it.key().section(QLatin1Char('/'), 0, -2));
    }
    return folders;
}

// The link edges of each library that break a rule, from target_link_libraries calls (Qt
// modules by their Qt6:: names).
QList<Violation> checkLinks(const QHash<QString, QByteArray> &lists)
{
    static const QRegularExpression linkCall(QStringLiteral("target_link_libraries\\(\\s*([A-Za-z0-9_]+)([^)]*)\\)"));
    static const QRegularExpression guiModule(
        QStringLiteral("^Qt6::(Gui|Quick|Qml|QuickControls2|Widgets|Charts|Svg)"));
    const QHash<QString, QString> folders = targetFolders(lists);
    QList<Violation> found;
    for (auto it = lists.begin(); it != lists.end(); ++it) {
        auto calls = linkCall.globalMatch(QString::fromUtf8(it.value()));
        while (calls.hasNext()) {
            const auto call = calls.next();
            const QString target = call.captured(1);
            if (!folders.contains(target))
                continue; // a test or a program: app and tests may link anything
            const QString from = layerOf(folders.value(target) + QStringLiteral("/x"));
            if (from.isEmpty() || from == QLatin1String("app") || from == QLatin1String("qml"))
                continue;
            const QStringList words = call.captured(2).simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
            for (const QString &word : words) {
                const QString where = it.key() + QStringLiteral(": ") + target;
                if (guiModule.match(word).hasMatch()) {
                    found.append({where, word, QStringLiteral("nothing below app/ links Qt's GUI modules")});
                } else if (folders.contains(word)) {
                    const QString to = layerOf(folders.value(word) + QStringLiteral("/x"));
                    if (const QString why = forbidden(from, to); !why.isEmpty())
                        found.append({where, word, why});
                }
            }
        }
    }
    return found;
}

// The tree's files below the folders the layers live in, by path relative to the tree.
QHash<QString, QByteArray> treeFiles(const QStringList &nameFilters)
{
    QHash<QString, QByteArray> files;
    const QDir root(pando::test::sourceDir());
    for (const QString &top :
         {QStringLiteral("core"), QStringLiteral("adapters"), QStringLiteral("app"), QStringLiteral("qml")}) {
        QDirIterator it(root.filePath(top), nameFilters, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            QFile file(it.next());
            if (file.open(QIODevice::ReadOnly))
                files.insert(root.relativeFilePath(file.fileName()), file.readAll());
        }
    }
    return files;
}

} // namespace

class TestLayering : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void layer_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("layer");
        QTest::newRow("core") << u"core/engine/engine.h"_s << u"core"_s;
        QTest::newRow("pipelines") << u"core/pipelines/wire/wire.h"_s << u"core"_s;
        QTest::newRow("api") << u"adapters/api/error.h"_s << u"api"_s;
        QTest::newRow("kit") << u"adapters/kit/dockerapi/dockerclient.h"_s << u"kit:dockerapi"_s;
        QTest::newRow("adapter") << u"adapters/runtime/docker/dockerruntime.h"_s << u"adapter:runtime/docker"_s;
        QTest::newRow("app") << u"app/server/handlers.cpp"_s << u"app"_s;
        QTest::newRow("qml") << u"qml/apps/appsmodel.h"_s << u"qml"_s;
        QTest::newRow("tests") << u"tests/core/x.cpp"_s << u""_s;
    }
    void layer()
    {
        QFETCH(QString, path);
        QFETCH(QString, layer);
        QCOMPARE(layerOf(path), layer);
    }

    void includeRule_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("include");
        QTest::addColumn<bool>("allowed");
        QTest::newRow("core to api") << u"core/a/a.cpp"_s << u"#include \"adapters/api/runtime.h\""_s << true;
        QTest::newRow("core to core") << u"core/a/a.cpp"_s << u"#include \"core/b/b.h\""_s << true;
        QTest::newRow("core beside") << u"core/a/a.cpp"_s << u"#include \"a.h\""_s << true;
        QTest::newRow("core to Qt core") << u"core/a/a.cpp"_s << u"#include <QJsonObject>"_s << true;
        QTest::newRow("core to app") << u"core/a/a.cpp"_s << u"#include \"app/server/apiserver.h\""_s << false;
        QTest::newRow("core to qml") << u"core/a/a.cpp"_s << u"#include \"qml/apps/appsmodel.h\""_s << false;
        QTest::newRow("core to adapter") << u"core/a/a.cpp"_s
                                         << u"#include \"adapters/runtime/docker/dockerruntime.h\""_s << false;
        QTest::newRow("core to kit") << u"core/a/a.cpp"_s << u"#include \"adapters/kit/dockerapi/dockerclient.h\""_s
                                     << false;
        QTest::newRow("core to QtQuick") << u"core/a/a.cpp"_s << u"#include <QtQuick/QQuickItem>"_s << false;
        QTest::newRow("core to QGuiApplication") << u"core/a/a.cpp"_s << u"#include <QGuiApplication>"_s << false;
        QTest::newRow("adapter to api") << u"adapters/runtime/x/x.cpp"_s << u"#include \"adapters/api/runtime.h\""_s
                                        << true;
        QTest::newRow("adapter to kit") << u"adapters/runtime/x/x.cpp"_s
                                        << u"#include \"adapters/kit/dockerapi/dockerclient.h\""_s << true;
        QTest::newRow("adapter to itself")
            << u"adapters/runtime/x/x.cpp"_s << u"#include \"adapters/runtime/x/y.h\""_s << true;
        QTest::newRow("adapter to core") << u"adapters/runtime/x/x.cpp"_s << u"#include \"core/spec/appspec.h\""_s
                                         << false;
        QTest::newRow("adapter to adapter")
            << u"adapters/runtime/x/x.cpp"_s << u"#include \"adapters/runtime/docker/dockerruntime.h\""_s << false;
        QTest::newRow("adapter to adapter of another kind")
            << u"adapters/resource/git/a.cpp"_s << u"#include \"adapters/source/generic/gitsource.h\""_s << false;
        QTest::newRow("adapter climbing out")
            << u"adapters/runtime/x/x.cpp"_s << u"#include \"../docker/dockerruntime.h\""_s << false;
        QTest::newRow("kit to kit") << u"adapters/kit/a/a.cpp"_s << u"#include \"adapters/kit/b/b.h\""_s << true;
        QTest::newRow("kit to adapter") << u"adapters/kit/a/a.cpp"_s << u"#include \"adapters/runtime/x/x.h\""_s
                                        << false;
        QTest::newRow("api to kit") << u"adapters/api/a.h"_s << u"#include \"adapters/kit/b/b.h\""_s << false;
        QTest::newRow("app to anything") << u"app/server/a.cpp"_s << u"#include \"adapters/runtime/docker/d.h\""_s
                                         << true;
        QTest::newRow("app to gui") << u"app/desktop/a.cpp"_s << u"#include <QGuiApplication>"_s << true;
    }
    void includeRule()
    {
        QFETCH(QString, file);
        QFETCH(QString, include);
        QFETCH(bool, allowed);
        const QList<Violation> found = checkIncludes(file, include.toUtf8());
        QVERIFY2(found.isEmpty() == allowed, qPrintable(describe(found)));
    }

    void linkRule_data()
    {
        QTest::addColumn<QString>("lists");
        QTest::addColumn<bool>("allowed");
        const QString targets = QStringLiteral("core/a/CMakeLists.txt|add_library(pando_core_a STATIC a.cpp)\n"
                                               "adapters/api/CMakeLists.txt|add_library(pando_adapters_api a.cpp)\n"
                                               "adapters/kit/k/CMakeLists.txt|add_library(pando_kit_k k.cpp)\n"
                                               "adapters/runtime/x/CMakeLists.txt|add_library(pando_x x.cpp)\n"
                                               "adapters/runtime/y/CMakeLists.txt|add_library(pando_y y.cpp)\n");
        QTest::newRow("core links api")
            << targets +
                   u"core/a/CMakeLists.txt|target_link_libraries(pando_core_a PUBLIC pando_adapters_api Qt6::Sql)"_s
            << true;
        QTest::newRow("adapter links kit")
            << targets + u"adapters/runtime/x/CMakeLists.txt|target_link_libraries(pando_x PRIVATE pando_kit_k)"_s
            << true;
        QTest::newRow("core links adapter")
            << targets + u"core/a/CMakeLists.txt|target_link_libraries(pando_core_a PUBLIC pando_x)"_s << false;
        QTest::newRow("core links Qt Gui")
            << targets + u"core/a/CMakeLists.txt|target_link_libraries(pando_core_a PUBLIC Qt6::Gui)"_s << false;
        QTest::newRow("adapter links core")
            << targets + u"adapters/runtime/x/CMakeLists.txt|target_link_libraries(pando_x PUBLIC pando_core_a)"_s
            << false;
        QTest::newRow("adapter links adapter")
            << targets + u"adapters/runtime/x/CMakeLists.txt|target_link_libraries(pando_x\n PUBLIC pando_y)"_s
            << false;
    }
    void linkRule()
    {
        QFETCH(QString, lists);
        QFETCH(bool, allowed);
        // One CMakeLists.txt per row group: "path|text", texts of one path joined.
        QHash<QString, QByteArray> files;
        for (const QString &entry : lists.split(QRegularExpression(QStringLiteral("\n(?=[a-z]+/)")))) {
            const QString path = entry.section(QLatin1Char('|'), 0, 0);
            files[path].append(entry.section(QLatin1Char('|'), 1).toUtf8()).append('\n');
        }
        const QList<Violation> found = checkLinks(files);
        QVERIFY2(found.isEmpty() == allowed, qPrintable(describe(found)));
    }

    void includesOfTheTree()
    {
        const auto files = treeFiles({QStringLiteral("*.h"), QStringLiteral("*.cpp")});
        QVERIFY2(files.size() > 100, "the source tree was not found (PANDO_SOURCE_DIR)");
        QList<Violation> found;
        for (auto it = files.begin(); it != files.end(); ++it)
            found += checkIncludes(it.key(), it.value());
        QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("include edges against the layers:\n") + describe(found)));
    }

    void linksOfTheTree()
    {
        const auto lists = treeFiles({QStringLiteral("CMakeLists.txt")});
        QVERIFY2(lists.size() > 20, "the source tree was not found (PANDO_SOURCE_DIR)");
        const QList<Violation> found = checkLinks(lists);
        QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("link edges against the layers:\n") + describe(found)));
    }
};

QTEST_GUILESS_MAIN(TestLayering)
#include "tst_layering.moc"
