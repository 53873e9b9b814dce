#include "core/pipelines/redact/redactor.h"

#include "core/pipelines/redact/patterns.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>

namespace pando::core::pipelines {

// The automaton as one flat table. Each state is a row of `stride` quint32: slot 0 holds the
// length of the longest pattern ending in that state (0: none) plus kDeep for states two or more
// bytes into a pattern, slots 1.. the next state's row offset for each byte class. Row offsets
// instead of state numbers spare a multiply per byte.
//
// In a shallow state (the root, or one byte into a pattern) the automaton's state depends only
// on the last byte read. From there it can only go deeper on a byte pair that begins some
// pattern, so the scan skips ahead through `bigrams` (one bit per byte pair, 8 KiB: stays in L1)
// and walks the table only near candidates. Patterns are at least 3 bytes, so no match ends in a
// shallow state and nothing is missed while skipping.
struct Redactor::Automaton {
    static constexpr quint32 kDeep = 0x80000000u;
    static constexpr quint32 kLength = 0x7fffffffu;
    std::array<quint16, 256> byteClass{}; // 0: a byte no pattern contains
    quint32 stride = 2;
    std::vector<quint32> table;
    std::vector<quint64> bigrams = std::vector<quint64>(65536 / 64, 0);
    qsizetype patterns = 0;
    qsizetype maxLength = 0;

