#pragma once
// What a test does when a real part it needs (Docker, PostgreSQL, git) cannot be had: in CI
// (CI=true) it fails and names the part; elsewhere it skips with the same message.

#include <QString>
#include <QTest>

namespace pando::test {

bool inCi();
QString sourceDir(); // the repository root
QString binaryDir(); // the build tree

} // namespace pando::test

#define PANDO_REQUIRE_COMPONENT(ok, message)                                                                           \
    do {                                                                                                               \
        if (!(ok)) {                                                                                                   \
            const QByteArray pandoMsg_ = QByteArray("missing component: ") + QString(message).toUtf8();                \
            if (::pando::test::inCi())                                                                                 \
                QFAIL(pandoMsg_.constData());                                                                          \
            else                                                                                                       \
                QSKIP(pandoMsg_.constData());                                                                          \
        }                                                                                                              \
    } while (false)
