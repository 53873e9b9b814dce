// The pairing link's QR code: the version the standard gives each length at error correction M,
// the matrix libqrencode makes for a pairing link, the structure every scanner looks for (the
// three finder patterns with their light separators, the timing patterns), the rendered image's
// four-module quiet zone and whole-pixel modules in black on white, the errors for nothing and
// for too much, and QrCodeItem's properties as the Settings view reads them.

#include "qml/connections/qrcode.h"

#include <QSignalSpy>
#include <QTest>
#include <memory>
#include <qrencode.h>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

const QString PairingLink =
    u"pando://192.168.1.20:7443/pair?fp=3f9a0c51d2e84b7761a0e5c3b9d2f4a18c6e07b1d5f3a9c2e4b8d0f6a1c3e5b7&token=pandopair_7c1e9b04d2a85f36e0b4c7d19a2f6e83"_s;

// The 7x7 finder pattern with its top-left module at (left, top): a dark ring, a light ring and a
// dark 3x3 centre.
bool isFinder(const QrCode &code, int left, int top)
{
    for (int y = 0; y < 7; ++y) {
        for (int x = 0; x < 7; ++x) {
            const int ring = std::max(std::abs(x - 3), std::abs(y - 3));
            const bool dark = ring != 2;
            if (code.isDark(left + x, top + y) != dark)
                return false;
        }
    }
    return true;
}

} // namespace

