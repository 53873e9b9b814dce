// What the forge adapters share beyond RestClient (forgeclient.h): finding, making and updating
// a webhook once, a pull request's conversation as an issue's (GitHub, Gitea), and the rules for
// ids, refs, repository paths and the input a call takes.
#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

constexpr qsizetype MaxForgeMessage = 300;

// repoPath()'s test, as parseRepoAddress() makes it (adapters/api/repoaddress.cpp keeps its own).
bool startsWithSegments(const QStringList &list, const QStringList &prefix)
{
    if (prefix.size() > list.size())
        return false;
    for (qsizetype i = 0; i < prefix.size(); ++i) {
        if (list.at(i).compare(prefix.at(i), Qt::CaseInsensitive) != 0)
            return false;
    }
    return true;
}

} // namespace

Result<std::optional<QString>> findHook(const Result<QJsonArray> &hooks, const QString &url,
                                        const std::function<QString(const QJsonValue &)> &urlOf,
                                        const std::function<QString(const QJsonValue &)> &idOf)
{
    if (!hooks)
        return std::unexpected(hooks.error());
    for (const QJsonValue hook : *hooks) {
        if (urlOf(hook) == url)
            return std::optional<QString>(idOf(hook));
    }
    return std::optional<QString>();
}

Result<ForgeWebhook> registerHook(const HookOps &ops, const QString &url)
{
    auto found = ops.find();
    if (!found)
        return std::unexpected(found.error());
    QString id = found->value_or(QString());
    if (id.isEmpty()) {
        auto created = ops.create();
        if (!created)
            return std::unexpected(created.error());
        const std::optional<Error> duplicate = created->duplicate;
        if (!duplicate)
            return ForgeWebhook{created->id, url};
        // Made meanwhile by someone else, or a hook the listing did not show: the forge knows it.
        auto again = ops.find();
        if (!again)
            return std::unexpected(again.error());
        id = again->value_or(QString());
        if (id.isEmpty())
            return std::unexpected(*duplicate);
    }
    auto updated = ops.update(id);
    if (!updated)
        return std::unexpected(updated.error());
    return ForgeWebhook{id, url};
}

Result<QString> commentAsIssue(const RestClient &client, const ForgeScope &scope, const RepoAddress &repo, int number,
                               const QString &body, qsizetype limit, const CancelToken &cancel)
{
    auto target = client.commentTarget(scope, repo, number, body, cancel);
    if (!target)
        return std::unexpected(target.error());
    const QString base = u"/repos/%1"_s.arg(segments(target->path));
    return client.comment(base + u"/issues/%1/comments"_s.arg(number), {},
                          QJsonObject{{"body"_L1, clipped(body, limit)}}, number, target->call, idMember,
                          [&] { return client.perform("GET", base, {}, std::nullopt, target->call); });
}

Status editIssueComment(const RestClient &client, const ForgeScope &scope, const RepoAddress &repo, int number,
                        const QString &id, const QString &body, qsizetype limit, const CancelToken &cancel)
{
    auto target = client.editTarget(scope, repo, number, id, body, cancel);
    if (!target)
        return std::unexpected(target.error());
    const QString base = u"/repos/%1"_s.arg(segments(target->path));
    return client.editComment("PATCH", base + u"/issues/comments/"_s + id, {},
                              QJsonObject{{"body"_L1, clipped(body, limit)}}, id, target->call,
                              [&] { return client.perform("GET", base, {}, std::nullopt, target->call); });
}

QString idText(const QJsonValue &value)
{
    if (value.isDouble())
        return QString::number(value.toInteger());
    return value.toString();
}

QString idMember(const QJsonValue &object)
{
    return idText(object["id"_L1]);
}

Status checkSecret(const QByteArray &secret)
{
    if (secret.isEmpty())
        return fail(ErrorCode::Invalid, u"a webhook needs a secret: without one anyone could send pushes"_s,
                    u"secret"_s);
    if (secret.size() > 255 || secret.contains('\0') || secret.contains('\n') || secret.contains('\r'))
        return fail(ErrorCode::Invalid, u"a webhook's secret must be one line of at most 255 bytes"_s, u"secret"_s);
    return {};
}

