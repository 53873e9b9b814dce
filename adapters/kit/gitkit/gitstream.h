#pragma once
// Deadlines for libgit2's network work. libgit2 1.5's own socket stream blocks in connect() and
// recv() for as long as the kernel lets it: a host that accepts and never answers held a fetch,
// and the API thread waiting on it, for ever (eight such requests hung the whole API). This
// registers, once per process, a plain socket stream in its place (libgit2's TLS and SSH
// transports build on it too) that gives connect, each read and each write a deadline, and the
// whole operation an overall one, failing with "the git host did not answer within N s".
//
// Threading: both functions may be called from any thread, any number of times; the deadlines
// apply to streams opened afterwards, on every thread.

namespace pando::adapters::git {

struct NetworkDeadlines {
    int connectMs = 15'000;  // to open the TCP connection
    int idleMs = 30'000;     // with no byte read or written
    int totalMs = 3'600'000; // one connection, start to end
};

// Registers the stream in libgit2 (the first call; later ones do nothing).
void installNetworkDeadlines();
// Sets the deadlines of streams opened from now on; a field of 0 is its default.
void setNetworkDeadlines(const NetworkDeadlines &deadlines);

} // namespace pando::adapters::git
