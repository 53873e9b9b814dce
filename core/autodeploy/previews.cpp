#include "core/autodeploy/previews.h"

#include "core/autodeploy/pushdecision.h"
#include "core/state/sql.h"

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy {

using core::detail::text;

namespace {

QString branchOf(const QString &ref)
{
    static const QString heads = u"refs/heads/"_s;
    return ref.startsWith(heads) ? ref.mid(heads.size()) : ref;
}

// The address a fork's head is read from: its https clone address when the payload has one.
QString forkAddress(const PullRequestEvent &pull)
{
    for (const QString &url : pull.headRepoUrls) {
        if (url.startsWith(u"https://"_s) && url.endsWith(u".git"_s))
            return url;
    }
    for (const QString &url : pull.headRepoUrls) {
        if (url.startsWith(u"https://"_s) || url.startsWith(u"http://"_s))
            return url;
    }
    return pull.headRepoUrls.value(0);
}

const QString Columns = u"app, parent, number, title, head_branch, head_commit, repo, fork, author, web_url,"
                        " created_ms, updated_ms, comment_id"_s;

PreviewRecord readRecord(const QSqlQuery &q)
{
    PreviewRecord r;
    r.app = q.value(0).toString();
    r.parent = q.value(1).toString();
    r.number = q.value(2).toInt();
    r.title = q.value(3).toString();
    r.headBranch = q.value(4).toString();
    r.headCommit = q.value(5).toString();
    r.repo = q.value(6).toString();
    r.fork = q.value(7).toInt() != 0;
    r.author = q.value(8).toString();
    r.webUrl = q.value(9).toString();
    r.createdMs = q.value(10).toLongLong();
    r.updatedMs = q.value(11).toLongLong();
    r.commentId = q.value(12).toString();
    return r;
}

} // namespace

PreviewDecision decidePreview(const AppSpec &spec, const HookEvent &event, bool forksAllowed)
{
    using Action = PreviewDecision::Action;
    using PullAction = PullRequestEvent::Action;
    const PullRequestEvent &pull = event.pullRequest;
    const QString request = u"pull request #%1"_s.arg(pull.number);
    bool same = false;
    for (const QString &url : event.repoUrls)
        same = same || sameRepository(url, spec.source.repo);
    if (!same)
        return {Action::Refuse,
                u"%1 is on %2; %3 deploys %4"_s.arg(request, event.repoUrls.value(0, u"a repository not named"_s),
                                                    spec.name, spec.source.repo)};
    if (pull.action == PullAction::Closed)
        return {Action::Remove, u"%1 was %2"_s.arg(request, pull.merged ? u"merged"_s : u"closed"_s)};
    if (pull.action == PullAction::Other)
        return {Action::Ignore, u"%1: \"%2\" changes no code; previews follow opened, pushed and closed requests"_s.arg(
                                    request, pull.actionName)};
    if (!spec.preview.enabled)
        return {Action::Ignore, u"previews are off for %1 (its spec has no preview: true)"_s.arg(spec.name)};
    const QString branch = branchOf(spec.source.ref);
    if (pull.baseBranch != branch)
        return {Action::Ignore,
                u"%1 asks to merge into %2; %3 follows %4"_s.arg(request, pull.baseBranch, spec.name, branch)};
    if (pull.fork && !forksAllowed)
        return {Action::Ignore, u"%1 comes from a fork, and this install makes no previews of forks"_s.arg(request)};
    if (pull.headCommit.isEmpty() || pull.headBranch.isEmpty())
        return {Action::Ignore, u"%1 names no head to build"_s.arg(request)};
    return {Action::Deploy, u"%1 at %2 (%3)"_s.arg(request, pull.headCommit.left(12), pull.headBranch)};
}

Result<QString> previewName(const QString &app, int number)
{
    const QString name = u"%1-pr-%2"_s.arg(app).arg(number);
    if (number <= 0 || !isValidAppName(name))
        return fail(ErrorCode::Invalid,
                    u"the preview of pull request #%1 would be named %2, which is not an app name (a DNS label of at "
                    u"most 63 characters)"_s.arg(number)
                        .arg(name),
                    u"name"_s, u"give the app a shorter name to preview its pull requests"_s);
    return name;
}

Result<AppSpec> previewSpec(const AppSpec &app, const PullRequestEvent &pull, bool copySecrets)
{
    auto name = previewName(app.name, pull.number);
    if (!name)
        return std::unexpected(name.error());
    AppSpec spec = app;
    spec.name = *name;
    spec.source.ref = pull.headBranch;
    spec.source.autodeploy = {};
    if (pull.fork) {
        spec.source.repo = forkAddress(pull);
        spec.source.connection.clear();
    }
    for (auto it = app.preview.env.cbegin(); it != app.preview.env.cend(); ++it)
        spec.run.env.insert(it.key(), it.value());
    if (app.preview.memoryBytes > 0)
        spec.run.memoryBytes = app.preview.memoryBytes;
    if (app.preview.cpus > 0)
        spec.run.cpus = app.preview.cpus;
    spec.route.port = 0;
    spec.route.domains.clear();
    for (const QString &domain : app.route.domains) {
        if (!domain.startsWith(u"*."_s))
            spec.route.domains << u"pr-%1.%2"_s.arg(pull.number).arg(domain);
    }
    if (spec.route.domains.isEmpty())
        spec.route.paths.clear();
    spec.labels.insert(u"preview-of"_s, app.name);
    spec.labels.insert(u"pull-request"_s, QString::number(pull.number));
    if (!copySecrets)
        spec.secrets.clear();
    for (auto it = app.preview.seeds.cbegin(); it != app.preview.seeds.cend(); ++it) {
        if (auto service = spec.services.find(it.key()); service != spec.services.end())
            service->seed = it.value();
    }
    spec.preview = {};
    if (auto valid = validateAppSpec(spec); !valid)
        return std::unexpected(valid.error());
    return spec;
}

Status PreviewStore::add(const PreviewRecord &r)
{
    auto q = core::detail::run(
        m_db, u"INSERT INTO app_previews (%1) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s.arg(Columns),
        {text(r.app), text(r.parent), r.number, text(r.title), text(r.headBranch), text(r.headCommit), text(r.repo),
         r.fork ? 1 : 0, text(r.author), text(r.webUrl), r.createdMs, r.updatedMs, text(r.commentId)},
        u"record the preview "_s + r.app);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<PreviewRecord> PreviewStore::byApp(const QString &app)
{
    auto q = core::detail::run(m_db, u"SELECT %1 FROM app_previews WHERE app = ?"_s.arg(Columns), {text(app)},
                               u"read the preview "_s + app);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"%1 is not a preview"_s.arg(app), u"app"_s);
    return readRecord(*q);
}

Result<PreviewRecord> PreviewStore::find(const QString &parent, int number)
{
    auto q = core::detail::run(m_db, u"SELECT %1 FROM app_previews WHERE parent = ? AND number = ?"_s.arg(Columns),
                               {text(parent), number}, u"read the preview of %1 #%2"_s.arg(parent).arg(number));
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"%1 has no preview of pull request #%2"_s.arg(parent).arg(number),
                    u"number"_s, u"pando apps previews %1 lists them"_s.arg(parent));
    return readRecord(*q);
}

