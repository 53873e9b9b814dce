#pragma once
// QtTest prints the vocabulary's enums by their wire strings ("succeeded", not 3) when a
// QCOMPARE of two of them fails. Include before the first QCOMPARE of one.

#include "core/vocab/vocab.h"

#include <QTest>

#define PANDO_VOCAB_QTEST_PRINT(Type)                                                                                  \
    template<> inline char *QTest::toString<pando::core::Type>(const pando::core::Type &value)                         \
    {                                                                                                                  \
        return qstrdup(pando::core::vocab::text(value).data());                                                        \
    }

PANDO_VOCAB_QTEST_PRINT(DeployStatus)
PANDO_VOCAB_QTEST_PRINT(AppStatus)
PANDO_VOCAB_QTEST_PRINT(DeployStepStatus)
PANDO_VOCAB_QTEST_PRINT(RunStatus)
PANDO_VOCAB_QTEST_PRINT(RunStepStatus)
PANDO_VOCAB_QTEST_PRINT(EventType)

#undef PANDO_VOCAB_QTEST_PRINT
