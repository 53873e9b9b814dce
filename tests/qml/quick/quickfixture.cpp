#include "quickfixture.h"

#include "core/policy/policy.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/pipelinefakes.h"

#include <QAccessible>
#include <QDateTime>
#include <QFile>
#include <QImage>
#include <QJsonObject>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTcpServer>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

QVariantMap answer(const Result<QJsonObject> &result)
{
    if (!result)
        return {{u"error"_s, describe(result.error())}};
    return result->toVariantMap();
}

QByteArray hostTask(const QByteArray &name, const QByteArray &script, const QByteArray &indent)
{
    return indent + "- task: " + name + "\n" + indent + "  config: {platform: host, run: {path: sh, args: [\"-c\", \"" +
           script + "\"]}}\n";
}

} // namespace

QuickFixture::QuickFixture(QObject *parent) : QObject(parent)
{}

QuickFixture::~QuickFixture()
{
    stop();
}

bool QuickFixture::restart(QQmlEngine *engine, QString *why)
{
    stop();
    connect(engine, &QQmlEngine::warnings, this, [this](const QList<QQmlError> &list) {
        for (const QQmlError &e : list)
            m_warnings.append(e.toString());
    });

    m_install = std::make_unique<TestInstall>();
    // Deploys of apps named gated-* from a repository not seen before wait for sign-off.
    auto policy = core::policy::parsePolicy(R"({"apps": ["gated-*"], "changes": {"newSourceRepo": true}})");
    if (!policy) {
        *why = describe(policy.error());
        return false;
    }
    m_install->approvalPolicy = *policy;
    // The real pipeline runner, as pandod and the desktop's own engine wire it.
    m_install->realPipelines = true;
    // An edge that keeps the addresses apps are given, as Caddy does.
    m_install->router = std::make_shared<FakeRouter>(true);
    if (!m_install->start()) {
        *why = m_install->error;
        return false;
    }
    m_session = std::make_unique<desktop::RemoteSession>(QUrl(m_install->baseUrl()), m_install->token);
    m_state = std::make_unique<desktop::DesktopState>(m_session.get());
    desktop::DesktopState::setInstance(m_state.get());
    m_session->open();
    if (!awaitConnected(*m_session, why))
        return false;
    Q_EMIT restarted();
    return true;
}

void QuickFixture::stop()
{
    m_server.reset();
    m_local.reset();
    m_localSettings.reset();
    m_localDir.reset();
    desktop::DesktopState::setInstance(nullptr);
    m_state.reset();
    qDeleteAll(m_others);
    m_others.clear();
    m_session.reset();
    m_install.reset();
    m_warnings.clear();
}

QObject *QuickFixture::session() const
{
    return m_session.get();
}

desktop::RemoteSession *QuickFixture::sessionAs(const QString &user)
{
    if (user.isEmpty() || user == u"admin"_s)
        return m_session.get();
    if (auto *known = m_others.value(user))
        return known;
    const QString token = m_install->tokens.value(user);
    if (token.isEmpty()) {
        qWarning("QuickFixture: no user %s in the test install", qPrintable(user));
        return nullptr;
    }
    auto *session = new desktop::RemoteSession(QUrl(m_install->baseUrl()), token, this);
    m_others.insert(user, session);
    session->open();
    QString why;
    if (!awaitConnected(*session, &why))
        qWarning("QuickFixture: %s's session did not connect: %s", qPrintable(user), qPrintable(why));
    return session;
}

QByteArray QuickFixture::appSpec(const QString &name, const QString &healthPath, int healthTimeoutSeconds) const
{
    // The fake runtime's containers "listen" on 127.0.0.1: the health probe needs something to
    // answer there, and the API server itself does.
    return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
           u"health:\n  path: %3\n  timeout: %4s\n"_s.arg(name)
               .arg(m_install->port)
               .arg(healthPath)
               .arg(healthTimeoutSeconds)
               .toUtf8();
}

