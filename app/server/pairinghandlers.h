#pragma once
// Pairing and live connections over the API. An administrator makes a one-time pairing code for
// an account; a teammate's desktop redeems it (without a bearer: the code is the credential) for
// a named API token of that account. The pairing link that carries the code is
//   pando://HOST:PORT/pair?fp=<SHA-256 of the server certificate, hex>&token=<pairing code>
// (docs/user-guide.md, "Pairing a teammate's desktop"). Administrators also see who holds a live
// stream open right now.

#include "routes.h"

namespace pando::server::pairingapi {

Reply createPairing(Call &call);   // POST /api/v1/users/{name}/pairings
Reply redeemPairing(Call &call);   // POST /api/v1/pairings/redeem
Reply listConnections(Call &call); // GET /api/v1/connections

// The pairing link for a server reached at host:port with the certificate fingerprint.
QString pairingLink(const QString &host, int port, const QString &fingerprint, const QString &token);

} // namespace pando::server::pairingapi