QString forgeMessage(const QByteArray &body)
{
    const QJsonDocument document = QJsonDocument::fromJson(body);
    QStringList parts;
    if (document.isObject()) {
        const QJsonObject object = document.object();
        const QJsonValue message = object.value("message"_L1);
        if (message.isString()) {
            parts << message.toString();
        } else if (message.isObject()) {
            // GitLab's field errors: {"message": {"url": ["is blocked: …"]}}.
            const QJsonObject fields = message.toObject();
            for (auto it = fields.begin(); it != fields.end(); ++it) {
                QStringList texts;
                for (const QJsonValue text : it.value().toArray())
                    texts << text.toString();
                parts << it.key() + u' ' + (texts.isEmpty() ? it.value().toString() : texts.join(u", "_s));
            }
        }
        const QJsonValue error = object.value("error"_L1);
        if (error.isString())
            parts << error.toString() + (object.value("error_description"_L1).isString()
                                             ? u": "_s + object.value("error_description"_L1).toString()
                                             : QString());
        else if (error.isObject())
            parts << error.toObject().value("message"_L1).toString();
        for (const QJsonValue item : object.value("errors"_L1).toArray()) {
            const QJsonObject entry = item.toObject();
            if (item.isString())
                parts << item.toString();
            else if (entry.value("message"_L1).isString())
                parts << entry.value("message"_L1).toString();
            else if (entry.contains("field"_L1))
                parts << entry.value("field"_L1).toString() + u' ' + entry.value("code"_L1).toString();
        }
    } else if (document.isNull()) {
        // An HTML page (a proxy's, Azure's sign-in page) says nothing worth quoting.
        const QString text = QString::fromUtf8(body.left(600)).simplified();
        if (!text.startsWith(u'<'))
            parts << text;
    }
    parts.removeAll(QString());
    return clipped(parts.join(u"; "_s), MaxForgeMessage);
}

QString segment(const QString &text)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(text));
}

QString segments(const QStringList &parts)
{
    QStringList encoded;
    for (const QString &part : parts)
        encoded << segment(part);
    return encoded.join(u'/');
}

Result<QStringList> repoPath(const ForgeScope &scope, const RepoAddress &address, int minSegments, int maxSegments)
{
    const QUrl base(scope.baseUrl);
    QString host = base.host().toLower();
    QStringList basePath = base.path().split(u'/', Qt::SkipEmptyParts);
    // Azure DevOps' older address ORG.visualstudio.com reads as dev.azure.com/ORG, as addresses do.
    if (host.endsWith(u".visualstudio.com"_s)) {
        basePath.prepend(host.section(u'.', 0, 0));
        host = u"dev.azure.com"_s;
    }
    const QString hint =
        u"use a connection for the repository's forge, or the repository's address on %1"_s.arg(scope.baseUrl);
    if (address.transport == RepoAddress::Transport::File || address.host != host)
        return fail(ErrorCode::Invalid,
                    u"%1 is not on this connection's forge (%2)"_s.arg(address.text(), scope.baseUrl), u"repo"_s, hint);
    QStringList rest = address.path;
    if (startsWithSegments(rest, basePath)) {
        rest = rest.mid(basePath.size());
    } else if (address.isHttp() || scope.kind == ForgeKind::AzureDevOps) {
        // Over ssh a forge below a web path serves its repositories without it; over http(s)
        // the path is there, and Azure's organisation is in every address.
        return fail(ErrorCode::Invalid, u"%1 is not below %2"_s.arg(address.text(), scope.baseUrl), u"repo"_s, hint);
    }
    if (scope.kind == ForgeKind::Bitbucket && !rest.isEmpty() &&
        rest.first().compare(u"scm"_s, Qt::CaseInsensitive) == 0)
        rest.removeFirst();
    if (rest.size() < minSegments || (maxSegments >= 0 && rest.size() > maxSegments)) {
        const QString form = scope.kind == ForgeKind::AzureDevOps ? u"project/_git/repository"_s
                             : scope.kind == ForgeKind::GitLab    ? u"group/…/project"_s
                                                                  : u"owner/repository"_s;
        return fail(ErrorCode::Invalid,
                    u"%1 does not name a repository the way %2 does (%3 below %4)"_s.arg(
                        address.text(), forgeKindName(scope.kind), form, scope.baseUrl),
                    u"repo"_s);
    }
    return rest;
}

