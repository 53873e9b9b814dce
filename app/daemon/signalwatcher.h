#pragma once
// Turns SIGTERM and SIGINT into a Qt signal on the main thread (a self-pipe read by a
// QSocketNotifier), so shutdown runs as ordinary event-loop code.

#include <QObject>

class QSocketNotifier;

namespace pando::daemon {

class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    void terminate();

private:
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace pando::daemon
