#include "core/autodeploy/pushdecision.h"

#include "adapters/api/repoaddress.h"
#include "core/spec/specautodeploy.h"

#include <QDir>

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy {

namespace {

// Host and path, lower case: what two addresses of one repository share.
QString identity(const QString &url)
{
    auto address = adapters::parseRepoAddress(url);
    if (!address) {
        // A plain local path (tests, and repositories on the host itself).
        if (url.startsWith(u'/'))
            return u"file:"_s + QDir::cleanPath(url).toLower();
        return {};
    }
    if (address->transport == adapters::RepoAddress::Transport::File)
        return u"file:/"_s + address->path.join(u'/').toLower();
    return address->host.toLower() + u':' + address->path.join(u'/').toLower();
}

} // namespace

bool sameRepository(const QString &a, const QString &b)
{
    const QString left = identity(a);
    return !left.isEmpty() && left == identity(b);
}

PushDecision decidePush(const AppSpec &spec, const HookEvent &event)
{
    using Action = PushDecision::Action;
    const QString app = spec.name;
    if (event.kind == HookEvent::Kind::Ping)
        return {Action::Ignore, {}, u"ping: the webhook reaches Pando and its signature matches"_s};
    if (event.kind != HookEvent::Kind::Push)
        return {Action::Ignore, {}, u"%1 events are not acted on; Pando deploys on push"_s.arg(event.eventName)};
    bool same = false;
    for (const QString &url : event.repoUrls)
        same = same || sameRepository(url, spec.source.repo);
    if (!same)
        return {Action::Refuse,
                {},
                u"the push is to %1; %2 deploys %3"_s.arg(event.repoUrls.value(0, u"a repository not named"_s), app,
                                                          spec.source.repo)};
    const QString followed = followedRef(spec.source, event.ref);
    if (followed.isEmpty()) {
        const QString follows = spec.source.autodeploy.tags.isEmpty()
                                    ? u"branch %1"_s.arg(spec.source.ref)
                                    : u"tags matching %1"_s.arg(spec.source.autodeploy.tags);
        return {Action::Ignore, {}, u"push to %1; %2 follows %3"_s.arg(event.ref, app, follows)};
    }
    if (event.deleted || event.commit.isEmpty())
        return {Action::Ignore, {}, u"the push deleted %1"_s.arg(event.ref)};
    if (spec.source.autodeploy.mode != AppSpec::Source::AutoDeploy::Mode::Push)
        return {Action::Ignore,
                {},
                u"auto-deploy on push is off for %1 (source.autodeploy: %2)"_s.arg(
                    app, autoDeployModeName(spec.source.autodeploy.mode))};
    const bool tag = event.ref.startsWith(u"refs/tags/"_s);
    return {Action::Deploy, tag ? followed : event.commit, u"push of %1 to %2"_s.arg(event.commit.left(12), event.ref)};
}

} // namespace pando::core::autodeploy
