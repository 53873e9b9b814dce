#include "qml/apps/appcommand.h"

using namespace Qt::StringLiterals;

namespace pando::desktop {

std::optional<QStringList> AppCommand::splitWords(const QString &line)
{
    QStringList words;
    QString word;
    bool inWord = false;
    QChar quote; // '\'' or '"' while inside one
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (quote == u'\'') {
            if (c == u'\'')
                quote = QChar();
            else
                word += c;
            continue;
        }
        if (c == u'\\' && i + 1 < line.size() && (quote.isNull() || QStringView(u"\"\\$`").contains(line.at(i + 1)))) {
            word += line.at(++i);
            inWord = true;
            continue;
        }
        if (quote == u'"') {
            if (c == u'"')
                quote = QChar();
            else
                word += c;
            continue;
        }
        if (c == u'\'' || c == u'"') {
            quote = c;
            inWord = true;
        } else if (c.isSpace()) {
            if (inWord)
                words << std::exchange(word, {});
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (!quote.isNull())
        return std::nullopt;
    if (inWord)
        words << word;
    return words;
}

void AppCommand::setSessionObject(QObject *session)
{
    auto *typed = qobject_cast<Session *>(session);
    if (typed == m_session)
        return;
    stop();
    m_session = typed;
    Q_EMIT sessionChanged();
}

void AppCommand::setApp(const QString &app)
{
    if (app == m_app)
        return;
    stop();
    m_app = app;
    m_output.clear();
    m_exitCode = -1;
    m_error.clear();
    Q_EMIT appChanged();
    Q_EMIT changed();
}

bool AppCommand::run(const QString &commandLine)
{
    if (m_run)
        return false;
    const std::optional<QStringList> words = splitWords(commandLine);
    const QStringList command = words.value_or(QStringList());
    m_output.clear();
    m_exitCode = -1;
    m_error = !words              ? tr("A quote is not closed: close it, or put \\ before it")
              : command.isEmpty() ? tr("Type a command to run, e.g. ls -la /")
                                  : QString();
    if (!m_session || m_app.isEmpty() || command.isEmpty()) {
        Q_EMIT changed();
        return false;
    }
    m_inputEnded = false;
    m_opened = false;
    m_pendingInput.clear();
    m_pendingEnd = false;
    m_run = m_session->runInApp(m_app, command, m_interactive, this);
    connect(m_run, &Subscription::received, this, &AppCommand::received);
    connect(m_run, &Subscription::ended, this, &AppCommand::ended);
    // The command goes first once the stream opens, then what was typed meanwhile.
    connect(m_run, &Subscription::opened, this, [this] {
        m_opened = true;
        flushInput();
    });
    Q_EMIT changed();
    return true;
}

void AppCommand::stop()
{
    if (!m_run)
        return;
    delete std::exchange(m_run, nullptr);
    Q_EMIT changed();
}

void AppCommand::setInteractive(bool interactive)
{
    if (interactive == m_interactive || m_run)
        return;
    m_interactive = interactive;
    Q_EMIT changed();
}

bool AppCommand::sendInput(const QString &line)
{
    if (!isInputOpen())
        return false;
    m_pendingInput += line.toUtf8() + '\n';
    append(line + u'\n'); // as a terminal would echo it
    flushInput();
    Q_EMIT changed();
    return true;
}

void AppCommand::endInput()
{
    if (!isInputOpen())
        return;
    m_inputEnded = true;
    m_pendingEnd = true;
    flushInput();
    Q_EMIT changed();
}

void AppCommand::flushInput()
{
    if (!m_run || !m_opened)
        return;
    if (!m_pendingInput.isEmpty() && m_run->sendBinary(m_pendingInput))
        m_pendingInput.clear();
    if (m_pendingEnd && m_pendingInput.isEmpty() && m_run->sendText(u"{\"eof\":true}"_s))
        m_pendingEnd = false;
}

void AppCommand::append(const QString &text)
{
    m_output += text;
    if (m_output.size() > MaxOutputChars)
        m_output.remove(0, m_output.size() - MaxOutputChars);
}

void AppCommand::received(const QJsonObject &message)
{
    if (message.contains(u"exit"_s))
        m_exitCode = message.value(u"exit"_s).toInt();
    else
        append(message.value(u"text"_s).toString());
    Q_EMIT changed();
}

void AppCommand::ended()
{
    Subscription *run = std::exchange(m_run, nullptr);
    if (!run)
        return;
    if (!run->result())
        m_error = run->result().error().message;
    run->deleteLater();
    Q_EMIT changed();
}

} // namespace pando::desktop
