#pragma once
// InProcessSession: this computer's own Pando install inside the desktop process — the engine on
// a worker thread over SQLite in the data directory, the local Docker engine, the loopback
// router and git — with no setup asked on first start.
//
// Why it serves the API on loopback instead of calling the engine: the desktop must have no path
// into the engine that the API lacks. Calling core::Engine directly would need a second
// implementation of every operation (authorization, the specgate, owner grants, the approval
// rules, JSON shapes, the WebSocket streams' filtering) that could drift from the server's, and
// the contract suite would then test two codes where users of remote installs get the other one.
// Instead it starts the real server::ApiServer on 127.0.0.1 (a free port) with a token minted for
// the desktop user and reaches it through RemoteSession — the same code that attaches to pandod.
// The cost is a loopback hop per request (the API served ~60-70k small requests/s here, far above
// what views ask) and a bearer token in memory; in return a view that works locally works against
// every remote install, and the embedded server for teammates is the same server listening on
// one more address.
//
// Start-up (open()): on the worker thread, the install opens through app/wiring's Install, the
// composition root pandod uses too, so the desktop has what pandod has: it holds the data
// directory (a pandod or another desktop on it is refused, naming it), makes the adapters
// (Docker must answer, as for pandod; services run on it), starts the engine (migrations,
// settling work a previous run left), the pipeline runner, accounts and the audit sinks
// configured, and the desktop user is made the first administrator on a fresh data directory.
// The user's token is kept in <dataDir>/desktop-token (mode 0600) and reused; a missing or
// revoked one is minted again for the same user. A data directory whose install was set up by
// someone else (a pandod's) is refused: attach to that install as a remote one.
//
// Threading: the session lives on the GUI thread like RemoteSession; the engine, its server and
// the adapters live on the session's worker thread. The destructor stops the server and the
// engine (cancelling running jobs) and waits for the worker thread.

#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/services.h"
#include "adapters/api/source.h"
#include "app/desktop/session/remotesession.h"
#include "app/wiring/enginesettings.h"
#include "core/engine/engine.h"

#include <QHostAddress>
#include <QThread>
#include <memory>

namespace pando::desktop {

struct InProcessOptions {
    // The data directory is required; an empty database config means SQLite at
    // <dataDir>/pando.db, an empty install id the data directory's own (app/wiring/install.h).
    core::EngineOptions engine;
    QString dockerSocket;                               // empty: DOCKER_HOST or /var/run/docker.sock
    int maxRuns = 4;                                    // pipeline runs at once
    QMap<QString, QString> serviceImages;               // KIND[:VERSION] → image services run instead of Pando's
    QString auditSinks;                                 // a JSON file of audit sinks (docs/audit.md); empty: none
    wiring::EdgeChoice edge = wiring::EdgeChoice::Auto; // what serves the apps (docs/edge.md)
    int appLimit = 10;                                  // apps a member may own (operators and admins are not limited)
    // What the Settings view chose (the app limit, runs at once, approval policy and wait, audit
    // sinks); each one set there overrides the field above. Checked when the engine starts.
    wiring::EngineSettings settings;
    // The desktop user's account name; empty: the login name (or "desktop" when it is not a
    // valid account name).
    QString userName;
    // Tests inject fakes here; null means the real adapters pandod uses (Docker, the loopback
    // router, git in <dataDir>/cache/git, services on Docker). Each is used only on the worker
    // thread and the engine's.
    std::shared_ptr<adapters::Runtime> runtime;
    std::shared_ptr<adapters::Router> router;
    std::shared_ptr<adapters::SourceProvider> source;
    std::shared_ptr<adapters::ServiceProvisioner> services;
    // Installs the pipeline runner into the started engine; null: app/wiring's, as pandod does.
    std::function<Status(core::Engine &)> installPipelines;
};

class InProcessSession : public RemoteSession {
    Q_OBJECT
public:
    explicit InProcessSession(InProcessOptions options, QObject *parent = nullptr);
    ~InProcessSession() override;

    QString displayName() const override;
    // Starts the engine (the first call) or reconnects to it; watch stateChanged.
    void open() override;
    // The apps run on this computer: their own URLs, with nothing in between.
    void appLink(const QString &app, ObjectCallback done) override;
    QString linksThrough() const override { return {}; }

    // The desktop user's account name, once the engine started.
    QString userName() const { return m_userName; }
    // The loopback API port, once the engine started (0 before).
    quint16 port() const { return m_port; }

    // The login name as an account name: lowercase a-z 0-9 . _ -, "desktop" when none fits.
    static QString defaultUserName();

    // The embedded server for teammates: the same API over TLS on address:port, with a
    // certificate made in <dataDir>/tls on first use (naming hostNames) and reused after, so
    // pairing links stay valid. Serving again replaces the previous listener. Once the engine
    // has started; the answer says which port and certificate fingerprint teammates pin.
    struct Serving {
        quint16 port = 0;
        QString fingerprint;
    };
    void serveTeammates(const QHostAddress &address, quint16 port, const QStringList &hostNames,
                        std::function<void(const Result<Serving> &)> done);
    // Stops serving teammates and drops their connections; the loopback API goes on.
    void stopServingTeammates(std::function<void()> done);

protected:
    Error notReady() const override;

private:
    class Host;
    struct Started {
        quint16 port = 0;
        QString token;
        QString userName;
    };
    void started(const Result<Started> &result);

    struct ThreadStopper {
        void operator()(QThread *thread) const;
    };
    std::unique_ptr<QThread, ThreadStopper> m_thread;
    Host *m_host = nullptr; // lives on m_thread
    bool m_starting = false;
    quint16 m_port = 0;
    QString m_userName;
    Error m_startError;
};

} // namespace pando::desktop
