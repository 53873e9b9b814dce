// The log view's model under a build that streams fast: lines per second appended through
// LogModel in 1,000-line blocks of raw stream bytes (as a session's log follow delivers them),
// with a following view reading the rows it would show after each batch, against the floor of
// splitting the same blocks into a plain std::vector<QByteArray>, side by side in one run.
// Also: resident memory after 1,000,000 lines (VmRSS) against the lines' raw bytes, for the
// model and for the floor, and the time to search all 1,000,000 lines.
// Target (issue 5): >= 100,000 lines/s through the model.
// PANDO_BENCH_QUICK=1: fewer lines, one round, no verdict. PANDO_BENCH_ROUNDS=N (default 3).

#include "app/desktop/logs/logmodel.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <algorithm>
#include <cstdio>
#include <malloc.h>

using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

constexpr int BlockLines = 1000;
constexpr int VisibleRows = 60; // a tall log pane at a small font

// Resident memory in bytes, from /proc/self/status.
qint64 residentBytes()
{
    QFile status(u"/proc/self/status"_s);
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong() * 1024;
    }
    return -1;
}

void releaseFreedMemory()
{
    malloc_trim(0);
}

// Build-log-like lines, about one in eight coloured, 40-140 bytes.
QList<QByteArray> makeBlocks(int count, qint64 *rawBytes)
{
    static const char *const Steps[] = {
        "#%d [build %d/9] RUN npm ci --no-audit",
        "#%d %d.42 added 1337 packages, and audited 1338 packages in 12s",
        "#%d [stage-%d] COPY --from=build /app/dist /usr/share/nginx/html",
        "#%d %d.17 \x1b[32m\xe2\x9c\x93\x1b[0m compiled src/components/Widget.tsx",
        "#%d %d.90 \x1b[1;33mwarning\x1b[0m: unused variable `result` in lib.rs:%d",
        "#%d %d.01 Downloading https://registry.example.org/pkg/-/pkg-1.2.3.tgz (1.2 MB)",
        "#%d DONE %d.3s",
        "#%d %d.55 \x1b[38;5;208mnote\x1b[0m: rebuilding because inputs changed"};
    QList<QByteArray> blocks;
    *rawBytes = 0;
    int n = 0;
    for (int b = 0; b < count; ++b) {
        QByteArray block;
        block.reserve(BlockLines * 90);
        for (int i = 0; i < BlockLines; ++i, ++n) {
            char text[256];
            const int length = std::snprintf(text, sizeof text, Steps[n % 8], n, n % 97, n % 13);
            const QByteArray line(text, std::clamp(length, 0, int(sizeof text) - 1));
            *rawBytes += line.size();
            block += line;
            block += '\n';
        }
        blocks.append(block);
    }
    return blocks;
}

// The floor: split each block into one QByteArray per line in a vector.
double floorLinesPerSecond(const QList<QByteArray> &blocks, qint64 lines)
{
    std::vector<QByteArray> store;
    store.reserve(size_t(lines));
    QElapsedTimer timer;
    timer.start();
    qint64 done = 0;
    while (done < lines) {
        const QByteArray &block = blocks[int((done / BlockLines) % blocks.size())];
        const char *data = block.constData();
        qsizetype start = 0;
        for (qsizetype nl; (nl = block.indexOf('\n', start)) >= 0; start = nl + 1)
            store.emplace_back(data + start, nl - start);
        done += BlockLines;
    }
    return double(done) * 1e9 / double(std::max<qint64>(timer.nsecsElapsed(), 1));
}

struct ModelRun {
    double linesPerSecond = 0;
    double worstBatchMs = 0;
};

