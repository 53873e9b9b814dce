#pragma once
// BuildKit's progress as the Engine API streams it for a build asked with version=2: among the
// JSON lines, {"id":"moby.buildkit.trace","aux":"<base64>"} objects, each a protobuf
// StatusResponse of BuildKit's control API (vertexes with their name, start, end, cache use and
// error; the output of the commands they run; transfer statuses; warnings). BuildKitTrace reads
// them and says the build the way `docker build --progress=plain` does, one line at a time:
//
//   #4 [2/3] RUN make
//   #4 cc -o app main.c
//   #4 DONE 1.2s
//
// A step is numbered when it is first shown. It also remembers the step that failed first, with
// its last lines of output, for the build's error.
//
// Threading: one object per build, on the thread that reads the build's response.

#include <QByteArrayView>
#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

namespace pando::adapters::dockerapi {

class BuildKitTrace {
public:
    struct Failure {
        QString step;           // the vertex's name: "[2/3] RUN make", "[internal] load metadata for …"
        QString error;          // BuildKit's error for it
        QStringList lastOutput; // its last lines of output (at most TailLines), oldest first
    };
    static constexpr int TailLines = 10;

    explicit BuildKitTrace(std::function<void(const QString &line)> line) : m_line(std::move(line)) {}

    // One trace object's aux (base64 of a StatusResponse). False when it is not one; nothing is
    // said then.
    bool feed(QByteArrayView base64);
    // Says what output lines are left without their newline.
    void finish();
    // Whether any trace came: the engine built with BuildKit.
    bool seen() const { return m_seen; }
    // The first step that failed for a reason of its own (not because another one did), with the
    // output that came for it so far (BuildKit may send a step's last output after its error).
    std::optional<Failure> failure() const;

private:
    struct Vertex {
        int number = 0; // 0 until shown
        QString name;
        qint64 startedNs = 0;
        bool ended = false;
        QByteArray partial; // output after its last newline
        QStringList tail;
    };
    struct VertexUpdate;

    void vertex(const VertexUpdate &update);
    void output(const QString &digest, QByteArrayView text);
    void status(const QString &digest, const QString &id, const QString &text);
    void warning(const QString &digest, const QString &text);
    Vertex &shown(const QString &digest);
    void say(Vertex &v, const QString &text);
    void sayLines(Vertex &v); // says v's complete output lines
    void flush(Vertex &v);    // and the one left without a newline

    std::function<void(const QString &line)> m_line;
    QHash<QString, Vertex> m_vertices; // by digest
    QSet<QString> m_statusesDone;      // transfer statuses said to be done, by id
    int m_shown = 0;
    bool m_seen = false;
    QString m_failed; // the digest of failure()'s step
    QString m_failedError;
};

} // namespace pando::adapters::dockerapi
