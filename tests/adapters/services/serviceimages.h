#pragma once
// The service images tests provision from (pando/postgres:15, pando/mariadb:10.11,
// pando/redis:7): made by scripts/lib.sh's ensure_service_images, which is quick when they
// exist. Tests call it rather than skip, so a machine without them fails loudly.

#include "tests/support/component.h"

#include <QProcess>
#include <QString>

namespace pando::test {

inline QString ensureServiceImages()
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    const QString root = sourceDir();
    p.start(QStringLiteral("bash"), {QStringLiteral("-c"),
                                     QStringLiteral("source \"$0/scripts/lib.sh\" && "
                                                    "ensure_docker && ensure_service_images"),
                                     root});
    if (!p.waitForFinished(15 * 60 * 1000) || p.exitCode() != 0)
        return QStringLiteral("ensure_service_images failed: ") + QString::fromUtf8(p.readAll());
    return {};
}

} // namespace pando::test
