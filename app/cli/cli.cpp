#include "cli.h"

#include "output.h"
#include "prompt.h"

#include <QCoreApplication>
#include <QFile>
#include <QWebSocket>

namespace pando::cli {

namespace {

QString readStdinLine()
{
    QFile input;
    if (!input.open(stdin, QIODevice::ReadOnly))
        return {};
    QByteArray bytes = input.readLine(4096);
    while (bytes.endsWith('\n') || bytes.endsWith('\r'))
        bytes.chop(1);
    QString value = QString::fromUtf8(bytes);
    bytes.fill('\0');
    return value;
}

} // namespace

Cli::Cli(Args args, client::ApiClient *client, QObject *parent)
    : QObject(parent), m_args(std::move(args)), m_api(client)
{}

void Cli::start()
{
    m_args.command->handler(*this);
}

void Cli::interrupt()
{
    if (m_finished)
        return;
    if (m_onInterrupt)
        std::exchange(m_onInterrupt, nullptr)();
    finish(ExitInterrupted);
}

void Cli::finish(int code)
{
    if (m_finished)
        return;
    m_finished = true;
    for (const QPointer<QWebSocket> &stream : std::as_const(m_streams)) {
        if (stream)
            stream->abort();
    }
    // Puts the terminal's echo back if a hidden prompt was open.
    if (m_reader)
        m_reader->cancel();
    // Queued, so that it also works when the command ends before the event loop runs.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(), [code]() { QCoreApplication::exit(code); }, Qt::QueuedConnection);
}

void Cli::failWith(const Error &error)
{
    failWithCode(error, ExitFailed);
}

void Cli::failWithCode(const Error &error, int code)
{
    if (m_finished)
        return;
    printError(error);
    finish(code);
}

client::ApiClient::Callback Cli::handle(std::function<void(const client::ApiResponse &)> onOk)
{
    return [this, onOk = std::move(onOk)](const Result<client::ApiResponse> &result) {
        if (m_finished)
            return;
        if (!result) {
            failWith(result.error());
            return;
        }
        onOk(*result);
    };
}

LineReader *Cli::reader()
{
    if (!m_reader)
        m_reader = new LineReader(this);
    return m_reader;
}

void Cli::own(QWebSocket *stream)
{
    m_streams << QPointer<QWebSocket>(stream);
}

void Cli::confirm(const QString &question, const QString &where, std::function<void()> onYes)
{
    if (m_args.has(QStringLiteral("yes")))
        return onYes();
    if (!stdinIsTerminal())
        return failWith(Error{ErrorCode::Invalid,
                              QStringLiteral("not confirmed: standard input is not a terminal, so pando cannot ask"),
                              where, QStringLiteral("pass --yes to go ahead without asking")});
    reader()->ask(question + QStringLiteral(" [y/N] "), false,
                  [this, where, onYes = std::move(onYes)](const std::optional<QString> &answer) {
                      if (m_finished)
                          return;
                      if (answer && isYes(*answer))
                          return onYes();
                      failWith(Error{ErrorCode::Cancelled, QStringLiteral("nothing changed: not confirmed"), where});
                  });
}

void Cli::readPassword(const QString &prompt, const std::function<void(const QString &)> &then)
{
    if (stdinIsTerminal()) {
        reader()->ask(prompt, true, [this, then](const std::optional<QString> &value) {
            if (!m_finished)
                then(value.value_or(QString()));
        });
        return;
    }
    then(readStdinLine());
}

} // namespace pando::cli
