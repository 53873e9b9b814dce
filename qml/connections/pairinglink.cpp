#include "pairinglink.h"

#include <QCoreApplication>
#include <QUrlQuery>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

std::unexpected<Error> wrong(const QString &part, const QString &message)
{
    return fail(ErrorCode::Invalid, message, part,
                QCoreApplication::translate(
                    "PairingLink", "a pairing link looks like pando://host:port/pair?fp=…&token=…; ask the install's "
                                   "administrator for a new one"));
}

bool isHex(const QString &text)
{
    for (const QChar c : text) {
        if (!((c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f')))
            return false;
    }
    return true;
}

} // namespace

QUrl PairingLink::baseUrl() const
{
    QUrl url;
    url.setScheme(u"https"_s);
    url.setHost(host);
    url.setPort(port);
    return url;
}

Result<PairingLink> parsePairingLink(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return wrong(u"link"_s, QCoreApplication::translate("PairingLink", "the pairing link is empty"));
    const QUrl url(trimmed, QUrl::StrictMode);
    if (!url.isValid())
        return wrong(u"link"_s,
                     QCoreApplication::translate("PairingLink", "this is not a link: %1").arg(url.errorString()));
    if (url.scheme() != u"pando"_s)
        return wrong(u"scheme"_s,
                     url.scheme().isEmpty()
                         ? QCoreApplication::translate("PairingLink", "the link must start with pando://")
                         : QCoreApplication::translate("PairingLink", "the link must start with pando://, not %1://")
                               .arg(url.scheme()));
    if (url.host().isEmpty())
        return wrong(u"host"_s, QCoreApplication::translate("PairingLink", "the link names no host after pando://"));
    if (url.port() <= 0)
        return wrong(u"port"_s, QCoreApplication::translate("PairingLink",
                                                            "the link names no port after the host (pando://%1:PORT/…)")
                                    .arg(url.host()));
    if (url.path() != u"/pair"_s)
        return wrong(
            u"path"_s,
            QCoreApplication::translate("PairingLink", "the link's path must be /pair, not \"%1\"").arg(url.path()));
    const QUrlQuery query(url);
    const QString fp = query.queryItemValue(u"fp"_s).remove(u':').toLower();
    if (fp.isEmpty())
        return wrong(u"fp"_s,
                     QCoreApplication::translate("PairingLink", "the link has no certificate fingerprint (fp=)"));
    if (fp.size() != 64 || !isHex(fp))
        return wrong(u"fp"_s, QCoreApplication::translate(
                                  "PairingLink", "the fingerprint (fp=) must be 64 hex digits, got %n character(s)",
                                  nullptr, int(fp.size())));
    const QString token = query.queryItemValue(u"token"_s);
    if (token.isEmpty())
        return wrong(u"token"_s, QCoreApplication::translate("PairingLink", "the link has no pairing code (token=)"));
    if (!token.startsWith(u"pandopair_"_s))
        return wrong(u"token"_s, QCoreApplication::translate("PairingLink",
                                                             "the pairing code (token=) must start with pandopair_"));
    return PairingLink{url.host(), url.port(), fp, token};
}

QString fingerprintArt(const QString &fingerprintHex)
{
    const QByteArray bytes = QByteArray::fromHex(fingerprintHex.toLatin1());
    if (bytes.isEmpty())
        return {};
    constexpr int W = 17, H = 9;
    int field[H][W] = {};
    int x = W / 2, y = H / 2;
    const int startX = x, startY = y;
    for (const char c : bytes) {
        auto byte = static_cast<unsigned char>(c);
        for (int step = 0; step < 4; ++step, byte >>= 2) {
            x = std::clamp(x + ((byte & 1) ? 1 : -1), 0, W - 1);
            y = std::clamp(y + ((byte & 2) ? 1 : -1), 0, H - 1);
            ++field[y][x];
        }
    }
    static const char symbols[] = " .o+=*BOX@%&#/^";
    constexpr int last = int(sizeof symbols) - 2;
    QString art = u"+---[SHA256]------+\n"_s;
    for (int row = 0; row < H; ++row) {
        art += u'|';
        for (int col = 0; col < W; ++col) {
            if (row == startY && col == startX)
                art += u'S';
            else if (row == y && col == x)
                art += u'E';
            else
                art += QLatin1Char(symbols[std::min(field[row][col], last)]);
        }
        art += u"|\n"_s;
    }
    art += u"+-----------------+"_s;
    return art;
}

} // namespace pando::desktop
