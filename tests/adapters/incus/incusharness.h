#pragma once
// What tests need from a real Incus: whether incusd answers and trusts us (scripts/lib.sh's
// ensure_incus starts and initialises it), and a busybox image made from the Docker harness's
// pando/busybox through IncusRuntime::importFromDocker, since no image server can be reached.

#include "adapters/api/error.h"

#include <QString>

namespace pando::test {

class IncusHarness {
public:
    // True when the local incusd answers and trusts this client; otherwise why says what to do.
    static bool available(QString *why = nullptr);
    // The fingerprint of the busybox test image (imported once per Incus server).
    static Result<QString> ensureBaseImage();
};

} // namespace pando::test
