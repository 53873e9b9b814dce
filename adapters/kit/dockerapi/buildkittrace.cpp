#include "adapters/kit/dockerapi/buildkittrace.h"

namespace pando::adapters::dockerapi {

namespace {

// Enough of protobuf's wire format to read a StatusResponse: varints and length-delimited
// fields are read, 32- and 64-bit fields skipped. A malformed message stops the reader.
class Wire {
public:
    explicit Wire(QByteArrayView data) : m_data(data) {}

    // The next field's number and wire type; false at the end or on malformed input.
    bool next(int &field, int &type)
    {
        if (m_at >= m_data.size() || m_bad)
            return false;
        const quint64 key = varint();
        field = int(key >> 3);
        type = int(key & 7);
        return !m_bad && field > 0;
    }
    quint64 varint()
    {
        quint64 value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_at >= m_data.size())
                break;
            const auto byte = quint8(m_data[m_at++]);
            value |= quint64(byte & 0x7f) << shift;
            if (byte < 0x80)
                return value;
        }
        m_bad = true;
        return 0;
    }
    QByteArrayView bytes()
    {
        const quint64 size = varint();
        if (m_bad || size > quint64(m_data.size() - m_at)) {
            m_bad = true;
            return {};
        }
        const QByteArrayView out = m_data.sliced(m_at, qsizetype(size));
        m_at += qsizetype(size);
        return out;
    }
    QString text() { return QString::fromUtf8(bytes()); }
    void skip(int type)
    {
        switch (type) {
        case 0:
            varint();
            break;
        case 1:
            m_at += 8;
            break;
        case 2:
            bytes();
            break;
        case 5:
            m_at += 4;
            break;
        default:
            m_bad = true;
        }
        if (m_at > m_data.size())
            m_bad = true;
    }
    bool bad() const { return m_bad; }

private:
    QByteArrayView m_data;
    qsizetype m_at = 0;
    bool m_bad = false;
};

// google.protobuf.Timestamp as nanoseconds since the epoch.
qint64 timestampNs(QByteArrayView data)
{
    Wire w(data);
    qint64 seconds = 0;
    qint64 nanos = 0;
    for (int field = 0, type = 0; w.next(field, type);) {
        if (field == 1 && type == 0)
            seconds = qint64(w.varint());
        else if (field == 2 && type == 0)
            nanos = qint64(w.varint());
        else
            w.skip(type);
    }
    return seconds * 1'000'000'000LL + nanos;
}

// An error that only follows another step's: BuildKit cancels what runs beside a failed step.
bool isKnockOn(const QString &error)
{
    return error.contains(QLatin1String("context canceled")) || error.contains(QLatin1String("context cancelled"));
}

} // namespace

struct BuildKitTrace::VertexUpdate {
    QString digest;
    QString name;
    bool cached = false;
    qint64 startedNs = 0;
    qint64 completedNs = 0;
    QString error;
};

