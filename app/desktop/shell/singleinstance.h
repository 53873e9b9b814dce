#pragma once
// One pando-desktop per user: the first start listens on a local socket under the user's runtime
// directory; a second start finds it, asks the first to raise its window, and exits.

#include <QLocalServer>
#include <QObject>

namespace pando::desktop {

class SingleInstance : public QObject {
    Q_OBJECT
public:
    // name: the socket's file name inside the runtime directory.
    explicit SingleInstance(const QString &name, QObject *parent = nullptr);

    // The socket's full path.
    QString path() const { return m_path; }
    // True when another instance answered and was asked to raise its window (this one should
    // exit); false when this is the first instance and now listens.
    bool askRunningInstance();
    // Starts listening (after askRunningInstance() returned false). False with why when it cannot.
    bool listen(QString *why);

Q_SIGNALS:
    // A second start asked this instance to show itself.
    void raiseRequested();

private:
    QString m_path;
    QLocalServer m_server;
};

} // namespace pando::desktop