// Through the model, with a following view reading its visible rows after each batch.
ModelRun modelLinesPerSecond(const QList<QByteArray> &blocks, qint64 lines)
{
    LogModel model;
    qsizetype touched = 0;
    QObject::connect(&model, &QAbstractItemModel::rowsInserted, &model, [&] {
        const int rows = model.rowCount();
        for (int row = std::max(0, rows - VisibleRows); row < rows; ++row) {
            const QModelIndex index = model.index(row);
            touched += model.data(index, LogModel::TextRole).toString().size();
            touched += model.data(index, LogModel::SpansRole).toList().size();
            touched += model.data(index, LogModel::LineNumberRole).toLongLong() & 1;
        }
    });
    ModelRun run;
    QElapsedTimer timer;
    timer.start();
    QElapsedTimer batch;
    qint64 done = 0;
    while (done < lines) {
        batch.start();
        model.appendData(blocks[int((done / BlockLines) % blocks.size())]);
        run.worstBatchMs = std::max(run.worstBatchMs, double(batch.nsecsElapsed()) / 1e6);
        done += BlockLines;
    }
    run.linesPerSecond = double(done) * 1e9 / double(std::max<qint64>(timer.nsecsElapsed(), 1));
    if (touched == 0 || model.rowCount() == 0)
        std::fprintf(stderr, "bench_logmodel: the view read nothing\n");
    return run;
}

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariable("PANDO_BENCH_QUICK") == "1"_L1;
    const int rounds = quick ? 1 : std::max(1, qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") ?: 3);
    const qint64 memoryLines = quick ? 200'000 : 1'000'000;
    const qint64 throughputLines = quick ? 200'000 : 2'000'000; // the full run wraps the ring

    qint64 blockBytes = 0;
    const QList<QByteArray> blocks = makeBlocks(int(memoryLines / BlockLines), &blockBytes);
    const qint64 rawBytes = blockBytes; // one pass over the blocks = memoryLines lines

    // Memory first, on a fresh heap.
    releaseFreedMemory();
    qint64 modelRss = 0;
    double searchMs = 0;
    int matches = 0;
    {
        const qint64 before = residentBytes();
        LogModel model;
        for (const QByteArray &block : blocks)
            model.appendData(block);
        modelRss = residentBytes() - before;
        QElapsedTimer timer;
        timer.start();
        model.setSearchTerm(u"WARNING"_s);
        while (model.isSearching())
            QCoreApplication::processEvents();
        searchMs = double(timer.nsecsElapsed()) / 1e6;
        matches = model.matchCount();
    }
    releaseFreedMemory();
    qint64 floorRss = 0;
    {
        const qint64 before = residentBytes();
        std::vector<QByteArray> store;
        for (const QByteArray &block : blocks) {
            const char *data = block.constData();
            qsizetype start = 0;
            for (qsizetype nl; (nl = block.indexOf('\n', start)) >= 0; start = nl + 1)
                store.emplace_back(data + start, nl - start);
        }
        floorRss = residentBytes() - before;
    }
    releaseFreedMemory();

    QList<double> model, floor, worst;
    for (int round = 1; round <= rounds; ++round) {
        const double f = floorLinesPerSecond(blocks, throughputLines);
        releaseFreedMemory();
        const ModelRun m = modelLinesPerSecond(blocks, throughputLines);
        releaseFreedMemory();
        floor.append(f);
        model.append(m.linesPerSecond);
        worst.append(m.worstBatchMs);
        std::printf("round %d: model %.0f lines/s (worst 1,000-line batch %.2f ms), floor %.0f lines/s\n", round,
                    m.linesPerSecond, m.worstBatchMs, f);
    }
    const double m = median(model), f = median(floor);
    std::printf(
        "append (%lld lines in %d-line blocks, median of %d): model %.0f lines/s, floor std::vector<QByteArray> "
        "%.0f lines/s, model/floor %.2f; worst batch %.2f ms\n",
        qlonglong(throughputLines), BlockLines, rounds, m, f, m / f, *std::max_element(worst.begin(), worst.end()));
    std::printf("memory after %lld lines (%.1f MB raw): model %.1f MB RSS (%.2fx raw, %.1f bytes/line over raw), "
                "floor %.1f MB RSS (%.2fx raw, %.1f bytes/line over raw)\n",
                qlonglong(memoryLines), double(rawBytes) / 1e6, double(modelRss) / 1e6,
                double(modelRss) / double(rawBytes), double(modelRss - rawBytes) / double(memoryLines),
                double(floorRss) / 1e6, double(floorRss) / double(rawBytes),
                double(floorRss - rawBytes) / double(memoryLines));
    std::printf("search of %lld lines: %.0f ms in time slices, %d matching lines\n", qlonglong(memoryLines), searchMs,
                matches);
    if (quick) {
        std::printf("quick mode: no verdict\n");
        return 0;
    }
    const bool meets = m >= 100'000;
    std::printf("target >= 100,000 lines/s through the model: %s\n", meets ? "met" : "NOT met");
    if (!meets) {
        std::fprintf(stderr, "bench_logmodel: below target\n");
        return 1;
    }
    return 0;
}
