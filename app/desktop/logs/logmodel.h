#pragma once
// LogModel: one log (an app's output, a pipeline step's output) as a list model for the log
// view: rows are lines, oldest first, held in a LogBuffer ring. Feed it raw stream bytes with
// appendData (partial lines and escape sequences split across calls are joined) or complete
// lines with appendLines; each call (or, with a coalescing interval, each interval's worth of
// calls) becomes one batch: at most one beginRemoveRows for the chunks the ring drops and one
// beginInsertRows. Text, colours and search hits are computed only for rows the view asks for.
//
// Roles (names as QML sees them):
//   text        QString   the line with every escape sequence removed (also Qt::DisplayRole)
//   spans       QVariantList of {start, length, fg, bg, bold}: the styled runs of `text`, in
//               UTF-16 units; only runs with a colour or bold are listed. fg/bg is an int 0-15
//               (a palette colour: 0-7 normal, 8-15 bright; map to the theme), a "#rrggbb"
//               string (xterm colours 16-255 and truecolour), or undefined (default colour).
//   lineNumber  qint64    1-based, stable while older lines are dropped
//   stream      int       LogModel::Stream (0 stdout, 1 stderr)
//   time        QDateTime when the line arrived (or the time its producer gave)
//   match       bool      the line contains the search term
//   matchRanges QVariantList of {start, length}: where in `text` (for highlighting)
//
// Search: setting searchTerm starts an incremental scan (time-sliced on the event loop, so a
// million lines never block a frame); matchCount grows as it goes and `searching` is true until
// it has caught up. Lines appended later are scanned too. nextMatch/previousMatch answer from
// the matches found so far, wrapping around.
//
// Follow: `following` is the view's wish to stay at the bottom. The view clears it when the user
// scrolls up and sets it again from its "resume" button; while it is false, `unseenCount` counts
// the lines appended since, for that button's label.
//
// Threading: a GUI-thread object like every view model; feed it from that thread (the session's
// stream callbacks run there).

#include "app/desktop/logs/logbuffer.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QTimer>
#include <deque>

namespace pando::desktop {

class LogModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(bool following READ isFollowing WRITE setFollowing NOTIFY followingChanged)
    // A double for QML, which has no 64-bit integer type in Qt 6.4 (exact up to 2^53 lines).
    Q_PROPERTY(double unseenCount READ unseenCount NOTIFY unseenCountChanged)
    Q_PROPERTY(QString searchTerm READ searchTerm WRITE setSearchTerm NOTIFY searchTermChanged)
    Q_PROPERTY(bool caseSensitive READ isCaseSensitive WRITE setCaseSensitive NOTIFY caseSensitiveChanged)
    Q_PROPERTY(int matchCount READ matchCount NOTIFY matchCountChanged)
    Q_PROPERTY(bool searching READ isSearching NOTIFY searchingChanged)
    Q_PROPERTY(int coalesceInterval READ coalesceInterval WRITE setCoalesceInterval)

public:
    enum Role {
        TextRole = Qt::UserRole + 1,
        SpansRole,
        LineNumberRole,
        StreamRole,
        TimeRole,
        MatchRole,
        MatchRangesRole,
    };
    Q_ENUM(Role)
    enum Stream { Stdout = 0, Stderr = 1 };
    Q_ENUM(Stream)

    explicit LogModel(QObject *parent = nullptr);
    LogModel(qsizetype capacity, qsizetype chunkSize, QObject *parent = nullptr);
    ~LogModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    int count() const { return rowCount(); }
    const LogBuffer &buffer() const { return m_buffer; }

    // Raw stream bytes; time defaults to now. Complete lines become rows (now, or after the
    // coalescing interval); a trailing partial line waits for its '\n' or for flush().
    void appendData(QByteArrayView data, Stream stream = Stdout, const QDateTime &time = {});
    // Complete lines (no '\n' inside), appended at once as one batch.
    void appendLines(const QList<QByteArray> &lines, Stream stream = Stdout, const QDateTime &time = {});
    // The stream ended: its partial last line (if any) becomes a row, queued data is applied.
    Q_INVOKABLE void flush();
    Q_INVOKABLE void clear();
    // Clears, and the next line is line 1 again: another log (a step's output after another's)
    // shown in the same model. clear() keeps numbering, as a log that goes on does.
    Q_INVOKABLE void reset();

    // Milliseconds appendData waits to gather data into one batch; 0 (the default) applies each
    // call at once. A view fed by many small messages sets ~30 so that 100,000 lines a second
    // reach it as ~30 insertions.
    int coalesceInterval() const { return m_coalesce.interval(); }
    void setCoalesceInterval(int ms);

    bool isFollowing() const { return m_following; }
    void setFollowing(bool following);
    qint64 unseenCount() const { return m_unseen; }

    QString searchTerm() const { return m_term; }
    void setSearchTerm(const QString &term);
    bool isCaseSensitive() const { return m_caseSensitive; }
    void setCaseSensitive(bool caseSensitive);
    int matchCount() const { return int(m_matches.size()); }
    bool isSearching() const { return m_scanTimer.isActive(); }
    // The row of the first match after/before `row` (wrapping around), or -1 when there is none.
    // Pass -1 to nextMatch for the first match, rowCount() to previousMatch for the last.
    Q_INVOKABLE int nextMatch(int row) const;
    Q_INVOKABLE int previousMatch(int row) const;
    // 1-based position of a matching row among the matches ("3 of 17"), 0 if it is not one.
    Q_INVOKABLE int matchOrdinal(int row) const;

    // Rows first..last (inclusive, clamped) as plain text, escapes removed, one line each.
    Q_INVOKABLE QString copyRows(int first, int last) const;
    Q_INVOKABLE QString plainText(int row) const;

Q_SIGNALS:
    void countChanged();
    void followingChanged();
    void unseenCountChanged();
    void searchTermChanged();
    void caseSensitiveChanged();
    void matchCountChanged();
    void searchingChanged();

private:
    struct Queued {
        Stream stream;
        qint64 timeMs;
        QByteArray bytes;
    };
    struct CachedLine {
        qint64 line = -1;
        ansi::RenderedLine rendered;
    };

    struct Segment {
        Stream stream;
        qint64 timeMs;
        QByteArrayView bytes;
    };

    void applyQueued();
    void appendSegments(std::span<const Segment> segments);
    void appendBatch(std::span<const LogLineIn> lines);
    const ansi::RenderedLine &rendered(qsizetype row) const;
    QList<std::pair<qsizetype, qsizetype>> findIn(const QString &text) const;
    bool lineMatches(qsizetype row) const;
    void restartSearch();
    void scanSlice();

    LogBuffer m_buffer;
    QByteArray m_partial[2];
    qint64 m_partialTime[2] = {0, 0};
    std::vector<Queued> m_queue;
    QTimer m_coalesce;

    bool m_following = true;
    qint64 m_unseen = 0;

    QString m_term;
    QByteArray m_termUtf8;
    bool m_termAscii = true;
    bool m_caseSensitive = false;
    std::deque<qint64> m_matches; // absolute line numbers, ascending
    qint64 m_scanned = 0;         // lines before this absolute number have been scanned
    QTimer m_scanTimer;

    mutable std::vector<CachedLine> m_cache; // direct-mapped by line number
};

} // namespace pando::desktop