class TestQrCode : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Byte-mode capacities at level M from ISO/IEC 18004's table: 14 bytes fit version 1, 15 need
    // version 2; 122 fit version 7, 123 need version 8.
    void versionByLength_data()
    {
        QTest::addColumn<int>("bytes");
        QTest::addColumn<int>("version");
        QTest::newRow("1 byte") << 1 << 1;
        QTest::newRow("14 bytes") << 14 << 1;
        QTest::newRow("15 bytes") << 15 << 2;
        QTest::newRow("122 bytes") << 122 << 7;
        QTest::newRow("123 bytes") << 123 << 8;
    }

    void versionByLength()
    {
        QFETCH(int, bytes);
        QFETCH(int, version);
        const auto code = encodeQrCode(QString(bytes, u'p'));
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
        QCOMPARE(code->version, version);
        QCOMPARE(code->size, 17 + 4 * version);
        QCOMPARE(code->modules.size(), size_t(code->size) * code->size);
    }

    // The matrix is libqrencode's, module for module, and has the structure of a QR code.
    void pairingLinkMatrix()
    {
        const auto code = encodeQrCode(PairingLink);
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));

        const QByteArray utf8 = PairingLink.toUtf8();
        const std::unique_ptr<QRcode, void (*)(QRcode *)> reference(
            QRcode_encodeString(utf8.constData(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), QRcode_free);
        QVERIFY(reference);
        QCOMPARE(code->version, reference->version);
        QCOMPARE(code->size, reference->width);
        for (int y = 0; y < code->size; ++y)
            for (int x = 0; x < code->size; ++x)
                QVERIFY2(code->isDark(x, y) == ((reference->data[y * code->size + x] & 1) != 0),
                         qPrintable(u"module (%1, %2)"_s.arg(x).arg(y)));
        // A 147-byte link: more than version 7 holds at level M, less than version 8's 152.
        QCOMPARE(utf8.size(), 147);
        QCOMPARE(code->version, 8);

        const int far = code->size - 7;
        QVERIFY2(isFinder(*code, 0, 0), "no finder pattern at the top left");
        QVERIFY2(isFinder(*code, far, 0), "no finder pattern at the top right");
        QVERIFY2(isFinder(*code, 0, far), "no finder pattern at the bottom left");
        QVERIFY2(!isFinder(*code, far, far), "a finder pattern at the bottom right");
        // Each finder's separator is light: the row below the top ones, the column beside them.
        for (int i = 0; i < 8; ++i) {
            QVERIFY(!code->isDark(i, 7));
            QVERIFY(!code->isDark(7, i));
            QVERIFY(!code->isDark(code->size - 1 - i, 7));
            QVERIFY(!code->isDark(code->size - 8, i));
            QVERIFY(!code->isDark(i, code->size - 8));
            QVERIFY(!code->isDark(7, code->size - 1 - i));
        }
        // The timing patterns between the finders alternate, dark on even modules.
        for (int i = 8; i < code->size - 8; ++i) {
            QCOMPARE(code->isDark(i, 6), i % 2 == 0);
            QCOMPARE(code->isDark(6, i), i % 2 == 0);
        }
        // The dark module every code has beside the bottom-left finder.
        QVERIFY(code->isDark(8, 4 * code->version + 9));
    }

    // Drawn with a four-module light border, every module a whole block of black or white pixels.
    void renderedWithQuietZone()
    {
        const auto code = encodeQrCode(PairingLink);
        QVERIFY(code);
        const int modulePixels = 3;
        const QImage image = renderQrCode(*code, modulePixels);
        const int side = (code->size + 2 * QrCode::QuietZone) * modulePixels;
        QCOMPARE(image.size(), QSize(side, side));
        const int quiet = QrCode::QuietZone * modulePixels;
        for (int y = 0; y < side; ++y) {
            for (int x = 0; x < side; ++x) {
                const QRgb pixel = image.pixel(x, y);
                QVERIFY2(pixel == qRgb(0, 0, 0) || pixel == qRgb(255, 255, 255),
                         qPrintable(u"pixel (%1, %2) is neither black nor white"_s.arg(x).arg(y)));
                const bool inQuietZone = x < quiet || y < quiet || x >= side - quiet || y >= side - quiet;
                if (inQuietZone) {
                    QVERIFY2(pixel == qRgb(255, 255, 255),
                             qPrintable(u"pixel (%1, %2) of the quiet zone is dark"_s.arg(x).arg(y)));
                    continue;
                }
                const bool dark = code->isDark((x - quiet) / modulePixels, (y - quiet) / modulePixels);
                QCOMPARE(pixel == qRgb(0, 0, 0), dark);
            }
        }
        QVERIFY(renderQrCode(QrCode{}, modulePixels).isNull());
    }

    void errors()
    {
        const auto empty = encodeQrCode({});
        QVERIFY(!empty);
        QCOMPARE(empty.error().code, ErrorCode::Invalid);
        const auto tooLong = encodeQrCode(QString(3000, u'p'));
        QVERIFY(!tooLong);
        QCOMPARE(tooLong.error().code, ErrorCode::TooLarge);
        QVERIFY2(tooLong.error().message.contains(u"3000 bytes"_s), qPrintable(tooLong.error().message));
    }

    void item()
    {
        QrCodeItem item;
        QSignalSpy changed(&item, &QrCodeItem::textChanged);
        QCOMPARE(item.modules(), 0);
        QCOMPARE(item.implicitWidth(), 0.0);
        item.setText(PairingLink);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(item.version(), 8);
        QCOMPARE(item.modules(), 49);
        QCOMPARE(item.error(), QString());
        // Square, with room for the quiet zone and whole pixels per module.
        QCOMPARE(item.implicitWidth(), item.implicitHeight());
        QCOMPARE(int(item.implicitWidth()) % (49 + 2 * QrCode::QuietZone), 0);
        item.setText(PairingLink);
        QCOMPARE(changed.size(), 1);

        item.setText(QString(3000, u'p'));
        QCOMPARE(item.modules(), 0);
        QVERIFY(item.error().contains(u"3000 bytes"_s));
        QCOMPARE(item.implicitWidth(), 0.0);
        item.setText({});
        QCOMPARE(item.error(), QString());
    }
};

QTEST_MAIN(TestQrCode)
#include "tst_qrcode.moc"
