#pragma once
// How many connections the API holds and for how long, so that idle or slow sockets cannot use
// up the daemon's descriptors or memory: a cap per listener (a connection past it is answered
// 503 and closed, with a log line), deadlines for a request's headers and for a connection that
// moves no byte while no answer is due, and per WebSocket an inbound message cap, an outbound
// buffer bound (a client that reads too slowly is dropped, its queue never grows without end),
// a limit of live streams per user, how soon a stream ends once its reader lost the access, and
// the caps and deadlines of tunnels to apps.

namespace pando::server {

struct ConnectionLimits {
    int maxConnections = 512;     // open at once per listener, WebSockets included
    int headerTimeoutMs = 10'000; // from a request's first byte to the end of its headers; 0: none
    int idleTimeoutMs = 60'000;   // no byte in or out while a request is read or none is open; 0: none
    int maxWebSocketsPerUser = 32;
    int maxWebSocketMessageBytes = 64 * 1024;       // what a client may send in one message
    int maxWebSocketPendingBytes = 8 * 1024 * 1024; // queued toward a client before it is dropped
    // How often a live stream's route is authorized again: a grant taken away ends the streams
    // it let in within this time.
    int streamReauthorizeMs = 5'000;
    // Port-forwards to apps (GET /api/v1/apps/{name}/tunnel): how many are open at once in all and
    // per user (each is a WebSocket too, held to the caps above as well), how long the app's port
    // may take to accept, and how long one may carry no byte either way before it is closed.
    int maxTunnels = 128;
    int maxTunnelsPerUser = 16;
    int tunnelConnectTimeoutMs = 5'000;
    int tunnelIdleTimeoutMs = 15 * 60'000;
};

} // namespace pando::server
