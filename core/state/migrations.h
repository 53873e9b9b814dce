#pragma once
// The numbered schema migrations, applied in order by Database::open(). The SQL is the same on
// SQLite and PostgreSQL: portable types only (TEXT, INTEGER, BIGINT), no AUTOINCREMENT or
// SERIAL (ids are made by the application).

#include <QList>
#include <QStringList>

namespace pando::core::detail {

struct Migration {
    int version = 0;
    QString name;
    QStringList statements; // run one by one in one transaction (QSqlQuery runs one statement per exec)
};

// Every migration, ordered by version, versions 1, 2, 3, ... without gaps.
const QList<Migration> &migrations();

} // namespace pando::core::detail