bool BuildKitTrace::feed(QByteArrayView base64)
{
    const auto decoded = QByteArray::fromBase64Encoding(base64.toByteArray(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return false;
    Wire w(*decoded);
    for (int field = 0, type = 0; w.next(field, type);) {
        if (type != 2) {
            w.skip(type);
            continue;
        }
        Wire item(w.bytes());
        int f = 0;
        int t = 0;
        switch (field) {
        case 1: { // Vertex: digest 1, name 3, cached 4, started 5, completed 6, error 7
            VertexUpdate u;
            while (item.next(f, t)) {
                if (f == 1 && t == 2)
                    u.digest = item.text();
                else if (f == 3 && t == 2)
                    u.name = item.text();
                else if (f == 4 && t == 0)
                    u.cached = item.varint() != 0;
                else if (f == 5 && t == 2)
                    u.startedNs = timestampNs(item.bytes());
                else if (f == 6 && t == 2)
                    u.completedNs = timestampNs(item.bytes());
                else if (f == 7 && t == 2)
                    u.error = item.text();
                else
                    item.skip(t);
            }
            if (!item.bad() && !u.digest.isEmpty())
                vertex(u);
            break;
        }
        case 2: { // VertexStatus: ID 1, vertex 2, name 3, current 4, total 5, completed 8
            QString id, digest, name;
            bool completed = false;
            while (item.next(f, t)) {
                if (f == 1 && t == 2)
                    id = item.text();
                else if (f == 2 && t == 2)
                    digest = item.text();
                else if (f == 3 && t == 2)
                    name = item.text();
                else if (f == 8 && t == 2)
                    completed = timestampNs(item.bytes()) > 0;
                else
                    item.skip(t);
            }
            if (!item.bad() && completed && !digest.isEmpty())
                status(digest, id, name.isEmpty() ? id : name + u' ' + id);
            break;
        }
        case 3: { // VertexLog: vertex 1, msg 4
            QString digest;
            QByteArrayView text;
            while (item.next(f, t)) {
                if (f == 1 && t == 2)
                    digest = item.text();
                else if (f == 4 && t == 2)
                    text = item.bytes();
                else
                    item.skip(t);
            }
            if (!item.bad() && !digest.isEmpty())
                output(digest, text);
            break;
        }
        case 4: { // VertexWarning: vertex 1, short 3
            QString digest, text;
            while (item.next(f, t)) {
                if (f == 1 && t == 2)
                    digest = item.text();
                else if (f == 3 && t == 2)
                    text = item.text();
                else
                    item.skip(t);
            }
            if (!item.bad() && !digest.isEmpty())
                warning(digest, text);
            break;
        }
        default:
            break;
        }
    }
    if (w.bad())
        return false;
    m_seen = true;
    return true;
}

std::optional<BuildKitTrace::Failure> BuildKitTrace::failure() const
{
    const auto v = m_vertices.constFind(m_failed);
    if (m_failed.isEmpty() || v == m_vertices.cend())
        return std::nullopt;
    return Failure{v->name, m_failedError, v->tail};
}

void BuildKitTrace::finish()
{
    for (Vertex &v : m_vertices)
        flush(v);
}

void BuildKitTrace::vertex(const VertexUpdate &update)
{
    Vertex &v = m_vertices[update.digest];
    if (!update.name.isEmpty())
        v.name = update.name;
    if (v.startedNs == 0 || (update.startedNs > 0 && update.startedNs < v.startedNs))
        v.startedNs = update.startedNs;
    // A vertex is shown once it starts, or is answered by the cache without starting.
    if (update.startedNs == 0 && !update.cached && update.error.isEmpty())
        return;
    shown(update.digest);
    if (v.ended)
        return;
    if (update.cached) {
        v.ended = true;
        say(v, QStringLiteral("CACHED"));
    } else if (!update.error.isEmpty()) {
        v.ended = true;
        flush(v);
        say(v, QStringLiteral("ERROR: ") + update.error);
        if (m_failed.isEmpty() || (isKnockOn(m_failedError) && !isKnockOn(update.error))) {
            m_failed = update.digest;
            m_failedError = update.error;
        }
    } else if (update.completedNs > 0) {
        v.ended = true;
        flush(v);
        const double seconds = double(qMax<qint64>(0, update.completedNs - v.startedNs)) / 1e9;
        say(v, QStringLiteral("DONE %1s").arg(seconds, 0, 'f', 1));
    }
}

void BuildKitTrace::output(const QString &digest, QByteArrayView text)
{
    Vertex &v = shown(digest);
    v.partial.append(text);
    sayLines(v);
}

void BuildKitTrace::sayLines(Vertex &v)
{
    qsizetype start = 0;
    for (qsizetype nl = v.partial.indexOf('\n'); nl >= 0; nl = v.partial.indexOf('\n', start)) {
        QByteArrayView line = QByteArrayView(v.partial).sliced(start, nl - start);
        if (line.endsWith('\r'))
            line.chop(1);
        const QString said = QString::fromUtf8(line);
        say(v, said);
        // What a progress bar redrew with carriage returns ends as what it showed last.
        v.tail.append(said.section(u'\r', -1));
        if (v.tail.size() > TailLines)
            v.tail.removeFirst();
        start = nl + 1;
    }
    v.partial.remove(0, start);
}

void BuildKitTrace::status(const QString &digest, const QString &id, const QString &text)
{
    if (m_statusesDone.contains(id))
        return;
    m_statusesDone.insert(id);
    say(shown(digest), text + QStringLiteral(" done"));
}

void BuildKitTrace::warning(const QString &digest, const QString &text)
{
    say(shown(digest), QStringLiteral("WARN: ") + text);
}

BuildKitTrace::Vertex &BuildKitTrace::shown(const QString &digest)
{
    Vertex &v = m_vertices[digest];
    if (v.number == 0) {
        v.number = ++m_shown;
        if (m_line)
            m_line(QStringLiteral("#%1 %2").arg(v.number).arg(v.name));
    }
    return v;
}

void BuildKitTrace::say(Vertex &v, const QString &text)
{
    if (m_line)
        m_line(QStringLiteral("#%1 %2").arg(v.number).arg(text));
}

void BuildKitTrace::flush(Vertex &v)
{
    if (v.partial.isEmpty())
        return;
    v.partial.append('\n');
    sayLines(v);
}

} // namespace pando::adapters::dockerapi
