#include "core/pipelines/redact/patterns.h"

#include <QString>

#include <algorithm>

namespace pando::core::pipelines {

namespace detail {

QByteArray base64StableMiddle(QByteArrayView secret, int alignment, QByteArray::Base64Options options)
{
    QByteArray shifted(alignment, '\0');
    shifted.append(secret.data(), secret.size());
    const QByteArray encoded = shifted.toBase64(options | QByteArray::OmitTrailingEquals);
    const qsizetype from = (8 * qsizetype(alignment) + 5) / 6;
    const qsizetype to = (8 * (qsizetype(alignment) + secret.size())) / 6;
    return to > from ? encoded.mid(from, to - from) : QByteArray();
}

QByteArray jsonEscape(QByteArrayView value, bool escapeSlash, bool upperHex, bool asciiOnly)
{
    const char *digits = upperHex ? "0123456789ABCDEF" : "0123456789abcdef";
    auto unicodeEscape = [&](QByteArray &out, unsigned code) {
        out.append("\\u");
        for (int shift = 12; shift >= 0; shift -= 4)
            out.append(digits[(code >> shift) & 0xF]);
    };
    QByteArray out;
    auto escapeAscii = [&](unsigned char c) {
        switch (c) {
        case '"':
            out.append("\\\"");
            return;
        case '\\':
            out.append("\\\\");
            return;
        case '/':
            out.append(escapeSlash ? "\\/" : "/");
            return;
        case '\b':
            out.append("\\b");
            return;
        case '\f':
            out.append("\\f");
            return;
        case '\n':
            out.append("\\n");
            return;
        case '\r':
            out.append("\\r");
            return;
        case '\t':
            out.append("\\t");
            return;
        default:
            if (c < 0x20)
                unicodeEscape(out, c);
            else
                out.append(char(c));
        }
    };
    if (!asciiOnly) {
        for (char c : value)
            escapeAscii(static_cast<unsigned char>(c));
        return out;
    }
    const QString text = QString::fromUtf8(value);
    if (text.toUtf8() != value)
        return {}; // not UTF-8: no JSON encoder would produce an ASCII form of it
    for (QChar ch : text) {
        if (ch.unicode() < 0x80)
            escapeAscii(static_cast<unsigned char>(ch.unicode()));
        else
            unicodeEscape(out, ch.unicode()); // UTF-16 units: surrogate pairs come out as two escapes
    }
    return out;
}

} // namespace detail

namespace {

QByteArray lowerHex(QByteArray percentEncoded)
{
    auto lower = [](char c) {
        return (c >= 'A' && c <= 'F') ? char(c - 'A' + 'a') : c;
    };
    for (qsizetype i = 0; i + 2 < percentEncoded.size(); ++i) {
        if (percentEncoded[i] == '%') {
            percentEncoded[i + 1] = lower(percentEncoded[i + 1]);
            percentEncoded[i + 2] = lower(percentEncoded[i + 2]);
            i += 2;
        }
    }
    return percentEncoded;
}

} // namespace

QList<QByteArray> redactionPatterns(QByteArrayView secret, qsizetype minimumLength)
{
    QList<QByteArray> out;
    if (secret.size() < minimumLength || secret.isEmpty())
        return out;
    auto add = [&](QByteArray p) {
        if (p.size() >= minimumLength && !out.contains(p))
            out.append(std::move(p));
    };
    const QByteArray raw = secret.toByteArray();
    add(raw);
    add(raw.trimmed());

    for (auto alphabet : {QByteArray::Base64Encoding, QByteArray::Base64UrlEncoding}) {
        add(raw.toBase64(alphabet));
        add(raw.toBase64(alphabet | QByteArray::OmitTrailingEquals));
        for (int a = 0; a < 3; ++a)
            add(detail::base64StableMiddle(secret, a, alphabet));
    }

    // By hand rather than QUrl::toPercentEncoding, which takes a QString: the raw bytes matter.
    auto percentEncode = [&](const QByteArray &keep) {
        static const char hex[] = "0123456789ABCDEF";
        QByteArray enc;
        for (char ch : raw) {
            const auto c = static_cast<unsigned char>(ch);
            const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                    c == '-' || c == '.' || c == '_' || c == '~';
            if (unreserved || keep.contains(char(c))) {
                enc.append(char(c));
            } else {
                enc.append('%');
                enc.append(hex[c >> 4]);
                enc.append(hex[c & 0xF]);
            }
        }
        return enc;
    };
    const QByteArray strict = percentEncode({});
    QByteArray form = percentEncode(" ");
    form.replace(' ', '+');
    const QByteArray encodeUri = percentEncode("!#$&'()*+,/:;=?@");
    for (const QByteArray &p : {strict, form, encodeUri}) {
        add(p);
        add(lowerHex(p));
    }

    for (bool slash : {false, true})
        for (bool upper : {false, true})
            for (bool ascii : {false, true})
                add(detail::jsonEscape(secret, slash, upper, ascii));

    if (raw.contains('\n')) {
        for (QByteArray line : raw.split('\n')) {
            if (line.endsWith('\r'))
                line.chop(1);
            line = line.trimmed();
            if (line.size() >= std::max<qsizetype>(minimumLength, 8))
                add(line);
        }
    }
    return out;
}

} // namespace pando::core::pipelines
