// ANSI escape handling for the log view: visible text, styled spans (UTF-16 positions), styles
// carried into the next line, and every malformed or cut-off sequence removed, never shown.

#include "app/desktop/logs/ansi.h"

#include <QTest>

using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

QString describeColour(ansi::Colour c)
{
    switch (c >> 24) {
    case 1:
        return u"p"_s + QString::number(c & 0xff);
    case 2:
        return u"#"_s + QString::asprintf("%06x", c & 0xffffff);
    default:
        return u"-"_s;
    }
}

// "start+length fg/bg[/b]" per span, joined by " | ".
QString describe(const QList<ansi::Span> &spans)
{
    QStringList out;
    for (const ansi::Span &s : spans) {
        out << QString::number(s.start) + u'+' + QString::number(s.length) + u' ' + describeColour(s.style.fg) + u'/' +
                   describeColour(s.style.bg) + (s.style.bold ? u"/b"_s : QString());
    }
    return out.join(u" | "_s);
}

} // namespace

class TestAnsi : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void render_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("spans");

        QTest::newRow("plain") << QByteArray("hello\tworld") << u"hello\tworld"_s << QString();
        QTest::newRow("red then reset") << QByteArray("\x1b[31mred\x1b[0m plain") << u"red plain"_s << u"0+3 p1/-"_s;
        QTest::newRow("bright fg") << QByteArray("\x1b[91mX") << u"X"_s << u"0+1 p9/-"_s;
        QTest::newRow("bg and bright bg") << QByteArray("\x1b[41mA\x1b[107mB") << u"AB"_s << u"0+1 -/p1 | 1+1 -/p15"_s;
        QTest::newRow("all normal fgs") << QByteArray("\x1b[30ma\x1b[37mb\x1b[97mc") << u"abc"_s
                                        << u"0+1 p0/- | 1+1 p7/- | 2+1 p15/-"_s;
        QTest::newRow("256 colours") << QByteArray("\x1b[38;5;196mX\x1b[48;5;21mY") << u"XY"_s
                                     << u"0+1 p196/- | 1+1 p196/p21"_s;
        QTest::newRow("truecolour") << QByteArray("\x1b[38;2;10;20;30mX\x1b[48;2;255;0;1mY") << u"XY"_s
                                    << u"0+1 #0a141e/- | 1+1 #0a141e/#ff0001"_s;
        QTest::newRow("truecolour colon form") << QByteArray("\x1b[38:2::1:2:3mX") << u"X"_s << u"0+1 #010203/-"_s;
        QTest::newRow("truecolour colon short") << QByteArray("\x1b[38:2:1:2:3mX") << u"X"_s << u"0+1 #010203/-"_s;
        QTest::newRow("256 colon form") << QByteArray("\x1b[38:5:9mX") << u"X"_s << u"0+1 p9/-"_s;
        QTest::newRow("bold and normal intensity") << QByteArray("\x1b[1mB\x1b[22mN") << u"BN"_s << u"0+1 -/-/b"_s;
        QTest::newRow("combined") << QByteArray("\x1b[1;32;44mX") << u"X"_s << u"0+1 p2/p4/b"_s;
        QTest::newRow("empty params reset") << QByteArray("\x1b[31mA\x1b[mB") << u"AB"_s << u"0+1 p1/-"_s;
        QTest::newRow("default fg and bg")
            << QByteArray("\x1b[31;42mA\x1b[39mB\x1b[49mC") << u"ABC"_s << u"0+1 p1/p2 | 1+1 -/p2"_s;
        QTest::newRow("same style merges") << QByteArray("\x1b[31mA\x1b[31mB") << u"AB"_s << u"0+2 p1/-"_s;
        QTest::newRow("unknown attributes ignored") << QByteArray("\x1b[3;4;31mX") << u"X"_s << u"0+1 p1/-"_s;
        QTest::newRow("underline style subparams") << QByteArray("\x1b[4:3;31mX") << u"X"_s << u"0+1 p1/-"_s;
        QTest::newRow("256 index out of range") << QByteArray("\x1b[38;5;300mX") << u"X"_s << QString();
        QTest::newRow("truecolour component out of range") << QByteArray("\x1b[38;2;1;2;999mX") << u"X"_s << QString();
        QTest::newRow("cut 38;5 keeps earlier params") << QByteArray("\x1b[1;38;5mX") << u"X"_s << u"0+1 -/-/b"_s;
        QTest::newRow("cut truecolour") << QByteArray("\x1b[38;2;1;2mX") << u"X"_s << QString();
        QTest::newRow("huge number") << QByteArray("\x1b[99999999999999999mX") << u"X"_s << QString();
        QTest::newRow("truncated CSI at end") << QByteArray("abc\x1b[31") << u"abc"_s << QString();
        QTest::newRow("truncated CSI params only") << QByteArray("abc\x1b[") << u"abc"_s << QString();
        QTest::newRow("lone ESC at end") << QByteArray("abc\x1b") << u"abc"_s << QString();
        QTest::newRow("erase line and cursor") << QByteArray("\x1b[2K\x1b[1Gtext\x1b[?25h") << u"text"_s << QString();
        QTest::newRow("private SGR form ignored") << QByteArray("\x1b[>4;2mX") << u"X"_s << QString();
        QTest::newRow("CSI with intermediate") << QByteArray("\x1b[1 qX") << u"X"_s << QString();
        QTest::newRow("CSI broken by control") << QByteArray("\x1b[31\x07X") << u"X"_s << QString();
        QTest::newRow("CSI broken by non-ASCII") << QByteArray("\x1b[31\xc3\xa9X") << u"\u00e9X"_s << QString();
        QTest::newRow("OSC hyperlink ST")
            << QByteArray("\x1b]8;;https://example.org\x1b\\link\x1b]8;;\x1b\\!") << u"link!"_s << QString();
        QTest::newRow("OSC title BEL") << QByteArray("\x1b]0;title\x07"
                                                     "after")
                                       << u"after"_s << QString();
        QTest::newRow("unterminated OSC") << QByteArray("a\x1b]0;title") << u"a"_s << QString();
        QTest::newRow("DCS string") << QByteArray("\x1bPq#0;2;0;0;0\x1b\\ok") << u"ok"_s << QString();
        QTest::newRow("charset designation") << QByteArray("\x1b(Bok") << u"ok"_s << QString();
        QTest::newRow("cut charset designation") << QByteArray("ok\x1b(") << u"ok"_s << QString();
        QTest::newRow("two-byte escapes") << QByteArray("\x1b"
                                                        "7o\x1b"
                                                        "8k\x1b=")
                                          << u"ok"_s << QString();
        QTest::newRow("ESC before control") << QByteArray("a\x1b\x01"
                                                          "b")
                                            << u"ab"_s << QString();
        QTest::newRow("other controls dropped") << QByteArray("a\x08\x00\x7f"
                                                              "b",
                                                              5)
                                                << u"ab"_s << QString();
        QTest::newRow("carriage return progress") << QByteArray("10%\r20%\r100%") << u"100%"_s << QString();
        QTest::newRow("trailing carriage return") << QByteArray("abc\r") << u"abc"_s << QString();
        QTest::newRow("carriage return keeps style")
            << QByteArray("\x1b[32m1%\r\x1b[1m2%") << u"2%"_s << u"0+2 p2/-/b"_s;
        QTest::newRow("UTF-8 positions in UTF-16") << QByteArray("\xf0\x9f\x98\x80\x1b[31m\xc3\xa9\xe2\x82\xac\x1b[0mZ")
                                                   << u"\U0001F600\u00e9\u20acZ"_s << u"2+2 p1/-"_s;
    }

    void render()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QString, text);
        QFETCH(QString, spans);
        const ansi::RenderedLine line = ansi::render(raw);
        QCOMPARE(line.text, text);
        QCOMPARE(describe(line.spans), spans);
        // What search scans and copy returns is the same visible text.
        QCOMPARE(QString::fromUtf8(ansi::strip(raw)), text);
    }

    void styleCarriesIntoNextLine()
    {
        const ansi::Style red = ansi::styleAfter("\x1b[1;31mstarts red", {});
        QCOMPARE(red.fg, ansi::paletteColour(1));
        QVERIFY(red.bold);
        const ansi::RenderedLine next = ansi::render("still red \x1b[0mplain", red);
        QCOMPARE(describe(next.spans), u"0+10 p1/-/b"_s); // "still red "
        QCOMPARE(ansi::styleAfter("still red \x1b[0mplain", red), ansi::Style{});
        // A line without escapes keeps the style it was given, and shows it.
        QCOMPARE(ansi::styleAfter("plain", red), red);
        QCOMPARE(describe(ansi::render("plain", red).spans), u"0+5 p1/-/b"_s);
        QVERIFY(ansi::render(QByteArrayView(), red).spans.isEmpty());
    }

    void needsProcessing()
    {
        QVERIFY(!ansi::needsProcessing("plain text\twith tab \xc3\xa9"));
        QVERIFY(ansi::needsProcessing("\x1b[0m"));
        QVERIFY(ansi::needsProcessing("a\rb"));
        QVERIFY(!ansi::needsProcessing(QByteArrayView()));
    }

    void colourValues()
    {
        QCOMPARE(ansi::colourValue(ansi::DefaultColour), QVariant());
        QCOMPARE(ansi::colourValue(ansi::paletteColour(3)), QVariant(3));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(15)), QVariant(15));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(16)), QVariant(u"#000000"_s));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(196)), QVariant(u"#ff0000"_s));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(231)), QVariant(u"#ffffff"_s));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(232)), QVariant(u"#080808"_s));
        QCOMPARE(ansi::colourValue(ansi::paletteColour(255)), QVariant(u"#eeeeee"_s));
        QCOMPARE(ansi::colourValue(ansi::rgbColour(10, 20, 30)), QVariant(u"#0a141e"_s));
    }
};

QTEST_GUILESS_MAIN(TestAnsi)
#include "tst_ansi.moc"
