#pragma once
// Deadlines for libgit2's network work. libgit2 1.5's own socket stream blocks in connect() and
// recv() for as long as the kernel lets it: a host that accepts and never answers held a fetch,
// and the API thread waiting on it, for ever (eight such requests hung the whole API). This
// registers, once per process, a plain socket stream in its place (libgit2's TLS and SSH
// transports build on it too) that gives connect, each read and each write a deadline, and the
// whole operation an overall one, failing with "the git host did not answer within N s".
//
// It also decides which addresses a connection may reach: a fetch for an app whose source may not
// be on this machine (SourceAccess::internalHosts) is refused at the connect when the address the
// name resolves to now is loopback, link-local or unspecified, whatever it resolved to when the
// URL was checked (DNS rebinding).
//
// Threading: both functions may be called from any thread, any number of times; the deadlines
// apply to streams opened afterwards, on every thread. An InternalHostsRefused applies to the
// streams its own thread opens while it lives (libgit2 opens them on the calling thread).

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

// While one lives (when refuse is true), connections this thread opens skip addresses of this
// machine or its link, and fail naming the host when no other address is left.
class InternalHostsRefused {
public:
    explicit InternalHostsRefused(bool refuse);
    ~InternalHostsRefused();
    InternalHostsRefused(const InternalHostsRefused &) = delete;
    InternalHostsRefused &operator=(const InternalHostsRefused &) = delete;

private:
    bool m_before;
};

} // namespace pando::adapters::git
