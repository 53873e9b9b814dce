#include "drivers.h"

#include <QTest>

namespace pando::test {

void addDriverRows()
{
    QTest::addColumn<QString>("driver");
    const QStringList wanted =
        qEnvironmentVariable("PANDO_STATE_DRIVERS", QStringLiteral("sqlite,postgres")).split(QLatin1Char(','));
    for (const char *driver : {"sqlite", "postgres"})
        if (wanted.contains(QLatin1String(driver)))
            QTest::newRow(driver) << QString::fromLatin1(driver);
}

DriverDatabase freshDatabase(const QString &driver, PostgresHarness &pg, bool pgStarted,
                             std::unique_ptr<QTemporaryDir> &tmp)
{
    DriverDatabase result;
    if (driver == QLatin1String("postgres")) {
        if (!pgStarted) {
            result.componentMissing = true;
            result.error = QStringLiteral("PostgreSQL: ") + pg.error();
            return result;
        }
        result.url = pg.freshDatabase();
        if (result.url.isEmpty())
            result.error = pg.error();
        return result;
    }
    tmp = std::make_unique<QTemporaryDir>();
    result.url = QStringLiteral("sqlite://") + tmp->path() + QStringLiteral("/pando.db");
    return result;
}

} // namespace pando::test