QVariantMap QuickFixture::breakHealth(const QString &app)
{
    return answer(
        awaitObject([&](auto done) { m_session->updateApp(app, appSpec(app, u"/no-such-page"_s, 1), done); }));
}

QVariantMap QuickFixture::setDomains(const QString &app, const QString &domains, const QString &tls,
                                     const QString &auth)
{
    QByteArray spec = appSpec(app);
    spec += "route:\n  domains: [" + domains.toUtf8() + "]\n";
    if (!tls.isEmpty())
        spec += "  tls: " + tls.toUtf8() + "\n";
    if (!auth.isEmpty())
        spec += "  auth: " + auth.toUtf8() + "\n";
    return answer(awaitObject([&](auto done) { m_session->updateApp(app, spec, done); }));
}

void QuickFixture::setCertificate(const QString &host, const QString &issuer, qint64 notAfterMs, const QString &error)
{
    QList<adapters::CertificateState> certificates = m_install->router->certificates();
    certificates.removeIf([&](const adapters::CertificateState &c) { return c.host == host; });
    certificates.append(
        {host, issuer, notAfterMs > 0 ? QDateTime::fromMSecsSinceEpoch(notAfterMs, Qt::UTC) : QDateTime(), error});
    m_install->router->setCertificateStates(certificates);
}

void QuickFixture::setInstallCa(const QString &pem)
{
    m_install->router->setInstallCa(pem.toUtf8());
}

QString QuickFixture::temporaryPath(const QString &name) const
{
    return m_install->dir.filePath(name);
}

QString QuickFixture::readFile(const QString &path) const
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return u"cannot read %1: %2"_s.arg(path, file.errorString());
    return QString::fromUtf8(file.readAll());
}

QObject *QuickFixture::sessionFor(const QString &user)
{
    return sessionAs(user);
}

QVariantMap QuickFixture::createApp(const QString &name, const QString &as)
{
    desktop::RemoteSession *session = sessionAs(as);
    if (!session)
        return {{u"error"_s, u"no session for %1"_s.arg(as)}};
    return answer(awaitObject([&](auto done) { session->createApp(appSpec(name), done); }));
}

QVariantMap QuickFixture::deploy(const QString &app, const QString &as, const QString &ref)
{
    desktop::RemoteSession *session = sessionAs(as);
    if (!session)
        return {{u"error"_s, u"no session for %1"_s.arg(as)}};
    return answer(awaitObject([&](auto done) { session->deploy(app, ref, done); }));
}

QString QuickFixture::deployStatus(const QString &id)
{
    auto detail = awaitObject([&](auto done) { m_session->deployDetail(id, done); });
    return detail ? detail->value(u"status"_s).toString() : describe(detail.error());
}

QVariantMap QuickFixture::setBuildPipeline(const QString &name)
{
    const QByteArray yaml = "jobs:\n"
                            "- name: build\n"
                            "  plan:\n" +
                            hostTask("compile", "echo compiling; echo compiled 12 files", "  ") + "  - in_parallel:\n" +
                            hostTask("unit", "echo running 3 tests; echo 3 passed", "    ") +
                            hostTask("lint", "echo lint clean", "    ");
    return setPipeline(name, QString::fromUtf8(yaml));
}

QVariantMap QuickFixture::setPipeline(const QString &name, const QString &yaml)
{
    const QVariantMap set =
        answer(awaitObject([&](auto done) { m_session->setPipeline(name, yaml.toUtf8(), {}, done); }));
    if (set.contains(u"error"_s))
        return set;
    // The plan's tasks run on the host: allowed explicitly, as an administrator would; and the
    // new pipeline, paused at first, is started.
    if (!m_install->allowHostExecution(name))
        return {{u"error"_s, u"allowing host execution failed"_s}};
    if (const auto unpaused = awaitObject([&](auto done) { m_session->setPipelinePaused(name, false, done); });
        !unpaused)
        return {{u"error"_s, describe(unpaused.error())}};
    return set;
}

