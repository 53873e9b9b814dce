// The authorization walk's table: what every route of the API answers for each role (see
// tst_authz.cpp).

#pragma once

#include <QHash>
#include <QList>
#include <QStringList>

namespace pando::test::routematrix {

// The roles each cell is walked with, in this order, so that what the strongest do to the
// objects comes last.
extern const QStringList Walkers;
// The columns of the table.
extern const QStringList Columns;

// The status every route answers for admin, operator, member, viewer and an administrator's
// token whose only scope is approvals:write, each calling it without a body on objects member2
// owns ("theirs": an app with a finished deploy, a pipeline with a queued run, a spare token).
// 403 is a refusal; anything else is what the handler answers once authorized. A route missing
// here, or a cell without a status, fails the walk.
// Where the stronger walkers find the state the weaker left, the row says so. Routes that delete
// their object get one object per walker (see consumesObject()), so every walker finds it.
const QHash<QString, QString> &expectations();

// The statuses of a row, in Columns order; empty when the row is not five statuses.
QList<int> expectedStatuses(const QString &key);

// Routes that use up the object they name (deleting or archiving it): each walker gets its own,
// named with this prefix and its name ("gone-admin"), so that each finds one; empty for the rest.
QString consumedPrefix(const QString &key);

} // namespace pando::test::routematrix
