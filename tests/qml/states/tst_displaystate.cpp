// DisplayState and StateStyle: every status word the API sends for deploys, deploy steps, apps,
// runs and run steps becomes one display state; every state has its own colour, shape and word;
// and the tray's SVG icons draw each overall state in StateStyle's colour.

#include "app/desktop/shell/desktopstate.h"
#include "qml/states/displaystate.h"
#include "qml/states/statestyle.h"

#include <QFile>
#include <QGuiApplication>
#include <QSet>
#include <QTest>

using namespace pando::desktop;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(DisplayState::Value)

class TestDisplayState : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void deploys_data()
    {
        QTest::addColumn<QString>("status");
        QTest::addColumn<DisplayState::Value>("deploy");
        QTest::addColumn<DisplayState::Value>("step");
        QTest::newRow("queued") << u"queued"_s << DisplayState::Progress << DisplayState::Neutral;
        QTest::newRow("running") << u"running"_s << DisplayState::Progress << DisplayState::Progress;
        QTest::newRow("awaiting-approval") << u"awaiting-approval"_s << DisplayState::Waiting << DisplayState::Neutral;
        QTest::newRow("waiting") << u"waiting"_s << DisplayState::Neutral << DisplayState::Waiting;
        QTest::newRow("succeeded") << u"succeeded"_s << DisplayState::Healthy << DisplayState::Healthy;
        QTest::newRow("failed") << u"failed"_s << DisplayState::Failed << DisplayState::Failed;
        QTest::newRow("rejected") << u"rejected"_s << DisplayState::Failed << DisplayState::Neutral;
        QTest::newRow("cancelled") << u"cancelled"_s << DisplayState::Stopped << DisplayState::Neutral;
        QTest::newRow("skipped") << u"skipped"_s << DisplayState::Neutral << DisplayState::Neutral;
    }
    void deploys()
    {
        QFETCH(QString, status);
        QFETCH(DisplayState::Value, deploy);
        QFETCH(DisplayState::Value, step);
        QCOMPARE(DisplayState::ofDeploy(status), deploy);
        QCOMPARE(DisplayState::ofDeployStep(status), step);
    }

    void runs_data()
    {
        QTest::addColumn<QString>("status");
        QTest::addColumn<DisplayState::Value>("state");
        QTest::newRow("queued") << u"queued"_s << DisplayState::Neutral;
        QTest::newRow("pending") << u"pending"_s << DisplayState::Neutral;
        QTest::newRow("running") << u"running"_s << DisplayState::Progress;
        QTest::newRow("waiting") << u"waiting"_s << DisplayState::Waiting;
        QTest::newRow("succeeded") << u"succeeded"_s << DisplayState::Healthy;
        QTest::newRow("failed") << u"failed"_s << DisplayState::Failed;
        QTest::newRow("errored") << u"errored"_s << DisplayState::Failed;
        QTest::newRow("cached") << u"cached"_s << DisplayState::Cached;
        QTest::newRow("aborted") << u"aborted"_s << DisplayState::Stopped;
        QTest::newRow("skipped") << u"skipped"_s << DisplayState::Neutral;
    }
    void runs()
    {
        QFETCH(QString, status);
        QFETCH(DisplayState::Value, state);
        QCOMPARE(DisplayState::ofRun(status), state);
    }

    void apps_data()
    {
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("lastDeploy");
        QTest::addColumn<bool>("busy");
        QTest::addColumn<DisplayState::Value>("state");
        QTest::newRow("new") << u"new"_s << QString() << false << DisplayState::Neutral;
        QTest::newRow("new, first deploy failed") << u"new"_s << u"failed"_s << false << DisplayState::Failed;
        QTest::newRow("new, deploy asked for") << u"new"_s << QString() << true << DisplayState::Progress;
        QTest::newRow("deploying") << u"deploying"_s << u"running"_s << false << DisplayState::Progress;
        QTest::newRow("running") << u"running"_s << u"succeeded"_s << false << DisplayState::Healthy;
        QTest::newRow("running, redeploy queued") << u"running"_s << u"queued"_s << false << DisplayState::Progress;
        QTest::newRow("running, approval waiting")
            << u"running"_s << u"awaiting-approval"_s << false << DisplayState::Waiting;
        QTest::newRow("failed") << u"failed"_s << u"failed"_s << false << DisplayState::Failed;
        QTest::newRow("stopped") << u"stopped"_s << u"succeeded"_s << false << DisplayState::Stopped;
        QTest::newRow("unhealthy") << u"unhealthy"_s << u"succeeded"_s << false << DisplayState::Failed;
        QTest::newRow("removing") << u"removing"_s << u"succeeded"_s << false << DisplayState::Progress;
    }
    void apps()
    {
        QFETCH(QString, status);
        QFETCH(QString, lastDeploy);
        QFETCH(bool, busy);
        QFETCH(DisplayState::Value, state);
        QCOMPARE(DisplayState::ofApp(status, lastDeploy, busy), state);
    }

    // Colour is never the only signal: no two states share a shape or a word, and the ones a user
    // must tell apart at a glance do not share a colour either.
    void everyStateHasItsOwnColourShapeAndWord()
    {
        const QList<DisplayState::Value> all{DisplayState::Healthy, DisplayState::Progress, DisplayState::Waiting,
                                             DisplayState::Failed,  DisplayState::Cached,   DisplayState::Stopped,
                                             DisplayState::Neutral};
        QSet<QString> shapes, words, colours;
        for (DisplayState::Value state : all) {
            shapes.insert(StateStyle::shapeOf(state));
            words.insert(StateStyle::wordOf(state));
            colours.insert(StateStyle::colourOf(state).name());
        }
        QCOMPARE(shapes.size(), all.size());
        QCOMPARE(words.size(), all.size());
        QCOMPARE(colours.size(), all.size());
        const StateStyle style;
        QCOMPARE(style.accent(), StateStyle::colourOf(DisplayState::Progress));
        QCOMPARE(style.colour(DisplayState::Failed), QColor(u"#d2352b"_s));
        QCOMPARE(style.shape(DisplayState::Cached), u"cached"_s);
        QCOMPARE(style.word(DisplayState::Waiting), u"waiting for approval"_s);
    }

    // The tray draws the overall state with the same colours as the marks in the window.
    void trayIconsDrawTheStatesColours_data()
    {
        QTest::addColumn<DisplayState::Value>("state");
        QTest::newRow("offline") << DisplayState::Stopped;
        QTest::newRow("waiting") << DisplayState::Waiting;
        QTest::newRow("failing") << DisplayState::Failed;
        QTest::newRow("busy") << DisplayState::Progress;
        QTest::newRow("healthy") << DisplayState::Healthy;
    }
    void trayIconsDrawTheStatesColours()
    {
        QFETCH(DisplayState::Value, state);
        QFile svg(DesktopState::iconFor(state));
        QVERIFY2(svg.open(QIODevice::ReadOnly), qPrintable(svg.fileName()));
        const QString text = QString::fromUtf8(svg.readAll());
        QVERIFY2(text.contains(StateStyle::colourOf(state).name()),
                 qPrintable(svg.fileName() + u" does not draw "_s + StateStyle::colourOf(state).name()));
    }
    void trayIconsDifferPerState()
    {
        QSet<QString> icons;
        for (auto state : {DisplayState::Stopped, DisplayState::Waiting, DisplayState::Failed, DisplayState::Progress,
                           DisplayState::Healthy})
            icons.insert(DesktopState::iconFor(state));
        QCOMPARE(icons.size(), 5);
    }
};

QTEST_GUILESS_MAIN(TestDisplayState)
#include "tst_displaystate.moc"