RefName readRef(const QString &ref)
{
    if (ref.startsWith(u"refs/heads/"_s))
        return {RefName::Kind::Branch, ref.mid(11)};
    if (ref.startsWith(u"refs/tags/"_s))
        return {RefName::Kind::Tag, ref.mid(10)};
    return {RefName::Kind::Any, ref};
}

bool looksLikeCommitId(const QString &ref)
{
    if (ref.size() < 7 || ref.size() > 64)
        return false;
    return std::all_of(ref.begin(), ref.end(), [](QChar c) {
        return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
    });
}

Result<QString> resolveRef(const QString &ref, const RefLookups &lookups, const QString &repo, const QString &forge)
{
    if (auto checked = checkRef(ref); !checked)
        return std::unexpected(checked.error());
    const RefName read = readRef(ref);
    using Lookup = std::function<Result<std::optional<QString>>(const QString &)>;
    QList<const Lookup *> order;
    if (read.kind == RefName::Kind::Branch)
        order = {&lookups.branch};
    else if (read.kind == RefName::Kind::Tag)
        order = {&lookups.tag};
    else if ((read.name.size() == 40 || read.name.size() == 64) && looksLikeCommitId(read.name))
        order = {&lookups.commit, &lookups.branch, &lookups.tag};
    else if (looksLikeCommitId(read.name))
        order = {&lookups.branch, &lookups.tag, &lookups.commit};
    else
        order = {&lookups.branch, &lookups.tag};
    for (const Lookup *lookup : order) {
        auto found = (*lookup)(read.name);
        if (!found)
            return std::unexpected(found.error());
        if (const QString commit = found->value_or(QString()); !commit.isEmpty())
            return commit;
    }
    if (auto there = lookups.repository(); !there)
        return std::unexpected(there.error());
    return std::unexpected(refNotFound(ref, repo, forge));
}

Status checkRef(const QString &ref)
{
    const bool control =
        std::any_of(ref.begin(), ref.end(), [](QChar c) { return c.category() == QChar::Other_Control; });
    if (ref.trimmed().isEmpty() || control || ref.size() > 1024)
        return fail(ErrorCode::Invalid, u"\"%1\" is not a branch, tag or commit"_s.arg(clipped(ref, 80)), u"ref"_s);
    return {};
}

Error refNotFound(const QString &ref, const QString &repo, const QString &forge)
{
    return Error{ErrorCode::NotFound, u"%1 has no branch, tag or commit \"%2\" on %3"_s.arg(repo, ref, forge), u"ref"_s,
                 u"check the ref's name; branches and tags are matched exactly"_s};
}

Status checkCommitId(const QString &commit)
{
    if ((commit.size() != 40 && commit.size() != 64) || !looksLikeCommitId(commit))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a full commit id (40 or 64 hex digits)"_s.arg(clipped(commit, 80)), u"commit"_s);
    return {};
}

Status checkHookUrl(const QString &url)
{
    const QUrl parsed(url, QUrl::StrictMode);
    const QString scheme = parsed.scheme().toLower();
    if (!parsed.isValid() || parsed.host().isEmpty() || (scheme != u"https"_s && scheme != u"http"_s))
        return fail(ErrorCode::Invalid, u"\"%1\" is not an http(s) URL a forge can deliver to"_s.arg(clipped(url, 200)),
                    u"url"_s);
    return {};
}

Status checkPullRequestNumber(int number)
{
    if (number <= 0)
        return fail(ErrorCode::Invalid, u"%1 is not a pull request's number (they start at 1)"_s.arg(number),
                    u"number"_s);
    return {};
}

Status checkCommentBody(const QString &body)
{
    if (body.trimmed().isEmpty())
        return fail(ErrorCode::Invalid, u"a comment needs something to say: its body is empty"_s, u"body"_s);
    return {};
}

QString withoutUserInfo(const QString &url)
{
    QUrl parsed(url);
    if (!parsed.isValid() || parsed.userInfo().isEmpty())
        return url;
    parsed.setUserInfo({});
    return parsed.toString();
}

QString clipped(const QString &text, qsizetype max)
{
    if (text.size() <= max)
        return text;
    qsizetype n = max;
    if (n > 0 && text.at(n - 1).isHighSurrogate())
        --n;
    return text.left(n);
}

QByteArray basicAuth(const QString &user, const QByteArray &password)
{
    const QByteArray credentials = user.toUtf8() + ':' + password;
    return "Basic " + credentials.toBase64();
}

} // namespace pando::adapters::forgerest::detail