    bool startsPattern(unsigned first, unsigned second) const
    {
        const unsigned pair = (first << 8) | second;
        return (bigrams[pair >> 6] >> (pair & 63)) & 1u;
    }
};

namespace {

std::shared_ptr<const Redactor::Automaton> build(const QList<QByteArray> &patterns)
{
    auto a = std::make_shared<Redactor::Automaton>();
    a->patterns = patterns.size();
    quint32 classes = 1; // class 0: bytes no pattern contains
    for (const QByteArray &p : patterns) {
        a->maxLength = std::max(a->maxLength, p.size());
        for (char c : p) {
            auto &cls = a->byteClass[static_cast<unsigned char>(c)];
            if (cls == 0)
                cls = quint16(classes++);
        }
    }
    const quint32 stride = classes + 1;
    a->stride = stride;

    constexpr quint32 kNone = 0xffffffffu;
    std::vector<quint32> &t = a->table;
    t.assign(stride, kNone);
    t[0] = 0;
    // The trie first: missing children stay kNone until the BFS below fills them in.
    for (const QByteArray &p : patterns) {
        const unsigned pair = (unsigned(static_cast<unsigned char>(p[0])) << 8) | static_cast<unsigned char>(p[1]);
        a->bigrams[pair >> 6] |= quint64(1) << (pair & 63);
        quint32 row = 0;
        int depth = 0;
        for (char ch : p) {
            ++depth;
            const quint32 slot = row + 1 + a->byteClass[static_cast<unsigned char>(ch)];
            if (t[slot] == kNone) {
                const auto fresh = quint32(t.size());
                t.resize(t.size() + stride, kNone);
                t[fresh] = depth >= 2 ? Redactor::Automaton::kDeep : 0;
                t[slot] = fresh;
            }
            row = t[slot];
        }
        t[row] = (t[row] & Redactor::Automaton::kDeep) |
                 std::max<quint32>(t[row] & Redactor::Automaton::kLength, quint32(p.size()));
    }
    // Failure links breadth first, turning the trie into a full transition table. A state's
    // match length takes its failure state's in too: the longest pattern ending here.
    std::vector<quint32> fail(t.size() / stride, 0);
    std::deque<quint32> queue;
    for (quint32 slot = 1; slot < stride; ++slot) {
        if (t[slot] == kNone) {
            t[slot] = 0;
        } else {
            fail[t[slot] / stride] = 0;
            queue.push_back(t[slot]);
        }
    }
    while (!queue.empty()) {
        const quint32 row = queue.front();
        queue.pop_front();
        const quint32 failRow = fail[row / stride];
        t[row] = (t[row] & Redactor::Automaton::kDeep) |
                 std::max(t[row] & Redactor::Automaton::kLength, t[failRow] & Redactor::Automaton::kLength);
        for (quint32 slot = 1; slot < stride; ++slot) {
            quint32 &next = t[row + slot];
            if (next == kNone) {
                next = t[failRow + slot];
            } else {
                fail[next / stride] = t[failRow + slot];
                queue.push_back(next);
            }
        }
    }
    return a;
}

QList<QByteArray> collect(const QList<QByteArray> &secrets, int &ignored)
{
    QList<QByteArray> all;
    ignored = 0;
    for (const QByteArray &secret : secrets) {
        if (secret.isEmpty())
            continue;
        if (secret.size() < Redactor::kMinimumSecretLength) {
            ++ignored;
            continue;
        }
        for (QByteArray &p : redactionPatterns(secret, Redactor::kMinimumSecretLength)) {
            if (!all.contains(p))
                all.append(std::move(p));
        }
    }
    return all;
}

QList<QByteArray> utf8(const QStringList &secrets)
{
    QList<QByteArray> out;
    out.reserve(secrets.size());
    for (const QString &s : secrets)
        out.append(s.toUtf8());
    return out;
}

} // namespace

Redactor::Redactor() : m_automaton(build({}))
{}

Redactor::Redactor(const QList<QByteArray> &secrets)
{
    int ignored = 0;
    m_automaton = build(collect(secrets, ignored));
    m_ignored = ignored;
}

Redactor Redactor::fromStrings(const QStringList &secrets)
{
    return Redactor(utf8(secrets));
}

QByteArray Redactor::redact(QByteArrayView text) const
{
    if (isEmpty())
        return text.toByteArray();
    RedactingStream stream(*this);
    QByteArray out = stream.write(text);
    out += stream.flush();
    return out;
}

QString Redactor::redactString(const QString &text) const
{
    if (isEmpty())
        return text;
    return QString::fromUtf8(redact(QByteArrayView(text.toUtf8())));
}

bool Redactor::isEmpty() const
{
    return m_automaton->patterns == 0;
}

qsizetype Redactor::patternCount() const
{
    return m_automaton->patterns;
}

qsizetype Redactor::maxPatternLength() const
{
    return m_automaton->maxLength;
}

int Redactor::ignoredShortSecrets() const
{
    return m_ignored;
}

QStringList Redactor::warnings() const
{
    QStringList out;
    if (m_ignored > 0)
        out << QStringLiteral("%1 secret value(s) shorter than %2 bytes are not masked in output: values that short "
                              "would mask ordinary text, and are too short to be credentials")
                   .arg(m_ignored)
                   .arg(kMinimumSecretLength);
    return out;
}

RedactingStream::RedactingStream(Redactor redactor)
    : m_redactor(std::move(redactor)), m_automaton(m_redactor.m_automaton.get())
{}

void RedactingStream::addSpan(qint64 start, qint64 end)
{
    // Part of this occurrence may already be out, under a mask: only the rest is left to hide.
    start = std::max(start, m_emitted);
    while (m_spans.size() > m_spanHead && start <= m_spans.back().end) {
        start = std::min(start, m_spans.back().start);
        end = std::max(end, m_spans.back().end);
        m_spans.pop_back();
    }
    m_spans.push_back(Span{start, end});
}

void RedactingStream::emitUpTo(qint64 target, QByteArray &out)
{
    auto emitRaw = [&](qint64 until) {
        if (until > m_emitted) {
            out.append(m_pending.constData() + (m_emitted - (m_position - m_pending.size())), until - m_emitted);
            m_emitted = until;
        }
    };
    while (m_spanHead < m_spans.size() && m_spans[m_spanHead].start < target) {
        const Span span = m_spans[m_spanHead++];
        emitRaw(span.start);
        // The tail of an occurrence that began under the previous mask joins that mask.
        if (!(span.start == m_emitted && m_lastMaskEnd == m_emitted))
            out.append(kRedactedMask);
        m_emitted = span.end;
        m_lastMaskEnd = span.end;
    }
    emitRaw(target);
    if (m_spanHead == m_spans.size()) {
        m_spans.clear();
        m_spanHead = 0;
    }
    // Keep only what is not out yet.
    const qint64 base = m_position - m_pending.size();
    if (m_emitted > base)
        m_pending.remove(0, std::min<qint64>(m_emitted - base, m_pending.size()));
}

QByteArray RedactingStream::write(QByteArrayView chunk)
{
    QByteArray out;
    if (chunk.isEmpty())
        return out;
    if (m_automaton->patterns == 0) {
        m_position += chunk.size();
        m_emitted = m_position;
        return chunk.toByteArray();
    }
    m_pending.append(chunk.data(), chunk.size());
    const Redactor::Automaton &a = *m_automaton;
    const quint32 *table = a.table.data();
    const quint16 *classes = a.byteClass.data();
    const auto *bytes = reinterpret_cast<const unsigned char *>(chunk.data());
    const qsizetype n = chunk.size();
    quint32 row = m_state;
    unsigned prev = m_previousByte;
    qsizetype i = 0;
    while (i < n) {
        if (!(table[row] & Redactor::Automaton::kDeep)) {
            // Shallow: the state is the root's transition on `prev` (or the root itself).
            if (row == 0)
                prev = bytes[i++];
            while (i < n && !a.startsPattern(prev, bytes[i]))
                prev = bytes[i++];
            row = table[1 + classes[prev]];
            if (i == n)
                break;
        }
        prev = bytes[i];
        row = table[row + 1 + classes[prev]];
        if (const quint32 length = table[row] & Redactor::Automaton::kLength) [[unlikely]] {
            const qint64 end = m_position + i + 1;
            addSpan(end - length, end);
        }
        ++i;
    }
    m_state = row;
    m_previousByte = prev;
    m_position += n;
    // Any occurrence not seen yet ends after m_position, so it starts at or after this.
    emitUpTo(m_position - (m_automaton->maxLength - 1), out);
    return out;
}

QByteArray RedactingStream::flush()
{
    QByteArray out;
    emitUpTo(m_position, out);
    m_pending.clear();
    m_state = 0;
    m_lastMaskEnd = -1;
    return out;
}

} // namespace pando::core::pipelines
