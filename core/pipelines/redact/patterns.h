#pragma once
// The byte strings a secret can show up as in output, each of which the redactor masks.
//
// For a secret S of at least Redactor::kMinimumSecretLength bytes:
//  - S itself, and S with surrounding whitespace trimmed (values read from files end in "\n");
//  - base64 and base64url of S alone, padded and unpadded;
//  - base64/base64url of S inside a longer encoded string ("Basic " + base64("user:" + S) is
//    the common case). How S encodes there depends on its offset modulo 3 in the encoded bytes,
//    so for each alignment a in {0, 1, 2} the pattern is the run of characters whose six bits
//    all come from S: encode a zero bytes + S, drop the first ceil(8a/6) characters (they carry
//    bits of the bytes before S) and keep the first floor(8(a+n)/6) (later ones carry bits of
//    the bytes after S). Those characters are the same whatever surrounds S; at most one
//    character at each end, carrying a few bits of S, stays visible;
//  - percent-encoding: every byte but RFC 3986's unreserved ones encoded, spaces as "%20" and
//    as "+" (forms), upper- and lower-case hex; and encodeURI's lighter form that keeps the
//    reserved characters;
//  - JSON string escaping: quotes, backslashes and control characters escaped, with and without
//    "\/", with \u escapes in either hex case, and the ASCII-only form (\uXXXX for non-ASCII,
//    Python's json.dumps default);
//  - each line of at least 8 bytes of a multi-line secret (a key printed line by line, with
//    other line endings, or indented in YAML).
// Patterns shorter than the minimum are dropped (a two-character fragment would mask half of
// any log). Not covered: hex, line-wrapped (MIME) base64, double encodings.

#include <QByteArray>
#include <QList>

namespace pando::core::pipelines {

// The distinct patterns for one secret; empty for secrets under the minimum length.
QList<QByteArray> redactionPatterns(QByteArrayView secret, qsizetype minimumLength);

namespace detail {
// The alignment-stable middle of base64(a zero bytes + secret); options as QByteArray::toBase64.
QByteArray base64StableMiddle(QByteArrayView secret, int alignment, QByteArray::Base64Options options);
QByteArray jsonEscape(QByteArrayView value, bool escapeSlash, bool upperHex, bool asciiOnly);
} // namespace detail

} // namespace pando::core::pipelines
