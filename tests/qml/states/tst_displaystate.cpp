// DisplayState and StateStyle: every status word the API sends for deploys, deploy steps, apps,
// runs and run steps becomes one display state; every state has its own colour, shape and word;
// the tray's icons draw each overall state in StateStyle's colour; and every mark and word reaches
// 4.5:1 against every background it is drawn on.

#include "app/desktop/shell/desktopstate.h"
#include "qml/states/displaystate.h"
#include "qml/states/statemarks.h"
#include "qml/states/statestyle.h"

#include <QGuiApplication>
#include <QPainter>
#include <QPalette>
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

    // The tray draws the overall state with the same drawing and colour as the marks in the
    // window: its most common opaque colour is the state's.
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
        const QImage icon =
            marks::trayIcon(state).pixmap(QSize(32, 32)).toImage().convertToFormat(QImage::Format_ARGB32);
        QCOMPARE(icon.size(), QSize(32, 32));
        QHash<QRgb, int> counts;
        for (int y = 0; y < icon.height(); ++y)
            for (int x = 0; x < icon.width(); ++x)
                if (qAlpha(icon.pixel(x, y)) == 255)
                    ++counts[icon.pixel(x, y)];
        QVERIFY(!counts.isEmpty());
        const QRgb most = std::max_element(counts.cbegin(), counts.cend()).key();
        QCOMPARE(QColor(most).name(), StateStyle::colourOf(state).name());
    }
    void trayIconsDifferPerState()
    {
        QSet<QByteArray> icons;
        for (auto state : {DisplayState::Stopped, DisplayState::Waiting, DisplayState::Failed, DisplayState::Progress,
                           DisplayState::Healthy}) {
            const QImage image = marks::trayIcon(state).pixmap(QSize(32, 32)).toImage();
            icons.insert(QByteArray(reinterpret_cast<const char *>(image.constBits()), image.sizeInBytes()));
        }
        QCOMPARE(icons.size(), 5);
    }

    // Every mark and its word reach 4.5:1 on every background a view draws them on, in a light
    // and a dark palette, the selection included: measured on the rendered pixels.
    void marksReadOnEveryBackground_data()
    {
        QTest::addColumn<QPalette>("palette");
        QTest::addColumn<QPalette::ColorRole>("role");
        for (const auto &[scheme, palette] : {std::pair{"light", lightPalette()}, std::pair{"dark", darkPalette()}}) {
            for (QPalette::ColorRole role :
                 {QPalette::Window, QPalette::Base, QPalette::AlternateBase, QPalette::Highlight})
                QTest::addRow("%s-%d", scheme, int(role)) << palette << role;
        }
    }
    void marksReadOnEveryBackground()
    {
        QFETCH(QPalette, palette);
        QFETCH(QPalette::ColorRole, role);
        const QPalette shown = StateStyle::withReadableSelection(palette);
        const QColor background = shown.color(role);
        const QColor text = shown.color(role == QPalette::Highlight ? QPalette::HighlightedText : QPalette::WindowText);
        const StateStyle style;
        for (DisplayState::Value state : allStates()) {
            QImage image(48, 48, QImage::Format_ARGB32_Premultiplied);
            image.fill(background);
            {
                QPainter painter(&image);
                painter.drawImage(
                    0, 0, marks::render(StateStyle::shapeOf(state), style.on(state, background), background, 48));
            }
            double best = 1;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    best = std::max(best, marks::contrast(QColor(image.pixel(x, y)), background));
            QVERIFY2(
                best >= 4.5,
                qPrintable(u"%1 on %2: %3:1"_s.arg(StateStyle::wordOf(state), background.name()).arg(best, 0, 'f', 2)));
            // The mark's hue stays the state's: only its lightness moved.
            const QColor drawn = style.on(state, background).toHsl();
            if (StateStyle::colourOf(state).hslSaturationF() > 0.2)
                QVERIFY2(std::abs(drawn.hslHueF() - StateStyle::colourOf(state).toHsl().hslHueF()) < 0.02,
                         qPrintable(StateStyle::wordOf(state) + u" drawn "_s + drawn.name()));
            QVERIFY(marks::contrast(style.readable(text, background), background) >= 4.5);
        }
        QVERIFY(marks::contrast(StateStyle::dangerOn(shown), shown.color(QPalette::Window)) >= 4.5);
        QVERIFY(marks::contrast(StateStyle::dangerOn(shown), shown.color(QPalette::Base)) >= 4.5);
    }

    // Fusion's own selection blue reaches 3.6:1 with white text; the desktop's reaches 7:1.
    void selectionIsReadable()
    {
        for (const QPalette &palette : {lightPalette(), darkPalette()}) {
            const QPalette shown = StateStyle::withReadableSelection(palette);
            QVERIFY(marks::contrast(shown.color(QPalette::Highlight), shown.color(QPalette::HighlightedText)) >= 7.0);
        }
        QVERIFY(marks::contrast(QColor(u"#308cc6"_s), Qt::white) < 4.5);
    }

    // The arithmetic against WCAG's own examples.
    void contrastRatio()
    {
        QCOMPARE(qRound(marks::contrast(Qt::black, Qt::white) * 10), 210);
        QCOMPARE(marks::contrast(Qt::red, Qt::red), 1.0);
        QCOMPARE(qRound(marks::contrast(QColor(u"#777777"_s), Qt::white) * 100), 448);
        QCOMPARE(marks::readable(Qt::black, Qt::white), QColor(Qt::black));
    }

private:
    static QList<DisplayState::Value> allStates()
    {
        return {DisplayState::Healthy, DisplayState::Progress, DisplayState::Waiting, DisplayState::Failed,
                DisplayState::Cached,  DisplayState::Stopped,  DisplayState::Neutral};
    }
    // Fusion's light palette, as the offscreen platform gives it.
    static QPalette lightPalette() { return QGuiApplication::palette(); }
    // A dark palette as desktops set Fusion's (the colours of its usual dark scheme).
    static QPalette darkPalette()
    {
        QPalette p;
        p.setColor(QPalette::Window, QColor(0x35, 0x35, 0x35));
        p.setColor(QPalette::WindowText, Qt::white);
        p.setColor(QPalette::Base, QColor(0x2a, 0x2a, 0x2a));
        p.setColor(QPalette::AlternateBase, QColor(0x42, 0x42, 0x42));
        p.setColor(QPalette::Text, Qt::white);
        p.setColor(QPalette::Highlight, QColor(0x2a, 0x82, 0xda));
        p.setColor(QPalette::HighlightedText, Qt::white);
        return p;
    }
};

QTEST_MAIN(TestDisplayState)
#include "tst_displaystate.moc"
