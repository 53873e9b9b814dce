// `pando apps exec NAME [--tty] -- COMMAND [ARG...]`: a command in the container the app serves
// from, over GET /api/v1/apps/{name}/exec. Standard input goes to it (its end ends the command's),
// its output comes back on stdout and stderr as it prints it, and pando exits with its exit code.
// With --tty the command gets a terminal: this one is put in raw mode (keys, Ctrl-C included, go
// to the command) and restored at the end, and a change of its size is passed on.

#include "cli.h"
#include "output.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSocketNotifier>
#include <QTimer>
#include <QWebSocket>

#include <cerrno>
#include <optional>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace pando::cli {
namespace {

constexpr int SizeCheckMs = 500;

std::pair<int, int> terminalSize()
{
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_col == 0)
        return {0, 0};
    return {size.ws_col, size.ws_row};
}

void writeAll(int fd, QByteArrayView data)
{
    while (!data.isEmpty()) {
        const ssize_t n = ::write(fd, data.data(), size_t(data.size()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; // a closed stdout: the rest goes nowhere
        data = data.sliced(n);
    }
}

class ExecRun : public QObject {
public:
    ExecRun(Cli &cli, QString app, QStringList command, bool tty)
        : QObject(&cli), m_cli(cli), m_app(std::move(app)), m_command(std::move(command)), m_tty(tty)
    {}
    ~ExecRun() override { restoreTerminal(); }

    void start()
    {
        m_cli.setOnInterrupt([this] {
            restoreTerminal();
            printErr(QStringLiteral("pando: stopped; the command may go on in %1's container").arg(m_app));
        });
        m_socket = m_cli.api().exec(
            m_app,
            [this](const QJsonObject &message) {
                if (message.contains(QStringLiteral("exit")))
                    m_exit = message.value(QStringLiteral("exit")).toInt();
            },
            [this](const Status &closed) { ended(closed); });
        m_cli.own(m_socket);
        connect(m_socket, &QWebSocket::connected, this, &ExecRun::connected);
        connect(m_socket, &QWebSocket::binaryMessageReceived, this, [](const QByteArray &message) {
            if (message.isEmpty())
                return;
            writeAll(message.at(0) == 2 ? STDERR_FILENO : STDOUT_FILENO, QByteArrayView(message).sliced(1));
        });
    }

private:
    void connected()
    {
        QJsonObject command{{QStringLiteral("command"), QJsonArray::fromStringList(m_command)},
                            {QStringLiteral("tty"), m_tty}};
        if (m_tty) {
            const auto [columns, rows] = terminalSize();
            command.insert(QStringLiteral("columns"), columns);
            command.insert(QStringLiteral("rows"), rows);
            m_size = {columns, rows};
            rawTerminal();
            auto *sizeCheck = new QTimer(this);
            connect(sizeCheck, &QTimer::timeout, this, [this] {
                const auto now = terminalSize();
                if (now == m_size || !m_socket)
                    return;
                m_size = now;
                m_socket->sendTextMessage(QString::fromUtf8(
                    QJsonDocument(QJsonObject{{QStringLiteral("resize"), QJsonArray{now.first, now.second}}})
                        .toJson(QJsonDocument::Compact)));
            });
            sizeCheck->start(SizeCheckMs);
        }
        m_socket->sendTextMessage(QString::fromUtf8(QJsonDocument(command).toJson(QJsonDocument::Compact)));
        m_input = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
        connect(m_input, &QSocketNotifier::activated, this, &ExecRun::readInput);
    }

    void readInput()
    {
        char buffer[16384];
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (!m_socket)
            return;
        if (n > 0) {
            m_socket->sendBinaryMessage(QByteArray(buffer, n));
            return;
        }
        // The end of our input is the end of the command's.
        m_input->setEnabled(false);
        m_socket->sendTextMessage(QStringLiteral("{\"eof\":true}"));
    }

    void ended(const Status &closed)
    {
        restoreTerminal();
        if (m_cli.isFinished())
            return;
        if (!closed)
            return m_cli.failWith(closed.error());
        if (!m_exit)
            return m_cli.failWith(Error{ErrorCode::Unavailable,
                                        QStringLiteral("the server ended the command without its exit code"),
                                        QStringLiteral("app ") + m_app});
        m_cli.finish(*m_exit);
    }

    void rawTerminal()
    {
        if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &m_saved) != 0)
            return;
        termios raw = m_saved;
        ::cfmakeraw(&raw);
        if (::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
            m_raw = true;
    }

    void restoreTerminal()
    {
        if (m_raw)
            ::tcsetattr(STDIN_FILENO, TCSANOW, &m_saved);
        m_raw = false;
    }

    Cli &m_cli;
    QString m_app;
    QStringList m_command;
    bool m_tty = false;
    QPointer<QWebSocket> m_socket;
    QSocketNotifier *m_input = nullptr;
    std::optional<int> m_exit;
    std::pair<int, int> m_size{0, 0};
    termios m_saved{};
    bool m_raw = false;
};

} // namespace

void execInApp(Cli &cli)
{
    const QStringList words = cli.args().arguments;
    const QString app = words.value(0);
    const QStringList command = words.mid(1); // at least one word: the table's minimum
    const bool tty = cli.args().has(QStringLiteral("tty"));
    if (tty && !::isatty(STDIN_FILENO))
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("needs a terminal on standard input"),
                                  QStringLiteral("--tty"),
                                  QStringLiteral("leave --tty out when input is a pipe or a file")});
    (new ExecRun(cli, app, command, tty))->start();
}

} // namespace pando::cli
