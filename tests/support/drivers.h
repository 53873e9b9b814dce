#pragma once
// State tests that run on both drivers: the global data rows ("sqlite", "postgres", narrowed by
// PANDO_STATE_DRIVERS) and a fresh, empty database for the row being run.

#include "tests/support/pgharness.h"

#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

// For initTestCase_data(): a "driver" column with one row per wanted driver.
void addDriverRows();

struct DriverDatabase {
    QString url;                   // empty when none could be had
    bool componentMissing = false; // PostgreSQL is not running: PANDO_REQUIRE_COMPONENT territory
    QString error;
};

// A new SQLite file in a new temporary directory (kept in tmp) or a new PostgreSQL database.
DriverDatabase freshDatabase(const QString &driver, PostgresHarness &pg, bool pgStarted,
                             std::unique_ptr<QTemporaryDir> &tmp);

} // namespace pando::test

// In init(): QFETCH_GLOBAL the driver, get a fresh database URL into `url`, or skip/fail.
#define PANDO_FRESH_DATABASE(url, pg, pgStarted, tmp)                                                                  \
    QString url;                                                                                                       \
    do {                                                                                                               \
        QFETCH_GLOBAL(QString, driver);                                                                                \
        const ::pando::test::DriverDatabase fresh_ = ::pando::test::freshDatabase(driver, pg, pgStarted, tmp);         \
        PANDO_REQUIRE_COMPONENT(!fresh_.componentMissing, fresh_.error);                                               \
        QVERIFY2(!fresh_.url.isEmpty(), qPrintable(fresh_.error));                                                     \
        url = fresh_.url;                                                                                              \
    } while (false)