QObject *QuickFixture::engineSettings()
{
    if (!m_engineSettings) {
        m_engineSettingsStore =
            std::make_unique<QSettings>(temporaryPath(u"engine-settings.ini"_s), QSettings::IniFormat);
        m_engineSettings = std::make_unique<desktop::EngineSettingsForm>(m_engineSettingsStore.get(), true);
        // Kept here: the QML engine must not collect what a call hands it.
        QQmlEngine::setObjectOwnership(m_engineSettings.get(), QQmlEngine::CppOwnership);
    }
    return m_engineSettings.get();
}

QObject *QuickFixture::localServer()
{
    if (m_server)
        return m_server.get();
    m_localDir = std::make_unique<QTemporaryDir>();
    desktop::InProcessOptions options;
    options.engine.dataDir = m_localDir->filePath(u"data"_s);
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
    options.engine.workers = 1;
    options.userName = u"owner"_s;
    options.runtime = std::make_shared<FakeRuntime>();
    options.router = std::make_shared<FakeRouter>();
    options.source = std::make_shared<FakeSource>();
    options.installPipelines = [](core::Engine &engine) -> Status {
        engine.setPipelines(std::make_unique<FakePipelineService>(*engine.events()));
        return {};
    };
    m_local = std::make_unique<desktop::InProcessSession>(options);
    m_local->open();
    QString why;
    if (!awaitConnected(*m_local, &why))
        qWarning("QuickFixture: this computer's engine did not start: %s", qPrintable(why));
    m_localSettings = std::make_unique<QSettings>(m_localDir->filePath(u"settings.ini"_s), QSettings::IniFormat);
    m_server = std::make_unique<desktop::EmbeddedServer>(m_local.get(), m_localSettings.get());
    // Not the default port: other installs on this machine may hold it.
    QTcpServer probe;
    if (probe.listen(QHostAddress::LocalHost, 0)) {
        m_server->setAddress(u"127.0.0.1"_s);
        m_server->setPort(probe.serverPort());
    }
    QQmlEngine::setObjectOwnership(m_server.get(), QQmlEngine::CppOwnership);
    return m_server.get();
}

QString QuickFixture::takeWarnings()
{
    const QString text = m_warnings.join(u'\n');
    m_warnings.clear();
    return text;
}

QString QuickFixture::accessibleName(QObject *item) const
{
    QAccessibleInterface *accessible = item ? QAccessible::queryAccessibleInterface(item) : nullptr;
    const QString name = accessible ? accessible->text(QAccessible::Name) : QString();
    if (name.isEmpty() && item && item->inherits("QQuickAbstractButton"))
        return item->property("text").toString();
    return name;
}

int QuickFixture::accessibleRole(QObject *item) const
{
    QAccessibleInterface *accessible = item ? QAccessible::queryAccessibleInterface(item) : nullptr;
    return accessible ? int(accessible->role()) : int(QAccessible::NoRole);
}

QVariant QuickFixture::grabItem(QQuickItem *item) const
{
    if (!item || !item->window())
        return {};
    const QImage window = item->window()->grabWindow();
    const qreal ratio = window.devicePixelRatio();
    const QRectF place = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
    const QRectF pixels(place.x() * ratio, place.y() * ratio, place.width() * ratio, place.height() * ratio);
    return window.copy(pixels.toAlignedRect().intersected(window.rect()));
}

bool QuickFixture::sameImage(const QVariant &a, const QVariant &b) const
{
    return a.value<QImage>() == b.value<QImage>();
}

QString QuickFixture::pixel(const QVariant &image, int x, int y) const
{
    const QImage picture = image.value<QImage>();
    return picture.valid(x, y) ? QColor(picture.pixel(x, y)).name() : QString();
}

} // namespace pando::test
