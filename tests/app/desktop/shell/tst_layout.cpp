// Every view of the pando-desktop window, with real content (a running app, a failed one with a
// long name and a long reason, a pipeline with a finished run, each tab of each detail), laid out
// at window sizes from 960×600 (a 1440×900 screen at 1.5×) to 3840×2160, with the normal font
// and one half larger; ctest runs it a second time at 2× (tst_layout_2x). It checks item
// geometry, not pixels: no text is drawn outside the area that shows it (cut by the window or by
// a clipping parent that does not scroll that way), none is elided to a stub, and no two texts
// overlap.

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlProperty>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

// A text shown in fewer logical pixels than this is elided to a stub ("N…").
constexpr qreal MinElidedWidth = 40;
// Geometry is in logical pixels with fractions: a pixel of slack either way.
constexpr qreal Slack = 1.0;

struct TextBox {
    QQuickItem *item = nullptr;
    QRectF rect; // where its glyphs are drawn, in scene coordinates
    int layer = 0;
};

// What may cut an item off along each axis: the window and every clipping parent that does not
// scroll that way (a list cuts the rows it scrolls past, never a row's text sideways).
struct Clip {
    qreal left = -1e9, right = 1e9, top = -1e9, bottom = 1e9;
    QRectF visible; // what is on screen at all
};

QString describe(QQuickItem *item)
{
    QString path;
    for (QQuickItem *i = item; i; i = i->parentItem()) {
        const QString name = i->objectName();
        if (!name.isEmpty()) {
            path = name;
            break;
        }
    }
    return u"\"%1\" (%2 in %3)"_s.arg(item->property("text").toString().left(60),
                                      QString::fromLatin1(item->metaObject()->className()),
                                      path.isEmpty() ? u"?"_s : path);
}

bool isAncestor(const QQuickItem *ancestor, const QQuickItem *item)
{
    for (const QQuickItem *i = item->parentItem(); i; i = i->parentItem())
        if (i == ancestor)
            return true;
    return false;
}

class LayoutCheck {
public:
    QStringList problems;

    void run(QQuickWindow *window)
    {
        m_boxes.clear();
        Clip clip;
        clip.left = 0;
        clip.top = 0;
        clip.right = window->width();
        clip.bottom = window->height();
        clip.visible = QRectF(0, 0, window->width(), window->height());
        walk(window->contentItem(), clip, 1.0, 0);
        for (qsizetype i = 0; i < m_boxes.size(); ++i) {
            for (qsizetype j = i + 1; j < m_boxes.size(); ++j) {
                const TextBox &a = m_boxes[i];
                const TextBox &b = m_boxes[j];
                if (a.layer != b.layer || isAncestor(a.item, b.item) || isAncestor(b.item, a.item))
                    continue;
                const QRectF both = a.rect.intersected(b.rect);
                if (both.width() > 2 * Slack && both.height() > 2 * Slack)
                    problems << u"overlap: %1 and %2"_s.arg(describe(a.item), describe(b.item));
            }
        }
    }

private:
    QList<TextBox> m_boxes;

    void walk(QQuickItem *item, Clip clip, qreal opacity, int layer)
    {
        if (!item->isVisible() || item->opacity() * opacity < 0.05 || item->width() < 0 || item->height() < 0)
            return;
        opacity *= item->opacity();
        // A popup (dialog, menu, tool tip) draws over the window: its texts are their own layer.
        if (item->inherits("QQuickPopupItem"))
            layer = int(reinterpret_cast<quintptr>(item) & 0x7fffffff);
        if (item->clip()) {
            const QRectF own = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
            clip.visible = clip.visible.intersected(own);
            bool sideways = false;
            bool vertically = false;
            // A flickable scrolls what it cuts; so does a scroll view, through its flickable.
            QQuickItem *flickable = item->inherits("QQuickFlickable") ? item : nullptr;
            if (item->inherits("QQuickScrollView"))
                flickable = item->property("contentItem").value<QQuickItem *>();
            if (flickable) {
                sideways = flickable->property("contentWidth").toReal() > flickable->width() + Slack;
                vertically = flickable->property("contentHeight").toReal() > flickable->height() + Slack;
            }
            if (!sideways) {
                clip.left = std::max(clip.left, own.left());
                clip.right = std::min(clip.right, own.right());
            }
            if (!vertically) {
                clip.top = std::max(clip.top, own.top());
                clip.bottom = std::min(clip.bottom, own.bottom());
            }
        }
        if (item->inherits("QQuickText"))
            checkText(item, clip, layer);
        for (QQuickItem *child : item->childItems())
            walk(child, clip, opacity, layer);
    }

