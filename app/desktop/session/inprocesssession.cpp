#include "inprocesssession.h"

#include "app/server/apiserver.h"
#include "app/server/tlsidentity.h"
#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "core/accounts/tokenkey.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

const QString TokenFile = u"desktop-token"_s;
const QString InitialTokenFile = u"initial-admin-token"_s;
// Where the running desktop serves its engine's API, for the command line (PANDO_SERVER); there
// only while the engine runs.
const QString ApiUrlFile = u"desktop-api"_s;

QString readSecret(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).trimmed();
}

QString randomPassword()
{
    QByteArray bytes(24, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), bytes.size() / 4);
    return QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

} // namespace

// The engine, its API server and the adapters, on the worker thread. Every method runs there.
class InProcessSession::Host : public QObject {
public:
    explicit Host(InProcessOptions options) : m_options(std::move(options)) {}

    Result<Started> start()
    {
        wiring::InstallOptions install;
        install.engine = m_options.engine;
        install.runtimes.dockerSocket = m_options.dockerSocket;
        install.dockerSocket = m_options.dockerSocket;
        install.serviceImages = m_options.serviceImages;
        install.maxRuns = m_options.maxRuns;
        install.auditSinks = m_options.auditSinks;
        install.appLimit = m_options.appLimit;
        install.edge = m_options.edge;
        install.runtime = m_options.runtime;
        install.router = m_options.router;
        install.source = m_options.source;
        install.services = m_options.services;
        install.installPipelines = m_options.installPipelines;
        // The Settings view's choices, read as pandod reads its flags: a policy that cannot be
        // read stops the start, as it stops pandod's, rather than letting every deploy through.
        auto chosen = wiring::checkEngineSettings(m_options.settings);
        if (!chosen) {
            Error e = chosen.error();
            e.hint = u"correct it or clear it under Settings → This computer's engine, then restart Pando"_s;
            return std::unexpected(e);
        }
        chosen->applyTo(install);
        m_install = std::make_unique<wiring::Install>(std::move(install));
        if (auto opened = m_install->open(); !opened) {
            m_install.reset();
            return std::unexpected(opened.error());
        }
        for (const QString &note : m_install->runtimeNotes())
            qInfo("pando-desktop: %s", qPrintable(note));
        m_dataDir = m_install->dataDir();
        auto user = desktopUser(m_dataDir);
        if (!user) {
            stop();
            return std::unexpected(user.error());
        }
        m_server = std::make_unique<server::ApiServer>(m_install->engine());
        m_server->setAuthzOptions(m_install->authzOptions());
        auto port = m_server->listen(QHostAddress::LocalHost, 0);
        if (!port) {
            stop();
            return std::unexpected(port.error());
        }
        // Apps that want people signed in (route.auth: pando) are checked by the edge against it.
        if (auto checked = m_install->setIdentityCheck(wiring::identityCheckFor(QHostAddress::LocalHost, *port));
            !checked)
            qWarning("pando-desktop: apps for people signed in answer 503 until the edge can ask this engine: %s",
                     qPrintable(checked.error().text()));
        if (auto written = core::detail::writePrivateFile(QDir(m_dataDir).filePath(ApiUrlFile),
                                                          u"http://127.0.0.1:%1\n"_s.arg(*port).toUtf8());
            !written)
            qWarning("pando-desktop: cannot say where the API is for the command line: %s",
                     qPrintable(written.error().text()));
        return Started{*port, user->second, user->first};
    }

    Result<Serving> serve(const QHostAddress &address, quint16 port, const QStringList &hostNames)
    {
        if (!m_server)
            return fail(ErrorCode::Unavailable, u"the local engine has not started"_s, {},
                        u"wait until this computer's engine is connected"_s);
        auto identity = server::loadOrCreateTlsIdentity(QDir(m_dataDir).filePath(u"tls"_s), hostNames);
        if (!identity)
            return std::unexpected(identity.error());
        m_server->stopTls();
        auto bound = m_server->listenTls(address, port, identity->certificate, identity->key);
        if (!bound)
            return std::unexpected(bound.error());
        return Serving{*bound, identity->fingerprint};
    }

    void stopServing()
    {
        if (m_server)
            m_server->stopTls();
    }