Result<QList<PreviewRecord>> PreviewStore::list(const QString &parent)
{
    auto q = parent.isEmpty()
                 ? core::detail::run(m_db, u"SELECT %1 FROM app_previews ORDER BY parent, number DESC"_s.arg(Columns),
                                     {}, u"list the previews"_s)
                 : core::detail::run(
                       m_db, u"SELECT %1 FROM app_previews WHERE parent = ? ORDER BY number DESC"_s.arg(Columns),
                       {text(parent)}, u"list the previews of "_s + parent);
    if (!q)
        return std::unexpected(q.error());
    QList<PreviewRecord> out;
    while (q->next())
        out << readRecord(*q);
    return out;
}

Status PreviewStore::touch(const QString &app, const QString &headCommit, const QString &title, qint64 nowMs)
{
    auto q =
        core::detail::run(m_db, u"UPDATE app_previews SET head_commit = ?, title = ?, updated_ms = ? WHERE app = ?"_s,
                          {text(headCommit), text(title), nowMs, text(app)}, u"update the preview "_s + app);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status PreviewStore::setComment(const QString &app, const QString &commentId)
{
    auto q = core::detail::run(m_db, u"UPDATE app_previews SET comment_id = ? WHERE app = ?"_s,
                               {text(commentId), text(app)}, u"record the comment of the preview "_s + app);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

} // namespace pando::core::autodeploy
