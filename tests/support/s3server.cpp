#include "tests/support/s3server.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

QString s3rverPath()
{
    QString tools = qEnvironmentVariable("PANDO_NPM_TOOLS");
    if (tools.isEmpty()) {
        QString cache = qEnvironmentVariable("XDG_CACHE_HOME");
        if (cache.isEmpty())
            cache = QDir::homePath() + u"/.cache"_s;
        tools = cache + u"/pando/npm-tools"_s;
    }
    return tools + u"/node_modules/s3rver/bin/s3rver.js"_s;
}

} // namespace

bool S3Server::available(QString *why)
{
    if (QStandardPaths::findExecutable(u"node"_s).isEmpty()) {
        if (why)
            *why = u"node is not installed"_s;
        return false;
    }
    if (!QFileInfo::exists(s3rverPath())) {
        if (why)
            *why = u"s3rver is not installed at %1 (scripts/lib.sh: ensure_npm_tools)"_s.arg(s3rverPath());
        return false;
    }
    return true;
}

S3Server::~S3Server()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(5000)) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
    }
}

QString S3Server::endpoint() const
{
    return u"http://127.0.0.1:%1"_s.arg(m_port);
}

bool S3Server::start()
{
    if (!m_dir.isValid()) {
        m_error = u"no temporary directory"_s;
        return false;
    }
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(u"node"_s, {s3rverPath(), u"--directory"_s, m_dir.path(), u"--address"_s, u"127.0.0.1"_s,
                                 u"--port"_s, u"0"_s, u"--no-vhost-buckets"_s, u"--silent"_s});
    static const QRegularExpression listening(uR"(listening on 127\.0\.0\.1:(\d+))"_s);
    QByteArray said;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 20000) {
        if (m_process->state() == QProcess::NotRunning && !m_process->bytesAvailable())
            break;
        m_process->waitForReadyRead(200);
        said += m_process->readAll();
        if (const auto match = listening.match(QString::fromUtf8(said)); match.hasMatch()) {
            m_port = match.captured(1).toInt();
            return true;
        }
    }
    m_error = u"s3rver did not start: "_s + QString::fromUtf8(said);
    return false;
}

} // namespace pando::test
