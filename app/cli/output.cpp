#include "output.h"

#include <unistd.h>

#include <QDateTime>
#include <QJsonDocument>
#include <cstdio>

namespace pando::cli {

QString str(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toString();
}

qint64 num(const QJsonObject &o, const char *key)
{
    return qint64(o.value(QLatin1String(key)).toDouble());
}

QString orDash(const QString &value)
{
    return value.isEmpty() ? QStringLiteral("-") : value;
}

namespace {
bool g_statusPending = false;

QByteArray clearStatus()
{
    if (!g_statusPending)
        return {};
    g_statusPending = false;
    return "\r\033[K";
}
} // namespace

bool stdoutIsTerminal()
{
    static const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    return terminal;
}

QString colouredDiffLine(const QString &line)
{
    if (!stdoutIsTerminal() || !qEnvironmentVariableIsEmpty("NO_COLOR"))
        return line;
    const char *colour = nullptr;
    if (line.startsWith(QLatin1String("+++")) || line.startsWith(QLatin1String("---")))
        colour = "\033[1m";
    else if (line.startsWith(QLatin1Char('+')))
        colour = "\033[32m";
    else if (line.startsWith(QLatin1Char('-')))
        colour = "\033[31m";
    else if (line.startsWith(QLatin1String("@@")))
        colour = "\033[36m";
    if (!colour)
        return line;
    return QLatin1String(colour) + line + QStringLiteral("\033[0m");
}

void printStatus(const QString &text)
{
    if (!stdoutIsTerminal())
        return;
    const QByteArray bytes = clearStatus() + text.toUtf8();
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
    std::fflush(stdout);
    g_statusPending = true;
}

void printOut(const QString &text)
{
    const QByteArray bytes = clearStatus() + text.toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
    std::fflush(stdout);
}

void printErr(const QString &text)
{
    // A status line on the same terminal would run into the message.
    if (const QByteArray clear = clearStatus(); !clear.isEmpty()) {
        std::fwrite(clear.constData(), 1, size_t(clear.size()), stdout);
        std::fflush(stdout);
    }
    const QByteArray bytes = text.toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
}

void printJson(const QJsonObject &object)
{
    printOut(QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented)).trimmed());
}

void printError(const Error &error)
{
    // One line whatever the message holds, so that scripts can rely on it.
    QString message = error.text();
    message.replace(QLatin1Char('\n'), QLatin1Char(' '));
    printErr(QStringLiteral("pando: ") + message);
    if (!error.hint.isEmpty())
        printErr(QStringLiteral("hint: ") + error.hint);
}

QString table(const QStringList &headers, const QList<QStringList> &rows)
{
    QList<qsizetype> widths;
    for (const QString &h : headers)
        widths << h.size();
    for (const QStringList &row : rows) {
        for (qsizetype i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], row[i].size());
    }
    auto line = [&](const QStringList &cells) {
        QString out;
        for (qsizetype i = 0; i < cells.size(); ++i) {
            if (i + 1 == cells.size())
                out += cells[i];
            else
                out += cells[i].leftJustified(widths.value(i)) + QStringLiteral("  ");
        }
        while (out.endsWith(QLatin1Char(' ')))
            out.chop(1);
        return out;
    };
    QStringList lines{line(headers)};
    for (const QStringList &row : rows)
        lines << line(row);
    return lines.join(QLatin1Char('\n'));
}

QString keyValues(const QList<std::pair<QString, QString>> &pairs)
{
    qsizetype width = 0;
    for (const auto &[key, value] : pairs)
        width = std::max(width, key.size() + 1);
    QStringList lines;
    for (const auto &[key, value] : pairs)
        lines << QString(key + QLatin1Char(':')).leftJustified(width + 2) + value;
    return lines.join(QLatin1Char('\n'));
}

QString duration(qint64 ms)
{
    if (ms < 1000)
        return QStringLiteral("%1ms").arg(ms);
    if (ms < 60'000)
        return QStringLiteral("%1s").arg(double(ms) / 1000.0, 0, 'f', 1);
    const qint64 seconds = ms / 1000;
    return QStringLiteral("%1m%2s").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0'));
}

QString logRemovedNote(qint64 removedMs)
{
    return QStringLiteral("removed %1 by the job's build_log_retention (the steps and their ends are kept)")
        .arg(timestamp(removedMs));
}

QString timestamp(qint64 ms)
{
    if (ms <= 0)
        return QStringLiteral("-");
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString shortCommit(const QString &commit)
{
    return commit.isEmpty() ? QStringLiteral("-") : commit.left(7);
}

} // namespace pando::cli
