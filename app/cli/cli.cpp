#include "cli.h"

#include "output.h"
#include "prompt.h"

#include <QCoreApplication>
#include <QFile>
#include <QStringDecoder>
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

void readSecretValue(Cli &cli, const QString &what, const std::function<void(const QString &)> &use)
{
    // Never from argv: a value there lands in the shell's history and in ps.
    if (cli.args().has(QStringLiteral("from-file"))) {
        const QString path = cli.args().value(QStringLiteral("from-file"));
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return cli.failWith(Error{ErrorCode::Invalid,
                                      QStringLiteral("cannot read the file of %1: %2").arg(what, file.errorString()),
                                      QStringLiteral("--from-file %1").arg(path)});
        // The file's bytes are the value exactly: a PEM file keeps its last line break.
        QByteArray bytes = file.readAll();
        QStringDecoder utf8(QStringDecoder::Utf8);
        QString value = utf8(bytes);
        bytes.fill('\0');
        if (utf8.hasError())
            return cli.failWith(
                Error{ErrorCode::Invalid, QStringLiteral("the file of %1 is not UTF-8 text").arg(what),
                      QStringLiteral("--from-file %1").arg(path),
                      QStringLiteral("encode binary data, e.g. with base64, and decode it where it is used")});
        use(value);
        value.fill(QChar(u'\0'));
        return;
    }
    if (stdinIsTerminal()) {
        cli.reader()->ask(QStringLiteral("value for %1: ").arg(what), true,
                          [&cli, use](const std::optional<QString> &value) {
                              if (!cli.isFinished())
                                  use(value.value_or(QString()));
                          });
        return;
    }
    QFile input;
    if (!input.open(stdin, QIODevice::ReadOnly))
        return cli.failWith(Error{ErrorCode::Invalid,
                                  QStringLiteral("cannot read standard input: %1").arg(input.errorString()),
                                  QStringLiteral("stdin")});
    QByteArray bytes = input.readAll();
    // `echo value | pando secrets set` adds a newline that is not part of the value.
    if (bytes.endsWith('\n'))
        bytes.chop(1);
    if (bytes.endsWith('\r'))
        bytes.chop(1);
    QString value = QString::fromUtf8(bytes);
    bytes.fill('\0');
    use(value);
    value.fill(QChar(u'\0'));
}

} // namespace pando::cli