    void checkText(QQuickItem *item, const Clip &clip, int layer)
    {
        const QString text = item->property("text").toString().trimmed();
        if (text.isEmpty())
            return;
        const QRectF rect = item->mapRectToScene(item->boundingRect());
        if (!rect.intersects(clip.visible))
            return; // scrolled away
        if (rect.left() < clip.left - Slack || rect.right() > clip.right + Slack || rect.top() < clip.top - Slack ||
            rect.bottom() > clip.bottom + Slack)
            problems << u"cut off: %1 drawn at %2,%3 %4×%5, shown in x %6..%7, y %8..%9"_s.arg(describe(item))
                            .arg(rect.x())
                            .arg(rect.y())
                            .arg(rect.width())
                            .arg(rect.height())
                            .arg(clip.left)
                            .arg(clip.right)
                            .arg(clip.top)
                            .arg(clip.bottom);
        if (item->property("truncated").toBool() && item->width() < MinElidedWidth)
            problems << u"elided to a stub: %1 in %2 px"_s.arg(describe(item)).arg(item->width());
        // What is drawn of it: a list's row half scrolled out is cut where the list ends.
        m_boxes.append({item, rect.intersected(clip.visible), layer});
    }
};

} // namespace

class TestLayout : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;
    std::unique_ptr<DesktopState> m_state;
    QString m_longApp = u"customer-billing-reconciliation-worker-eu-west"_s;

    QByteArray appSpec(const QString &name, const QString &healthPath) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"health:\n  path: %3\n  timeout: 2s\n"_s.arg(name)
                   .arg(m_install.port)
                   .arg(healthPath)
                   .toUtf8();
    }

    // The sidebar of the window's QML: the object with the "current" page.
    static QObject *sidebar(QQuickWindow *window)
    {
        for (QQuickItem *item : window->findChildren<QQuickItem *>())
            if (QString::fromLatin1(item->metaObject()->className()).startsWith(u"Sidebar"_s))
                return item;
        return nullptr;
    }

    // The visible tab bars of the current view.
    static QList<QQuickItem *> tabBars(QQuickWindow *window)
    {
        QList<QQuickItem *> bars;
        for (QQuickItem *item : window->findChildren<QQuickItem *>())
            if (item->inherits("QQuickTabBar") && item->isVisible())
                bars << item;
        return bars;
    }

    static void settle() { QTest::qWait(120); }

    // Lays out every view and tab at every size in a freshly loaded window; the problems found.
    QStringList checkAll(qreal fontScale)
    {
        QFont font = QGuiApplication::font();
        const QFont original = font;
        font.setPointSizeF(original.pointSizeF() * fontScale);
        QGuiApplication::setFont(font);
        QQmlApplicationEngine engine;
        engine.addImportPath(u"qrc:/qt/qml"_s);
        engine.load(QUrl(u"qrc:/qt/qml/Pando/Shell/Main.qml"_s));
        QStringList problems;
        if (engine.rootObjects().isEmpty())
            return {u"the window did not load"_s};
        auto *window = qobject_cast<QQuickWindow *>(engine.rootObjects().first());
        QObject *pages = sidebar(window);
        if (!pages)
            return {u"no sidebar"_s};
        window->show();
        if (!QTest::qWaitForWindowExposed(window))
            return {u"the window was never shown"_s};
        const qreal ratio = window->devicePixelRatio();
        const QList<QSize> sizes{{960, 600}, {1024, 700}, {1280, 800}, {1920, 1080}, {3840, 2160}};
        for (const QSize &size : sizes) {
            // A screen has at most 3840×2160 device pixels.
            if (size.width() * ratio > 3840 || size.height() * ratio > 2160)
                continue;
            window->resize(size);
            for (int page = 0; page < 6; ++page) {
                QQmlProperty::write(pages, u"current"_s, page);
                settle();
                // Each tab of the view's details, one after the other; the view itself when it has none.
                const QList<QQuickItem *> bars = tabBars(window);
                QList<std::pair<QQuickItem *, int>> tabs{{nullptr, 0}};
                for (QQuickItem *bar : bars)
                    for (int i = 0; i < bar->property("count").toInt(); ++i)
                        tabs.append({bar, i});
                for (const auto &[bar, index] : tabs) {
                    if (bar) {
                        QQmlProperty::write(bar, u"currentIndex"_s, index);
                        settle();
                    }
                    // What a person sees once the tab has settled: a deploy's steps and output
                    // arrive over the network after the tab shows, and a layout is judged after
                    // the answers it waits for came (up to 2 s), not in the frame between.
                    LayoutCheck check;
                    check.run(window);
                    for (int again = 0; again < 20 && !check.problems.isEmpty(); ++again) {
                        QTest::qWait(100);
                        check = LayoutCheck();
                        check.run(window);
                    }
                    for (const QString &problem : std::as_const(check.problems)) {
                        const QString where = u"%1×%2 font ×%3 at %4× · page %5%6: "_s.arg(size.width())
                                                  .arg(size.height())
                                                  .arg(fontScale)
                                                  .arg(ratio)
                                                  .arg(page)
                                                  .arg(bar ? u" tab %1"_s.arg(index) : QString());
                        if (!problems.contains(where + problem))
                            problems << where + problem;
                    }
                }
                for (QQuickItem *bar : bars)
                    QQmlProperty::write(bar, u"currentIndex"_s, 0);
            }
        }
        QGuiApplication::setFont(original);
        return problems;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_install.realPipelines = true;
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_state = std::make_unique<DesktopState>(m_session.get());
        DesktopState::setInstance(m_state.get());
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));

        // A running app and a failed one with a long name whose health check names a long path.
        for (const auto &[name, path] :
             {std::pair{u"hello"_s, u"/api/v1/health"_s},
              std::pair{m_longApp, u"/status/of/the/reconciliation/worker/that/never/answers"_s}}) {
            auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(name, path), done); });
            QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        }
        AppsModel &apps = *m_state->apps();
        QTRY_COMPARE(apps.rowCount(), 2);
        apps.deploy(apps.rowOf(u"hello"_s));
        apps.deploy(apps.rowOf(m_longApp));
        // What the row says when it is not running yet: the deploy's own state, not only "new".
        const auto row = [&apps](const QString &name) {
            const QModelIndex at = apps.index(apps.rowOf(name));
            QStringList said;
            for (int role : {AppsModel::StatusRole, AppsModel::LastDeployStatusRole, AppsModel::ProgressRole,
                             AppsModel::LastDeployErrorRole, AppsModel::ActionErrorRole})
                said << at.data(role).toString();
            return said.join(u" | "_s);
        };
        QTRY_VERIFY2_WITH_TIMEOUT(apps.index(apps.rowOf(u"hello"_s)).data(AppsModel::StatusRole).toString() ==
                                      u"running"_s,
                                  qPrintable(row(u"hello"_s)), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(apps.index(apps.rowOf(m_longApp)).data(AppsModel::LastDeployStatusRole).toString(),
                                  u"failed"_s, 30000);
        apps.setSelectedRow(apps.rowOf(m_longApp));

        // A pipeline with a finished run, selected with its step tree, whose passed: graph has
        // three stages (two jobs after the first, one after both).
        const QByteArray yaml = "resource_types:\n- name: counter\n  commands:\n"
                                "    check: |\n      echo '[{\"n\": \"1\"}]'\n"
                                "    in: |\n      echo '{\"version\": {\"n\": \"1\"}}'\n"
                                "resources:\n- name: source-tree\n  type: counter\n  check_every: never\n"
                                "jobs:\n"
                                "- name: package-the-release-artifacts\n  plan:\n"
                                "  - get: source-tree\n    passed: [build-and-test-everything]\n"
                                "- name: publish-documentation-site\n  plan:\n"
                                "  - get: source-tree\n    passed: [build-and-test-everything]\n"
                                "- name: ship-to-production\n  plan:\n"
                                "  - get: source-tree\n"
                                "    passed: [package-the-release-artifacts, publish-documentation-site]\n"
                                "- name: build-and-test-everything\n  plan:\n"
                                "  - get: source-tree\n"
                                "  - task: compile-the-whole-project\n"
                                "    config: {platform: host, run: {path: sh, args: [\"-c\", \"echo compiled\"]}}\n"
                                "  - in_parallel:\n"
                                "    - task: unit-tests-with-a-long-name\n"
                                "      config: {platform: host, run: {path: sh, args: [\"-c\", \"echo 3 passed\"]}}\n"
                                "    - task: lint\n"
                                "      config: {platform: host, run: {path: sh, args: [\"-c\", \"exit 1\"]}}\n";
        auto set = test::awaitObject([&](auto done) { m_session->setPipeline(u"release-train"_s, yaml, {}, done); });
        QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
        QVERIFY(m_install.allowHostExecution(u"release-train"_s));
        QVERIFY(test::awaitObject([&](auto done) { m_session->setPipelinePaused(u"release-train"_s, false, done); }));
        const Status checked = test::awaitDone(
            [&](auto done) { m_session->checkResource(u"release-train"_s, u"source-tree"_s, {}, done); });
        QVERIFY2(checked, qPrintable(checked ? QString() : test::describe(checked.error())));
        auto run = test::awaitObject(
            [&](auto done) { m_session->triggerJob(u"release-train"_s, u"build-and-test-everything"_s, false, done); });
        QVERIFY2(run, qPrintable(run ? QString() : run.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(m_state->runs()->rowCount() > 0, true, 20000);
        m_state->pipelines()->setSelectedRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(m_state->runs()->selectId(run->value(u"id"_s).toString()), 20000);
    }

    void everyViewFitsEverySize_data()
    {
        QTest::addColumn<qreal>("fontScale");
        QTest::newRow("normal font") << 1.0;
        QTest::newRow("large font") << 1.5;
    }
    void everyViewFitsEverySize()
    {
        QFETCH(qreal, fontScale);
        const QStringList problems = checkAll(fontScale);
        for (const QString &problem : problems)
            qWarning("%s", qPrintable(problem));
        QVERIFY2(problems.isEmpty(),
                 qPrintable(u"%1 layout problems:\n"_s.arg(problems.size()) + problems.mid(0, 40).join(u'\n')));
    }

    void cleanupTestCase() { DesktopState::setInstance(nullptr); }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
