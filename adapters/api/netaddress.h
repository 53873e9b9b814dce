#pragma once
// Which network addresses count as "this machine or its link": the one rule that both the check
// of a repository address before a fetch (core) and the connect of the fetch itself (the git
// adapters) apply, so that what was checked is what is connected to.
//
// Threading: a pure function; any thread.

#include <QHostAddress>

namespace pando::adapters {

// Loopback (127/8, ::1), link-local (169.254/16, fe80::/10, where cloud metadata lives) and
// unspecified (0.0.0.0/8, ::), also written as IPv4-mapped IPv6.
bool isInternalAddress(QHostAddress address);

} // namespace pando::adapters
