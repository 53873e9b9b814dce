#pragma once
// The WebSocket streams the route table names (routes.h, RouteDef::stream): each runs on the
// server's thread once the socket is upgraded, authenticated and authorized, reads its query,
// and either wires the socket to what it follows or closes it saying why.

#include "routes.h"

namespace pando::server::streamapi {

// /api/v1/apps/{name}/logs/follow?tail=N: the last N lines first, then the live ones.
void followLogs(StreamCall &call);
// /api/v1/deploys/{id}/log/follow: a deploy's output kept so far, then live until it ends.
void followDeployLog(StreamCall &call);
// /api/v1/events?app=NAME: the engine's events (one app's, or all).
void events(StreamCall &call);
// /api/v1/runs/{id}/follow?after=SEQ: a run's events after SEQ, then live until it finishes.
void followRun(StreamCall &call);
// /api/v1/apps/{name}/exec: a command in the app's container (appexec.h).
void exec(StreamCall &call);
// /api/v1/apps/{name}/volumes/{volume}/restore: an archive in, the volume restored (volumerestore.h).
void restoreVolume(StreamCall &call);
// /api/v1/apps/{name}/tunnel: a port-forward to the app's stable route (apptunnel.h).
void tunnel(StreamCall &call);
// Before its upgrade: 404 for an unknown app, 409 when it has no route or does not run.
Reply tunnelReady(Call &call);

} // namespace pando::server::streamapi
