#include "capacityhandlers.h"

#include "replies.h"

#include <QJsonArray>

namespace pando::server::capacityapi {

Reply showCapacity(Call &call)
{
    auto capacity = call.engine.capacity();
    if (!capacity)
        return errorReply(capacity.error());
    return Reply{200, core::capacity::toJson(*capacity)};
}

Reply showEdge(Call &call)
{
    const adapters::RouterStatus edge = call.engine.edge();
    // The certificates of the apps the caller sees (core decides which).
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    QJsonArray certificates;
    for (const adapters::CertificateState &certificate : call.engine.edgeCertificates(*visible))
        certificates.append(
            QJsonObject{{QStringLiteral("host"), certificate.host},
                        {QStringLiteral("issuer"), certificate.issuer},
                        {QStringLiteral("not_after_ms"),
                         certificate.notAfter.isValid() ? certificate.notAfter.toMSecsSinceEpoch() : qint64(0)},
                        {QStringLiteral("error"), certificate.error}});
    return Reply{200, QJsonObject{{QStringLiteral("kind"), edge.kind},
                                  {QStringLiteral("running"), edge.running},
                                  {QStringLiteral("outlives_pando"), edge.outlivesPando},
                                  {QStringLiteral("pid"), edge.pid},
                                  {QStringLiteral("routes"), edge.routes},
                                  {QStringLiteral("http_port"), edge.httpPort},
                                  {QStringLiteral("https_port"), edge.httpsPort},
                                  {QStringLiteral("certificates"), certificates},
                                  {QStringLiteral("problem"), edge.problem}}};
}

Reply showEdgeCa(Call &call)
{
    const QByteArray pem = call.engine.edgeInstallCa();
    if (pem.isEmpty())
        return errorReply(Error{ErrorCode::NotFound, QStringLiteral("the edge has no install CA yet"),
                                QStringLiteral("edge"),
                                QStringLiteral("it is made when the first app with tls: internal is served")});
    return Reply{200, QJsonObject{{QStringLiteral("pem"), QString::fromLatin1(pem)}}};
}

namespace {

Reply appReply(const Result<core::AppView> &app)
{
    if (!app)
        return errorReply(app.error());
    return Reply{200, app->toJson()};
}

} // namespace

Reply startApp(Call &call)
{
    return appReply(call.engine.startApp(call.args.value(0), call.actor));
}

Reply stopApp(Call &call)
{
    return appReply(call.engine.stopApp(call.args.value(0), call.actor));
}

Reply restartApp(Call &call)
{
    return appReply(call.engine.restartApp(call.args.value(0), call.actor));
}

} // namespace pando::server::capacityapi
