#include "qml/connections/qrcode.h"

#include <QPainter>
#include <QQuickWindow>
#include <cerrno>
#include <cmath>
#include <memory>
#include <qrencode.h>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// Modules drawn this many logical pixels wide unless the layout gives the item another size: a
// version 7 code (a pairing link) is then about 210 px, which phone cameras read from a screen.
constexpr int DefaultModulePixels = 4;

struct QrCodeDeleter {
    void operator()(QRcode *code) const { QRcode_free(code); }
};

} // namespace

Result<QrCode> encodeQrCode(const QString &text)
{
    if (text.isEmpty())
        return fail(ErrorCode::Invalid, u"there is no text to encode"_s);
    const QByteArray utf8 = text.toUtf8();
    // Version 0: the smallest that holds the text; case-sensitive, so the link's letters stay.
    errno = 0;
    const std::unique_ptr<QRcode, QrCodeDeleter> encoded(
        QRcode_encodeString(utf8.constData(), 0, QR_ECLEVEL_M, QR_MODE_8, 1));
    if (!encoded) {
        if (errno == ERANGE)
            return fail(ErrorCode::TooLarge,
                        u"%1 bytes are more than a QR code holds (2331 at this error correction)"_s.arg(utf8.size()));
        return fail(ErrorCode::Internal, u"libqrencode could not encode the text (errno %1)"_s.arg(errno));
    }
    QrCode code;
    code.version = encoded->version;
    code.size = encoded->width;
    code.modules.resize(static_cast<size_t>(code.size) * code.size);
    // libqrencode's bit 0 is the module's colour; the other bits say what the module is part of.
    for (size_t i = 0; i < code.modules.size(); ++i)
        code.modules[i] = (encoded->data[i] & 1) != 0;
    return code;
}

QImage renderQrCode(const QrCode &code, int modulePixels, int quietZone)
{
    if (code.size <= 0 || modulePixels <= 0 || quietZone < 0)
        return {};
    const int side = (code.size + 2 * quietZone) * modulePixels;
    QImage image(side, side, QImage::Format_RGB32);
    image.fill(Qt::white);
    const QRgb dark = qRgb(0, 0, 0);
    for (int y = 0; y < code.size; ++y) {
        for (int x = 0; x < code.size; ++x) {
            if (!code.isDark(x, y))
                continue;
            const int left = (quietZone + x) * modulePixels;
            const int top = (quietZone + y) * modulePixels;
            for (int row = top; row < top + modulePixels; ++row) {
                auto *line = reinterpret_cast<QRgb *>(image.scanLine(row));
                std::fill(line + left, line + left + modulePixels, dark);
            }
        }
    }
    return image;
}

QrCodeItem::QrCodeItem(QQuickItem *parent) : QQuickPaintedItem(parent)
{
    setAntialiasing(false);
    setOpaquePainting(false);
}

void QrCodeItem::setText(const QString &text)
{
    if (text == m_text)
        return;
    m_text = text;
    m_code = {};
    m_error.clear();
    if (!text.isEmpty()) {
        auto encoded = encodeQrCode(text);
        if (encoded)
            m_code = std::move(*encoded);
        else
            m_error = encoded.error().text();
    }
    const int side = m_code.size > 0 ? (m_code.size + 2 * QrCode::QuietZone) * DefaultModulePixels : 0;
    setImplicitSize(side, side);
    update();
    Q_EMIT textChanged();
}

void QrCodeItem::paint(QPainter *painter)
{
    if (m_code.size <= 0)
        return;
    // Whole device pixels per module: a module that straddles pixels is drawn blurred, and
    // scanners read sharp edges best.
    const qreal ratio = window() ? window()->effectiveDevicePixelRatio() : 1.0;
    const int total = m_code.size + 2 * QrCode::QuietZone;
    const int devicePixels = static_cast<int>(std::floor(std::min(width(), height()) * ratio));
    const int modulePixels = std::max(1, devicePixels / total);
    QImage image = renderQrCode(m_code, modulePixels);
    image.setDevicePixelRatio(ratio);
    const qreal left = std::floor((width() * ratio - image.width()) / 2) / ratio;
    const qreal top = std::floor((height() * ratio - image.height()) / 2) / ratio;
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(QPointF(left, top), image);
}

} // namespace pando::desktop
