#include "enginepeople.h"

#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"

#include <QTest>

using namespace Qt::StringLiterals;

namespace pando::test {

QString EnginePeople::create(core::Engine &engine,
                             std::initializer_list<std::pair<const char *, core::accounts::Role>> people)
{
    for (const auto &[name, role] : people) {
        auto user = engine.accounts()->createUser(
            core::accounts::NewUser{QString::fromLatin1(name), {}, role, u"correct horse battery"_s},
            core::Actor::system(u"test"_s));
        if (!user)
            return QString::fromLatin1(name) + u": "_s + user.error().text();
        m_users.insert(user->username, *user);
    }
    return {};
}

QString EnginePeople::nameOf(const QString &userId) const
{
    for (const core::accounts::User &user : m_users)
        if (user.id == userId)
            return user.username;
    return {};
}

core::accounts::Principal EnginePeople::principal(const QString &username, core::accounts::Principal::Kind kind,
                                                  const QStringList &scopes) const
{
    const core::accounts::User user = m_users.value(username);
    return {user.id, user.username, user.role, scopes, u"s1"_s, kind};
}

core::Actor EnginePeople::actor(const QString &username) const
{
    return principal(username).actor(u"127.0.0.1"_s);
}

wiring::InstallOptions quietInstallOptions(const QString &dataDir)
{
    wiring::InstallOptions options;
    options.engine.dataDir = dataDir;
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0;
    options.engine.diskCheckIntervalMs = 0;
    options.engine.autodeployTickMs = 0;
    options.engine.workers = 1;
    // Routing is not what these tests are about; an edge of its own would outlive the test.
    options.edge = wiring::EdgeChoice::InProcess;
    return options;
}

void waitSettled(core::Engine &engine, const QString &deployId)
{
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = engine.deployView(deployId);
            return view && view->record.status != core::DeployStatus::Queued &&
                   view->record.status != core::DeployStatus::Running;
        }(),
        20000);
}

void waitGone(core::Engine &engine, const QString &app)
{
    QTRY_VERIFY_WITH_TIMEOUT(!engine.app(app).has_value(), 20000);
}

} // namespace pando::test
