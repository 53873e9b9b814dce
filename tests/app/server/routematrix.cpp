#include "routematrix.h"

namespace pando::test::routematrix {

const QStringList Walkers = {QStringLiteral("scoped"), QStringLiteral("viewer"), QStringLiteral("member"),
                             QStringLiteral("operator"), QStringLiteral("admin")};
const QStringList Columns = {QStringLiteral("admin"), QStringLiteral("operator"), QStringLiteral("member"),
                             QStringLiteral("viewer"), QStringLiteral("scoped")};

const QHash<QString, QString> &expectations()
{
    static const QHash<QString, QString> table{
        // route                                                           admin operator member viewer scoped
        {QStringLiteral("GET /api/v1/health"), QStringLiteral("200 200 200 200 200")},
        // No body: the fields are missing.
        {QStringLiteral("POST /api/v1/bootstrap"), QStringLiteral("400 400 400 400 400")},
        {QStringLiteral("POST /api/v1/sessions"), QStringLiteral("400 400 400 400 400")},
        // API tokens are not login sessions.
        {QStringLiteral("DELETE /api/v1/sessions/current"), QStringLiteral("400 400 400 400 400")},
        {QStringLiteral("GET /api/v1/users"), QStringLiteral("200 403 403 403 403")},
        {QStringLiteral("POST /api/v1/users"), QStringLiteral("400 403 403 403 403")},
        // There is no user "theirs".
        {QStringLiteral("POST /api/v1/users/{name}/disable"), QStringLiteral("404 403 403 403 403")},
        // There is no user "theirs"; the code is made only for administrators.
        {QStringLiteral("POST /api/v1/users/{name}/pairings"), QStringLiteral("404 403 403 403 403")},
        // No body: the pairing code is missing.
        {QStringLiteral("POST /api/v1/pairings/redeem"), QStringLiteral("400 400 400 400 400")},
        {QStringLiteral("GET /api/v1/connections"), QStringLiteral("200 403 403 403 403")},
        {QStringLiteral("GET /api/v1/tokens"), QStringLiteral("200 200 200 200 200")},
        {QStringLiteral("POST /api/v1/tokens"), QStringLiteral("400 400 400 400 400")},
        {QStringLiteral("DELETE /api/v1/tokens/{id}"), QStringLiteral("204 403 403 403 403")},
        {QStringLiteral("GET /api/v1/apps"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("POST /api/v1/apps"), QStringLiteral("400 400 400 403 403")},
        {QStringLiteral("GET /api/v1/apps/{name}"), QStringLiteral("200 200 403 200 403")},
        // No body: the spec is missing.
        {QStringLiteral("PUT /api/v1/apps/{name}"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/apps/{name}"), QStringLiteral("202 202 403 403 403")},
        {QStringLiteral("POST /api/v1/apps/{name}/deploys"), QStringLiteral("202 202 403 403 403")},
        // No earlier version to go back to.
        {QStringLiteral("POST /api/v1/apps/{name}/rollback"), QStringLiteral("409 409 403 403 403")},
        // The app runs: starting it is a no-op that answers with the app.
        {QStringLiteral("POST /api/v1/apps/{name}/start"), QStringLiteral("200 200 403 403 403")},
        // Stopping a stopped app holds it; the restart then runs it again for the routes after.
        {QStringLiteral("POST /api/v1/apps/{name}/stop"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/apps/{name}/restart"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("GET /api/v1/apps/{name}/deploys"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("GET /api/v1/deploys/{id}"), QStringLiteral("200 200 403 200 403")},
        // Its steps' output: whoever may read the deploy.
        {QStringLiteral("GET /api/v1/deploys/{id}/log"), QStringLiteral("200 200 403 200 403")},
        // The deploy has finished: nothing to cancel.
        {QStringLiteral("POST /api/v1/deploys/{id}/cancel"), QStringLiteral("409 409 403 403 403")},
        // Reading an app or pipeline, its logs, secret names, deploys, runs and approvals needs a
        // grant on it (member has none on member2's objects; viewer holds viewer grants).
        {QStringLiteral("GET /api/v1/apps/{name}/logs"), QStringLiteral("200 200 403 200 403")},
        // App secrets: names for whoever reads the app; setting (no body: the value is missing)
        // and removing (API_KEY is not set) for its owner, operators and administrators.
        {QStringLiteral("GET /api/v1/apps/{name}/secrets"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("PUT /api/v1/apps/{name}/secrets/{secret}"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/apps/{name}/secrets/{secret}"), QStringLiteral("404 404 403 403 403")},
        // The environment: what the app gets for whoever reads it; a change (no body: nothing
        // to change) for its owner, operators and administrators.
        {QStringLiteral("GET /api/v1/apps/{name}/env"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("PATCH /api/v1/apps/{name}/env"), QStringLiteral("400 400 403 403 403")},
        // Deploy on push: the webhook's state for whoever reads the app; a new secret (an empty
        // body: Pando makes one) for its owner, operators and administrators.
        {QStringLiteral("GET /api/v1/apps/{name}/hook"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("POST /api/v1/apps/{name}/hook/secret"), QStringLiteral("201 201 403 403 403")},
        // No body: the address is missing.
        {QStringLiteral("POST /api/v1/apps/{name}/hook/register"), QStringLiteral("400 400 403 403 403")},
        // Previews: listed for whoever reads the app; the app has no pull request #7 to remove.
        {QStringLiteral("GET /api/v1/apps/{name}/previews"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("DELETE /api/v1/apps/{name}/previews/{number}"), QStringLiteral("404 404 403 403 403")},
        // Public: no body is no forge's delivery, whoever sends it.
        {QStringLiteral("POST /api/v1/hooks/{name}"), QStringLiteral("400 400 400 400 400")},
        // Services: member2's app declares the slot db (a fake postgres). Listing is a read; a
        // backup holds the data and removal loses it: apps.write. Removal without ?data is 400.
        {QStringLiteral("GET /api/v1/services"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("GET /api/v1/apps/{name}/services"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("POST /api/v1/apps/{name}/services/{slot}/backup"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("DELETE /api/v1/apps/{name}/services/{slot}"), QStringLiteral("400 400 403 403 403")},
        // A volume's archive: all of its data, so apps.write; the app declares no volume data.
        {QStringLiteral("POST /api/v1/apps/{name}/volumes/{volume}/backup"), QStringLiteral("404 404 403 403 403")},
        // Its restore replaces that data: apps.write too; served upgraded only.
        {QStringLiteral("GET /api/v1/apps/{name}/volumes/{volume}/restore"), QStringLiteral("400 400 403 403 403")},
        // WebSocket routes answer a plain GET with how to use them.
        {QStringLiteral("GET /api/v1/apps/{name}/logs/follow"), QStringLiteral("400 400 403 400 403")},
        {QStringLiteral("GET /api/v1/deploys/{id}/log/follow"), QStringLiteral("400 400 403 400 403")},
        // A command in the app's container: what changing the app takes.
        {QStringLiteral("GET /api/v1/apps/{name}/exec"), QStringLiteral("400 400 403 403 403")},
        // A plain GET to the tunnel is refused after its authorization: it is served upgraded only.
        {QStringLiteral("GET /api/v1/apps/{name}/tunnel"), QStringLiteral("400 400 403 400 403")},
        {QStringLiteral("GET /api/v1/events"), QStringLiteral("400 400 400 400 403")},
        {QStringLiteral("GET /api/v1/pipelines"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("PUT /api/v1/pipelines/{name}"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("GET /api/v1/pipelines/{name}"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("DELETE /api/v1/pipelines/{name}"), QStringLiteral("204 204 403 403 403")},
        // No body: the new name is missing.
        {QStringLiteral("POST /api/v1/pipelines/{name}/rename"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/pause"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/unpause"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/archive"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/jobs/{job}/runs"), QStringLiteral("201 201 403 403 403")},
        // Jobs are read like runs; pausing one is an operator's, like triggering it.
        {QStringLiteral("GET /api/v1/pipelines/{name}/jobs"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/jobs/{job}/pause"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/jobs/{job}/unpause"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("GET /api/v1/pipelines/{name}/runs"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/resources/{resource}/check"),
         QStringLiteral("202 202 202 202 202")},
        // Resources are read like runs; pinning and checking now are an operator's, like triggering
        // (no body: the version to pin is missing; the fake's resource was never pinned).
        {QStringLiteral("GET /api/v1/pipelines/{name}/resources"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("GET /api/v1/pipelines/{name}/resources/{resource}/versions"),
         QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("PUT /api/v1/pipelines/{name}/resources/{resource}/pin"),
         QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/pipelines/{name}/resources/{resource}/pin"),
         QStringLiteral("404 404 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/resources/{resource}/check-now"),
         QStringLiteral("202 202 403 403 403")},
        // Host execution: anyone who reads pipelines sees the setting; only administrators change
        // it or mark a pipeline (no body: the value is missing).
        {QStringLiteral("GET /api/v1/settings"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("PUT /api/v1/settings"), QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("PUT /api/v1/pipelines/{name}/host-execution"), QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("GET /api/v1/runs"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("GET /api/v1/runs/{id}"), QStringLiteral("200 200 403 200 403")},
        {QStringLiteral("GET /api/v1/runs/{id}/events"), QStringLiteral("200 200 403 200 403")},
        // The operator aborts the run; the administrator finds it aborted.
        {QStringLiteral("POST /api/v1/runs/{id}/abort"), QStringLiteral("409 202 403 403 403")},
        {QStringLiteral("GET /api/v1/runs/{id}/follow"), QStringLiteral("400 400 403 400 403")},
        {QStringLiteral("GET /api/v1/secrets"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("PUT /api/v1/secrets/{name}"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/secrets/{name}"), QStringLiteral("404 404 403 403 403")},
        // No body: the pipelines are missing.
        {QStringLiteral("PUT /api/v1/secrets/{name}/access"), QStringLiteral("400 400 403 403 403")},
        // The operator takes viewer's grant away; the administrator finds it gone.
        // Source connections: listed (only those one may use) by whoever reads apps; there is no
        // connection of that name; adding (no body), testing (no body), removing and granting are
        // install settings.
        {QStringLiteral("GET /api/v1/source-connections"), QStringLiteral("200 200 200 200 403")},
        {QStringLiteral("POST /api/v1/source-connections"), QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("GET /api/v1/source-connections/{name}"), QStringLiteral("404 404 404 404 403")},
        {QStringLiteral("DELETE /api/v1/source-connections/{name}"), QStringLiteral("404 403 403 403 403")},
        {QStringLiteral("POST /api/v1/source-connections/{name}/test"), QStringLiteral("400 403 403 403 403")},
        // OAuth connections are install settings too (no body: refused).
        {QStringLiteral("POST /api/v1/source-connections/authorizations"), QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("POST /api/v1/source-connections/authorizations/complete"),
         QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("POST /api/v1/source-connections/{name}/authorize"), QStringLiteral("400 403 403 403 403")},
        // The forge API's listings: whoever reads apps, for the connections they may use (there is no
        // such connection); branches without ?repo= are refused before that.
        {QStringLiteral("GET /api/v1/source-connections/{name}/repositories"), QStringLiteral("404 404 404 404 403")},
        {QStringLiteral("GET /api/v1/source-connections/{name}/branches"), QStringLiteral("400 400 400 400 403")},
        {QStringLiteral("GET /api/v1/source-connections/{name}/grants"), QStringLiteral("404 403 403 403 403")},
        {QStringLiteral("POST /api/v1/source-connections/{name}/grants"), QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("DELETE /api/v1/source-connections/{name}/grants/{user}/{role}"),
         QStringLiteral("400 403 403 403 403")},
        {QStringLiteral("GET /api/v1/apps/{name}/grants"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/apps/{name}/grants"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/apps/{name}/grants/{user}/{role}"), QStringLiteral("404 204 403 403 403")},
        {QStringLiteral("GET /api/v1/pipelines/{name}/grants"), QStringLiteral("200 200 403 403 403")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/grants"), QStringLiteral("400 400 403 403 403")},
        {QStringLiteral("DELETE /api/v1/pipelines/{name}/grants/{user}/{role}"), QStringLiteral("404 204 403 403 403")},
        {QStringLiteral("GET /api/v1/approvals"), QStringLiteral("200 200 200 200 403")},
        // viewer's grant on "theirs" went with the grant routes above.
        {QStringLiteral("GET /api/v1/approvals/{id}"), QStringLiteral("200 200 403 403 403")},
        // The scoped administrator's token approves member2's request first; the others find it
        // decided. Members without a grant on the app and viewers are refused.
        {QStringLiteral("POST /api/v1/approvals/{id}/approve"), QStringLiteral("409 409 403 403 200")},
        {QStringLiteral("POST /api/v1/approvals/{id}/reject"), QStringLiteral("409 409 403 403 409")},
        {QStringLiteral("GET /api/v1/audit"), QStringLiteral("200 403 403 403 403")},
        {QStringLiteral("GET /api/v1/audit/verify"), QStringLiteral("200 403 403 403 403")},
        {QStringLiteral("GET /api/v1/audit/sinks"), QStringLiteral("200 403 403 403 403")},
        // Capacity: install-wide totals and sums, readable by whoever reads apps.
        {QStringLiteral("GET /api/v1/capacity"), QStringLiteral("200 200 200 200 403")},
        // The edge: what serves the apps and whether it does, as readable as the apps.
        {QStringLiteral("GET /api/v1/edge"), QStringLiteral("200 200 200 200 403")},
        // The in-process edge of the tests has no install CA.
        {QStringLiteral("GET /api/v1/edge/ca"), QStringLiteral("404 404 404 404 403")},
        // The edge's question for "theirs" (?app=theirs): an assertion for whoever may read the app
        // (viewer's grant went with the grant routes above; the scoped token lacks apps:read).
        {QStringLiteral("GET /api/v1/edge/auth"), QStringLiteral("200 200 403 403 403")},
        // The sign-in page on an app's host (?app=theirs): public, like a login; its POST wants the
        // form a browser sends, which the matrix does not.
        {QStringLiteral("GET /api/v1/edge/sign-in"), QStringLiteral("200 200 200 200 200")},
        {QStringLiteral("POST /api/v1/edge/sign-in"), QStringLiteral("400 400 400 400 400")},
        // Its sign-out page and form: public too (the cookie says whose session ends, and a
        // request without one ends none).
        {QStringLiteral("GET /api/v1/edge/sign-out"), QStringLiteral("200 200 200 200 200")},
        {QStringLiteral("POST /api/v1/edge/sign-out"), QStringLiteral("303 303 303 303 303")},
        // A new assertion signing key: administrators only.
        {QStringLiteral("POST /api/v1/edge/keys/rotate"), QStringLiteral("200 403 403 403 403")},
        // The keys that verify assertions: public, for apps.
        {QStringLiteral("GET /.well-known/jwks.json"), QStringLiteral("200 200 200 200 200")},
    };
    return table;
}

QList<int> expectedStatuses(const QString &key)
{
    const QStringList cells = expectations().value(key).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    QList<int> statuses;
    for (const QString &cell : cells) {
        bool ok = false;
        const int status = cell.toInt(&ok);
        if (!ok || status < 100 || status > 599)
            return {};
        statuses << status;
    }
    return statuses.size() == Columns.size() ? statuses : QList<int>{};
}

QString consumedPrefix(const QString &key)
{
    if (key == QLatin1String("DELETE /api/v1/apps/{name}") || key == QLatin1String("DELETE /api/v1/pipelines/{name}"))
        return QStringLiteral("gone-");
    if (key == QLatin1String("POST /api/v1/pipelines/{name}/archive"))
        return QStringLiteral("shelved-");
    return {};
}

} // namespace pando::test::routematrix
