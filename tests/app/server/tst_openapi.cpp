// The OpenAPI document and the server's route table describe the same routes with the same
// permissions, and only the health check, the resource webhook (which checks its own token), the
// edge's forward-auth (which authenticates a token or the pando_session cookie itself) and the
// JWKS are public.

#include "app/server/apiserver.h"
#include "tests/support/component.h"

#include <QFile>
#include <QSet>
#include <QTest>
#include <yaml-cpp/yaml.h>

using pando::server::ApiServer;
using pando::server::RouteInfo;

namespace {

struct DocRoute {
    QString permission;
    bool webSocket = false;
    bool isPublic = false;
};

QString key(const QString &method, const QString &path)
{
    return method + QLatin1Char(' ') + path;
}

} // namespace

class TestOpenApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void documentMatchesRouteTable();
    void permissionsAreExplicit();

private:
    QMap<QString, DocRoute> m_doc;
};

void TestOpenApi::initTestCase()
{
    const QString path = pando::test::sourceDir() + QStringLiteral("/docs/api/openapi.yaml");
    QFile file(path);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(QStringLiteral("cannot open %1").arg(path)));
    const QByteArray text = file.readAll();
    try {
        const YAML::Node root = YAML::Load(text.toStdString());
        QCOMPARE(QString::fromStdString(root["openapi"].as<std::string>()), QStringLiteral("3.0.3"));
        QVERIFY2(root["components"]["securitySchemes"]["bearer"], "the document declares no bearer scheme");
        for (const auto &entry : root["paths"]) {
            const QString routePath = QString::fromStdString(entry.first.as<std::string>());
            for (const auto &op : entry.second) {
                const QString method = QString::fromStdString(op.first.as<std::string>()).toUpper();
                if (method == QLatin1String("PARAMETERS") || method == QLatin1String("SUMMARY") ||
                    method == QLatin1String("DESCRIPTION"))
                    continue;
                DocRoute route;
                if (op.second["x-permission"])
                    route.permission = QString::fromStdString(op.second["x-permission"].as<std::string>());
                route.webSocket = op.second["x-websocket"] && op.second["x-websocket"].as<bool>();
                const YAML::Node security = op.second["security"];
                route.isPublic = security && security.IsSequence() && security.size() == 0;
                m_doc.insert(key(method, routePath), route);
            }
        }
    } catch (const YAML::Exception &e) {
        QFAIL(qPrintable(QStringLiteral("%1: %2").arg(path, QString::fromStdString(e.what()))));
    }
    QVERIFY(!m_doc.isEmpty());
}

void TestOpenApi::documentMatchesRouteTable()
{
    QMap<QString, RouteInfo> table;
    for (const RouteInfo &route : ApiServer::routeTable())
        table.insert(key(route.method, route.path), route);

    QStringList problems;
    for (auto it = table.cbegin(); it != table.cend(); ++it) {
        if (!m_doc.contains(it.key())) {
            problems << QStringLiteral("served but not documented: %1").arg(it.key());
            continue;
        }
        const DocRoute &doc = m_doc.value(it.key());
        if (doc.permission != it->permission)
            problems << QStringLiteral("%1: x-permission is \"%2\", the server requires \"%3\"")
                            .arg(it.key(), doc.permission, it->permission);
        if (doc.webSocket != it->webSocket)
            problems << QStringLiteral("%1: x-websocket is %2, the server says %3")
                            .arg(it.key())
                            .arg(doc.webSocket)
                            .arg(it->webSocket);
        if (doc.isPublic != (it->permission == QLatin1String("public")))
            problems << QStringLiteral("%1: `security: []` must be set exactly on public routes").arg(it.key());
    }
    for (auto it = m_doc.cbegin(); it != m_doc.cend(); ++it) {
        if (!table.contains(it.key()))
            problems << QStringLiteral("documented but not served: %1").arg(it.key());
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

void TestOpenApi::permissionsAreExplicit()
{
    const QList<RouteInfo> table = ApiServer::routeTable();
    QVERIFY(!table.isEmpty());
    QStringList publicRoutes;
    QSet<QString> seen;
    for (const RouteInfo &route : table) {
        QVERIFY2(!route.permission.isEmpty(), qPrintable(key(route.method, route.path)));
        QVERIFY2(!seen.contains(key(route.method, route.path)), qPrintable(key(route.method, route.path)));
        seen.insert(key(route.method, route.path));
        if (route.permission == QLatin1String("public"))
            publicRoutes << key(route.method, route.path);
    }
    const QStringList expected = {QStringLiteral("GET /api/v1/health"),
                                  QStringLiteral("POST /api/v1/bootstrap"),
                                  QStringLiteral("POST /api/v1/sessions"),
                                  QStringLiteral("POST /api/v1/pairings/redeem"),
                                  QStringLiteral("POST /api/v1/pipelines/{name}/resources/{resource}/check"),
                                  QStringLiteral("POST /api/v1/hooks/{name}"),
                                  QStringLiteral("GET /api/v1/edge/auth"),
                                  QStringLiteral("GET /api/v1/edge/sign-in"),
                                  QStringLiteral("POST /api/v1/edge/sign-in"),
                                  QStringLiteral("GET /api/v1/edge/sign-out"),
                                  QStringLiteral("POST /api/v1/edge/sign-out"),
                                  QStringLiteral("GET /.well-known/jwks.json")};
    QCOMPARE(publicRoutes, expected);
}

QTEST_GUILESS_MAIN(TestOpenApi)
#include "tst_openapi.moc"
