#pragma once
// Questions on the terminal without blocking the event loop: a prompt on stderr, then one line
// read from standard input as it arrives (so Ctrl-C still works while waiting), optionally with
// echo turned off for secrets. The terminal's echo setting is restored when the reader goes.

#include <QObject>
#include <QSocketNotifier>
#include <functional>
#include <memory>
#include <optional>

namespace pando::cli {

bool stdinIsTerminal();

class LineReader : public QObject {
    Q_OBJECT
public:
    // The line without its newline, or nullopt at end of input.
    using Callback = std::function<void(const std::optional<QString> &)>;

    explicit LineReader(QObject *parent = nullptr);
    ~LineReader() override;

    // Prints prompt on stderr and reads one line; hidden turns the terminal's echo off meanwhile.
    void ask(const QString &prompt, bool hidden, Callback callback);
    // Stops reading without calling back, and restores the echo.
    void cancel();

private:
    void readAvailable();
    void done(const std::optional<QString> &line);
    void restoreEcho();

    QSocketNotifier *m_notifier = nullptr;
    QByteArray m_buffer;
    Callback m_callback;
    struct SavedTerminal;
    std::unique_ptr<SavedTerminal> m_saved;
};

// "y" or "yes" in any case.
bool isYes(const QString &answer);

} // namespace pando::cli
