#pragma once
// Running a continuation of a QFuture in a QObject's thread only while that object lives.
// QFuture::then(context, ...) in Qt 6.4 asserts (and misbehaves without asserts) when the context
// is destroyed before the future finishes, which is what happens when a client disconnects while
// its request is being answered. A QFutureWatcher owned by the context dies with it instead.

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>

namespace pando::server::detail {

template<typename T, typename Function> void whenReady(QFuture<T> future, QObject *context, Function &&function)
{
    auto *watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context,
                     [watcher, function = std::forward<Function>(function)]() mutable {
                         watcher->deleteLater();
                         function(watcher->result());
                     });
    watcher->setFuture(std::move(future));
}

} // namespace pando::server::detail
