#pragma once
// A loopback port for another process (Caddy, Pebble, PostgreSQL, sshd, a pandod) to listen on.

#include <QtGlobal>

namespace pando::test {

// A port nothing listens on, chosen below the kernel's ephemeral range: a port from that range
// can be taken, between the choice and the other process's listen, by any outgoing connection or
// port-0 listener of a test running beside this one. Returns 0 when none is found.
quint16 unusedPort();

} // namespace pando::test
