#include "prompt.h"

#include "output.h"

#include <termios.h>
#include <unistd.h>

#include <cstdio>

namespace pando::cli {

struct LineReader::SavedTerminal {
    termios attributes;
};

bool stdinIsTerminal()
{
    return ::isatty(STDIN_FILENO) == 1;
}

bool isYes(const QString &answer)
{
    const QString a = answer.trimmed().toLower();
    return a == QLatin1String("y") || a == QLatin1String("yes");
}

LineReader::LineReader(QObject *parent) : QObject(parent)
{}

LineReader::~LineReader()
{
    restoreEcho();
}

void LineReader::ask(const QString &prompt, bool hidden, Callback callback)
{
    m_callback = std::move(callback);
    m_buffer.clear();
    const QByteArray bytes = prompt.toUtf8();
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
    if (hidden && stdinIsTerminal()) {
        termios attributes{};
        if (::tcgetattr(STDIN_FILENO, &attributes) == 0) {
            m_saved = std::make_unique<SavedTerminal>(SavedTerminal{attributes});
            attributes.c_lflag &= ~tcflag_t(ECHO);
            ::tcsetattr(STDIN_FILENO, TCSANOW, &attributes);
        }
    }
    if (!m_notifier) {
        m_notifier = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
        connect(m_notifier, &QSocketNotifier::activated, this, &LineReader::readAvailable);
    }
    m_notifier->setEnabled(true);
}

void LineReader::readAvailable()
{
    char chunk[4096];
    const ssize_t got = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (got <= 0) {
        done(m_buffer.isEmpty() ? std::nullopt : std::optional<QString>(QString::fromUtf8(m_buffer)));
        return;
    }
    m_buffer.append(chunk, qsizetype(got));
    const qsizetype newline = m_buffer.indexOf('\n');
    if (newline < 0)
        return;
    QByteArray line = m_buffer.left(newline);
    if (line.endsWith('\r'))
        line.chop(1);
    const QString text = QString::fromUtf8(line);
    // The line may be a secret: leave no copy of it behind in the buffers.
    line.fill('\0');
    m_buffer.fill('\0');
    m_buffer.clear();
    done(text);
}

void LineReader::done(const std::optional<QString> &line)
{
    m_notifier->setEnabled(false);
    const bool hidden = m_saved != nullptr;
    restoreEcho();
    // The user's Enter was not echoed: end the prompt's line ourselves.
    if (hidden)
        printErr(QString());
    if (auto callback = std::exchange(m_callback, nullptr))
        callback(line);
}

void LineReader::cancel()
{
    if (m_notifier)
        m_notifier->setEnabled(false);
    m_callback = nullptr;
    restoreEcho();
}

void LineReader::restoreEcho()
{
    if (!m_saved)
        return;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &m_saved->attributes);
    m_saved.reset();
}

} // namespace pando::cli
