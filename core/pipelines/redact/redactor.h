#pragma once
// Package redact masks credentials in text that leaves the process: task output, logs, events
// and API answers. Every occurrence of a secret, in the forms tools commonly print it (raw,
// base64/base64url alone or inside a longer encoding, percent-encoded, JSON-escaped, see
// patterns.h), becomes the mask "((redacted))" — the same mask for every secret, so output
// never says which one it was. Overlapping or touching occurrences become one mask.
//
// Values under kMinimumSecretLength (3) bytes are not masked: a one- or two-byte value would
// shred every log line. They are counted and warnings() says so (without the values); a
// credential that short is not a credential.
//
// All patterns of all secrets go into one Aho–Corasick automaton, a dense table over the byte
// classes the patterns use, so scanning costs at most one table step per byte however many
// secrets there are; a bitmap of the byte pairs patterns begin with lets the scan skip text
// that cannot start one (tst_redactor's throughput test measures the rate).
//
// RedactingStream masks output that arrives in chunks, holding back at most
// maxPatternLength() - 1 bytes so an occurrence split across chunks is still caught; its output
// is byte-for-byte what redact() gives for the whole text, however the text was chunked.
//
// Threading: a Redactor is immutable and cheap to copy (shared data): use one from any number
// of threads. A RedactingStream is one output's state: one per stream, one thread at a time.

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

namespace pando::core::pipelines {

inline constexpr char kRedactedMask[] = "((redacted))";

class Redactor {
public:
    static constexpr qsizetype kMinimumSecretLength = 3;

    Redactor(); // masks nothing
    explicit Redactor(const QList<QByteArray> &secrets);
    // Secrets given as text, masked in their UTF-8 form.
    static Redactor fromStrings(const QStringList &secrets);

    QByteArray redact(QByteArrayView text) const;
    QString redactString(const QString &text) const;

    bool isEmpty() const;
    qsizetype patternCount() const;
    qsizetype maxPatternLength() const;
    // Non-empty secrets shorter than kMinimumSecretLength, left unmasked.
    int ignoredShortSecrets() const;
    // What the owner should be told about the secret set, values never included.
    QStringList warnings() const;

    struct Automaton; // defined in redactor.cpp

private:
    friend class RedactingStream;
    std::shared_ptr<const Automaton> m_automaton;
    int m_ignored = 0;
};

class RedactingStream {
public:
    explicit RedactingStream(Redactor redactor);

    // Feeds a chunk; returns what can be let out now (possibly empty).
    QByteArray write(QByteArrayView chunk);
    // The end of the output: returns everything held back. The stream can be written again
    // afterwards, as a new output (nothing matches across a flush).
    QByteArray flush();
    // Bytes held back right now; at most maxPatternLength() - 1 after write().
    qsizetype pendingBytes() const { return m_pending.size(); }

private:
    struct Span {
        qint64 start; // absolute offsets in the stream
        qint64 end;
    };
    void addSpan(qint64 start, qint64 end);
    void emitUpTo(qint64 target, QByteArray &out);

    Redactor m_redactor;
    const Redactor::Automaton *m_automaton;
    quint32 m_state = 0;         // the automaton's row
    unsigned m_previousByte = 0; // the last byte written: the state, when it is shallow
    qint64 m_position = 0;       // bytes written so far
    qint64 m_emitted = 0;        // bytes let out (raw or masked) so far; m_pending starts here
    qint64 m_lastMaskEnd = -1;   // where the last mask that was let out ended
    QByteArray m_pending;
    std::vector<Span> m_spans; // masked ranges not let out yet: sorted, disjoint, not touching
    size_t m_spanHead = 0;     // m_spans before this index are already let out
};

} // namespace pando::core::pipelines
