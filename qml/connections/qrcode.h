#pragma once
// A QR code of a pairing link, so it can be taken off the screen that made it with a phone's
// camera instead of being retyped (a 64-digit fingerprint and a one-time code). Encoding is
// libqrencode's (Debian's libqrencode4, small and well kept) rather than our own: the standard's
// masking and Reed-Solomon rules are easy to get subtly wrong and only a scanner would notice.
// QrCodeItem draws the code for QML (Pando.Connections' QrCode): whole device pixels per module,
// the standard's four-module quiet zone, always dark on light whatever the theme, since scanners
// expect that and a dark palette would otherwise invert it.
//
// Threading: GUI thread (encoding a link takes microseconds).

#include "adapters/api/error.h"

#include <QImage>
#include <QQuickPaintedItem>
#include <QString>
#include <QtQml/qqmlregistration.h>
#include <vector>

namespace pando::desktop {

struct QrCode {
    // The light border scanners need around the code, in modules (ISO/IEC 18004: four).
    static constexpr int QuietZone = 4;

    int version = 0;           // 1..40
    int size = 0;              // modules per side, 17 + 4 * version
    std::vector<bool> modules; // size * size, row by row; true is dark

    bool isDark(int x, int y) const { return modules[static_cast<size_t>(y) * size + x]; }
};

// The text as UTF-8 bytes at error correction level M (15% of the code may be lost), in the
// smallest version that holds it; an error when the text is empty or too long for version 40.
Result<QrCode> encodeQrCode(const QString &text);

// The code with quietZone light modules around it, each module modulePixels square: black on
// white, nothing blended, so every edge is sharp.
QImage renderQrCode(const QrCode &code, int modulePixels, int quietZone = QrCode::QuietZone);

class QrCodeItem : public QQuickPaintedItem {
    Q_OBJECT
    QML_NAMED_ELEMENT(QrCode)
    Q_PROPERTY(QString text READ text WRITE setText NOTIFY textChanged)
    // Modules per side without the quiet zone (0 with no code), and the version that holds the text.
    Q_PROPERTY(int modules READ modules NOTIFY textChanged)
    Q_PROPERTY(int version READ version NOTIFY textChanged)
    // Why there is no code for a non-empty text ("" when there is one).
    Q_PROPERTY(QString error READ error NOTIFY textChanged)

public:
    explicit QrCodeItem(QQuickItem *parent = nullptr);

    QString text() const { return m_text; }
    void setText(const QString &text);
    int modules() const { return m_code.size; }
    int version() const { return m_code.version; }
    QString error() const { return m_error; }

    void paint(QPainter *painter) override;

Q_SIGNALS:
    void textChanged();

private:
    QString m_text;
    QrCode m_code;
    QString m_error;
};

} // namespace pando::desktop
