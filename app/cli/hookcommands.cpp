// `pando apps hook` and `pando apps hook-secret`: deploy on push (docs/autodeploy.md). The
// webhook's address and what forges delivered to it; a new secret, shown once, or one the user
// chooses, read like every secret (never from argv).

#include "cli.h"
#include "commands.h"
#include "output.h"

#include "app/client/apiclient.h"

#include <QJsonArray>

namespace pando::cli {
namespace {

QString hookUrl(Cli &cli, const QString &path)
{
    QUrl url = cli.api().client()->baseUrl();
    url.setPath(path);
    url.setQuery(QString());
    return url.toString();
}

QString follows(const QJsonObject &hook)
{
    const QString tags = str(hook, "tags");
    return tags.isEmpty() ? QStringLiteral("branch %1").arg(str(hook, "branch"))
                          : QStringLiteral("tags matching %1").arg(tags);
}

void showHook(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    std::optional<int> limit;
    if (cli.args().has(QStringLiteral("limit")))
        limit = cli.args().value(QStringLiteral("limit")).toInt();
    cli.api().appHook(name, limit, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject &h = r.json;
        const QString mode = str(h, "mode");
        QList<std::pair<QString, QString>> pairs{
            {QStringLiteral("auto-deploy"), mode == u"off" ? QStringLiteral("off (source.autodeploy in the spec)")
                                                           : QStringLiteral("%1, %2").arg(mode, follows(h))},
            {QStringLiteral("webhook"), hookUrl(cli, str(h, "path"))},
            {QStringLiteral("secret"),
             h.value(QStringLiteral("secret_set")).toBool()
                 ? QStringLiteral("set by %1 at %2").arg(str(h, "secret_set_by"), str(h, "secret_set_at"))
                 : QStringLiteral("none yet: pando apps hook-secret %1").arg(name)},
        };
        if (mode == u"poll") {
            const QJsonObject poll = h.value(QStringLiteral("poll")).toObject();
            const QString error = str(poll, "error");
            pairs << std::pair{
                QStringLiteral("polled"),
                poll.value(QStringLiteral("polled_at")).toString().isEmpty()
                    ? QStringLiteral("not yet")
                    : QStringLiteral("%1 every %2s, at %3%4")
                          .arg(str(poll, "polled_at"))
                          .arg(num(poll, "every_s"))
                          .arg(shortCommit(str(poll, "commit")),
                               error.isEmpty() ? QString() : QStringLiteral(" (failed: %1)").arg(error))};
        }
        printOut(keyValues(pairs));
        QList<QStringList> rows;
        for (const QJsonValue v : h.value(QStringLiteral("deliveries")).toArray()) {
            const QJsonObject d = v.toObject();
            const QString deploy = str(d, "deploy");
            rows << QStringList{timestamp(num(d, "received_ms")),
                                str(d, "forge"),
                                str(d, "event"),
                                orDash(str(d, "ref")),
                                shortCommit(str(d, "commit")),
                                str(d, "outcome"),
                                deploy.isEmpty() ? str(d, "detail") : QStringLiteral("deploy %1").arg(deploy)};
        }
        printOut(QString());
        if (rows.isEmpty())
            printOut(QStringLiteral("no deliveries yet"));
        else
            printOut(table({QStringLiteral("RECEIVED"), QStringLiteral("FORGE"), QStringLiteral("EVENT"),
                            QStringLiteral("REF"), QStringLiteral("COMMIT"), QStringLiteral("OUTCOME"),
                            QStringLiteral("WHAT")},
                           rows));
        cli.finish(ExitOk);
    }));
}

void sendSecret(Cli &cli, const QString &name, const QString &chosen)
{
    cli.api().newHookSecret(name, chosen, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QString url = hookUrl(cli, str(r.json, "path"));
        const QString secret = r.json.value(QStringLiteral("secret")).toString();
        QList<std::pair<QString, QString>> pairs{{QStringLiteral("webhook"), url}};
        if (!secret.isEmpty())
            pairs << std::pair{QStringLiteral("secret"), secret};
        printOut(keyValues(pairs));
        printOut(secret.isEmpty()
                     ? QStringLiteral("The secret is set; deliveries signed with the old one are refused from now on.")
                     : QStringLiteral("This secret is not shown again. Give it to the forge with the webhook's "
                                      "address (docs/autodeploy.md says where each forge takes it)."));
        cli.finish(ExitOk);
    }));
}

void newSecret(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    if (!cli.args().has(QStringLiteral("given")) && !cli.args().has(QStringLiteral("from-file")))
        return sendSecret(cli, name, {});
    readSecretValue(cli, QStringLiteral("the webhook secret of %1").arg(name),
                    [&cli, name](const QString &value) { sendSecret(cli, name, value); });
}

