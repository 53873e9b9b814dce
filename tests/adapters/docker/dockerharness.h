#pragma once
// What tests need from a real Docker Engine: whether one answers, and the pando/busybox base
// image (busybox-static from the host, imported through DockerRuntime::importImage) since no
// registry can be reached from here.

#include "adapters/api/error.h"

#include <QString>

namespace pando::test {

class DockerHarness {
public:
    // The image every Docker test builds FROM or runs.
    static QString baseImage() { return QStringLiteral("pando/busybox:latest"); }
    // True when the engine answers a ping; otherwise why says what is wrong and what to do.
    static bool available(QString *why = nullptr);
    // The id of pando/busybox:latest, importing it first if the engine does not have it.
    static Result<QString> ensureBaseImage();
};

} // namespace pando::test
