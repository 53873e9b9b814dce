#include "capacityhandlers.h"

#include "replies.h"

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
    return Reply{200, QJsonObject{{QStringLiteral("kind"), edge.kind},
                                  {QStringLiteral("running"), edge.running},
                                  {QStringLiteral("outlives_pando"), edge.outlivesPando},
                                  {QStringLiteral("pid"), edge.pid},
                                  {QStringLiteral("routes"), edge.routes},
                                  {QStringLiteral("problem"), edge.problem}}};
}

Reply startApp(Call &call)
{
    auto app = call.engine.startApp(call.args.value(0), call.actor);
    if (!app)
        return errorReply(app.error());
    return Reply{200, app->toJson()};
}

} // namespace pando::server::capacityapi