void registerHook(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    QString publicUrl = cli.args().value(QStringLiteral("public-url"));
    if (publicUrl.isEmpty())
        publicUrl = hookUrl(cli, QStringLiteral("/"));
    cli.api().registerAppHook(name, publicUrl, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        printOut(keyValues(
            {{QStringLiteral("webhook"), str(r.json, "url")}, {QStringLiteral("hook"), str(r.json, "hook")}}));
        printOut(QStringLiteral("Registered on the forge with a new secret; deliveries signed with the old one are "
                                "refused from now on. `pando apps hook %1` shows what arrives.")
                     .arg(name));
        cli.finish(ExitOk);
    }));
}

void showPreviews(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().appPreviews(name, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue v : r.json.value(QStringLiteral("previews")).toArray()) {
            const QJsonObject p = v.toObject();
            const QString status = p.contains(QStringLiteral("status")) ? str(p, "status") : QStringLiteral("removing");
            rows << QStringList{QStringLiteral("#%1").arg(num(p, "number")),
                                str(p, "app"),
                                str(p, "head_branch") +
                                    (p.value(QStringLiteral("fork")).toBool() ? QStringLiteral(" (fork)") : QString()),
                                shortCommit(str(p, "head_commit")),
                                status,
                                orDash(str(p, "url")),
                                str(p, "expires_at").left(16).replace(u'T', u' ')};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("%1 has no previews. A pull request to its branch gets one when its spec has "
                                    "preview: true and the forge sends pull request events to its webhook.")
                         .arg(name));
        else
            printOut(table({QStringLiteral("PULL"), QStringLiteral("APP"), QStringLiteral("BRANCH"),
                            QStringLiteral("COMMIT"), QStringLiteral("STATUS"), QStringLiteral("URL"),
                            QStringLiteral("EXPIRES (UTC)")},
                           rows));
        cli.finish(ExitOk);
    }));
}

void removePreview(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const QString given = cli.args().arguments.value(1);
    bool ok = false;
    const int number = QString(given).remove(0, given.startsWith(u'#') ? 1 : 0).toInt(&ok);
    if (!ok || number <= 0)
        return cli.failWith(Error{
            ErrorCode::Invalid, QStringLiteral("\"%1\" is not a pull request's number").arg(given.left(40)),
            QStringLiteral("arguments"), QStringLiteral("pando apps previews %1 lists them, like #12").arg(name)});
    cli.api().removeAppPreview(name, number, cli.handle([&cli, name, number](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        printOut(QStringLiteral("Removing the preview of pull request #%1 of %2 with its data; a new push to the pull "
                                "request makes a new one.")
                     .arg(number)
                     .arg(name));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef HookTable[] = {
    {"apps",
     "hook",
     "NAME",
     1,
     1,
     {{{&flags::Limit}}},
     "show an app's deploy-on-push webhook and what forges delivered to it",
     &showHook,
     Needs::Token,
     nullptr,
     "source.autodeploy in the spec turns deploy on push (or polling) on; the forge sends its push events to the "
     "webhook's address, signed with the secret (pando apps hook-secret)."},
    {"apps",
     "hook-secret",
     "NAME",
     1,
     1,
     {{{&flags::Given}, {&flags::FromFile}}},
     "make a new webhook secret for an app (shown once), or set one you choose",
     &newSecret,
     Needs::Token,
     nullptr,
     "Deliveries signed with the previous secret are refused from then on. GitLab and Azure DevOps send the "
     "secret itself (as X-Gitlab-Token, or as the basic-authentication password); the others sign with it."},
    {"apps",
     "hook-register",
     "NAME",
     1,
     1,
     {{{&flags::PublicUrl}}},
     "register the app's webhook on its forge through its source connection, with a new secret",
     &registerHook,
     Needs::Token,
     nullptr,
     "The forge must reach this server at --public-url (by default the address pando talks to, which is refused "
     "when it is this machine's loopback). The connection's token needs the right to manage webhooks."},
    {"apps",
     "previews",
     "NAME",
     1,
     1,
     {},
     "list an app's preview deployments, one per pull request",
     &showPreviews,
     Needs::Token,
     nullptr,
     "preview: true in the spec gives each pull request to the app's branch an app of its own (NAME-pr-N), "
     "deployed again at each push and removed when the request closes or after preview.ttl without a push."},
    {"apps",
     "preview-rm",
     "NAME NUMBER",
     2,
     2,
     {},
     "remove the preview of a pull request now, with its data",
     &removePreview,
     Needs::Token,
     nullptr,
     "As closing the pull request does. A later push to the pull request makes a new preview."},
};
static_assert(isComplete(HookTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> hookCommands()
{
    return HookTable;
}

} // namespace pando::cli