    void stop()
    {
        // The server's sockets hold subscriptions into the engine: it goes first.
        if (m_server && !m_dataDir.isEmpty())
            QFile::remove(QDir(m_dataDir).filePath(ApiUrlFile));
        m_server.reset();
        m_install.reset();
    }

private:
    // The desktop user's name and API token: made on a fresh install, reused or re-minted after.
    Result<std::pair<QString, QString>> desktopUser(const QString &dataDir)
    {
        core::Engine &engine = m_install->engine();
        core::accounts::AccountService &accounts = *engine.accounts();
        const core::Actor actor = core::Actor::system(u"desktop"_s);
        const QString userName = m_options.userName.isEmpty() ? defaultUserName() : m_options.userName;
        const QString tokenPath = QDir(dataDir).filePath(TokenFile);

        auto fresh = engine.bootstrapAdminToken();
        if (!fresh)
            return std::unexpected(fresh.error());
        auto needsBootstrap = accounts.needsBootstrap();
        if (!needsBootstrap)
            return std::unexpected(needsBootstrap.error());
        if (*needsBootstrap) {
            // A previous start may have stopped between the two steps: its initial token file
            // is still there.
            const std::optional<QString> &issued = *fresh;
            const QString initial = issued ? *issued : readSecret(QDir(dataDir).filePath(InitialTokenFile));
            if (initial.isEmpty())
                return fail(ErrorCode::Internal, u"the install has no users and no initial token"_s, dataDir,
                            u"move the data directory away to start afresh"_s);
            // Nobody logs in locally: the password only has to exist. Set one from the settings to
            // log in from elsewhere.
            // The account service removes the spent token's file.
            auto admin = accounts.createFirstAdmin(initial, userName, randomPassword(), actor);
            if (!admin)
                return std::unexpected(admin.error());
        } else if (const QString kept = readSecret(tokenPath); !kept.isEmpty()) {
            if (auto principal = accounts.authenticate(kept); principal && principal->username == userName)
                return std::pair{userName, kept};
        }
        auto user = accounts.user(userName);
        if (!user || user->disabled || user->role != core::accounts::Role::Admin)
            return fail(ErrorCode::Forbidden,
                        u"this data directory holds an install that %1 does not administer"_s.arg(userName), dataDir,
                        u"attach to that install as a remote one with a token from its admin, or choose another "
                        u"data directory"_s);
        auto issued = accounts.createToken(userName, u"desktop"_s, {u"admin"_s}, 0, actor);
        if (!issued)
            return std::unexpected(issued.error());
        if (auto written = core::detail::writePrivateFile(tokenPath, issued->secret.toUtf8() + '\n'); !written)
            return std::unexpected(written.error());
        return std::pair{userName, issued->secret};
    }

    InProcessOptions m_options;
    QString m_dataDir;
    std::unique_ptr<wiring::Install> m_install;
    std::unique_ptr<server::ApiServer> m_server;
};

void InProcessSession::ThreadStopper::operator()(QThread *thread) const
{
    thread->quit();
    thread->wait();
    delete thread;
}

InProcessSession::InProcessSession(InProcessOptions options, QObject *parent)
    : RemoteSession(parent), m_thread(new QThread), m_host(new Host(std::move(options)))
{
    m_thread->setObjectName(u"pando-engine"_s);
    m_host->moveToThread(m_thread.get());
}

InProcessSession::~InProcessSession()
{
    detach();
    if (m_thread->isRunning())
        QMetaObject::invokeMethod(
            m_host, [host = m_host]() { host->stop(); }, Qt::BlockingQueuedConnection);
    m_thread.reset();
    delete m_host;
}

QString InProcessSession::displayName() const
{
    return tr("This computer");
}

void InProcessSession::appLink(const QString &app, ObjectCallback done)
{
    this->app(app, [app, done = std::move(done)](const Result<QJsonObject> &answer) {
        if (!answer)
            return done(std::unexpected(answer.error()));
        const QString url = answer->value(u"url"_s).toString();
        if (url.isEmpty())
            return done(fail(ErrorCode::Conflict, u"app %1 is not routed yet: it was never deployed"_s.arg(app), {},
                             u"deploy it first"_s));
        done(QJsonObject{{u"url"_s, url}});
    });
}

QString InProcessSession::defaultUserName()
{
    QString name = qEnvironmentVariable("USER").toLower();
    name.remove(QRegularExpression(u"[^a-z0-9._-]"_s));
    name.truncate(64);
    if (name.isEmpty() || !name.front().isLetterOrNumber())
        return u"desktop"_s;
    return name;
}

Error InProcessSession::notReady() const
{
    if (!m_startError.message.isEmpty())
        return m_startError;
    return Error{ErrorCode::Unavailable, u"the local engine is still starting"_s, displayName(),
                 u"wait until the session is connected"_s};
}

void InProcessSession::open()
{
    if (m_port != 0) {
        RemoteSession::open();
        return;
    }
    if (m_starting)
        return;
    m_starting = true;
    m_startError = {};
    setState(State::Connecting);
    if (!m_thread->isRunning())
        m_thread->start();
    QMetaObject::invokeMethod(m_host, [host = m_host, self = this]() {
        Result<Started> result = host->start();
        // Delivered only while the session exists: its destructor waits for this method first.
        QMetaObject::invokeMethod(
            self, [self, result]() { self->started(result); }, Qt::QueuedConnection);
    });
}

void InProcessSession::serveTeammates(const QHostAddress &address, quint16 port, const QStringList &hostNames,
                                      std::function<void(const Result<Serving> &)> done)
{
    if (m_port == 0) {
        QMetaObject::invokeMethod(
            this, [done = std::move(done), error = notReady()] { done(std::unexpected(error)); }, Qt::QueuedConnection);
        return;
    }
    // Delivered only while the session exists: its destructor waits for the worker thread first.
    QMetaObject::invokeMethod(m_host, [host = m_host, self = this, address, port, hostNames, done = std::move(done)]() {
        Result<Serving> result = host->serve(address, port, hostNames);
        QMetaObject::invokeMethod(
            self, [done, result]() { done(result); }, Qt::QueuedConnection);
    });
}

void InProcessSession::stopServingTeammates(std::function<void()> done)
{
    QMetaObject::invokeMethod(m_host, [host = m_host, self = this, done = std::move(done)]() {
        host->stopServing();
        QMetaObject::invokeMethod(
            self, [done]() { done(); }, Qt::QueuedConnection);
    });
}

void InProcessSession::started(const Result<Started> &result)
{
    m_starting = false;
    if (!result) {
        m_startError = result.error();
        setState(State::Failed, m_startError);
        return;
    }
    m_port = result->port;
    m_userName = result->userName;
    attach(QUrl(u"http://127.0.0.1:%1"_s.arg(m_port)), result->token);
}

} // namespace pando::desktop
