#pragma once
// ConnectedModel: who is connected to this computer's embedded server now — each teammate's live
// stream that came in over TLS (GET /api/v1/connections: account, address, since when), newest
// last. The list has no events of its own, so it reloads every few seconds while `active`.
//
// Threading: GUI thread, with its Session.

#include "app/desktop/session/sessionlistmodel.h"

#include <QJsonArray>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class ConnectedModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.embeddedServer.connected is the one list")
    Q_PROPERTY(bool active READ isActive WRITE setActive NOTIFY activeChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    // Nobody connected (SessionListModel's count, seen by qmllint through this type).
    Q_PROPERTY(bool empty READ isEmpty NOTIFY countChanged)

public:
    enum Role {
        AccountRole = Qt::UserRole + 1, // the account name ("" for the initial token)
        AddressRole,                    // the teammate's IP address
        StreamRole,                     // "/api/v1/events", …
        SinceRole,                      // ms since the epoch
        SinceTextRole,                  // "since 14:02"
    };
    Q_ENUM(Role)

    explicit ConnectedModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool isActive() const { return m_timer.isActive(); }
    void setActive(bool active);
    bool isEmpty() const { return m_rows.isEmpty(); }
    void setPollIntervalMs(int ms) { m_timer.setInterval(ms); }

    void refresh() override;

Q_SIGNALS:
    void activeChanged();

protected:
    void onEvent(const QJsonObject &) override {}
    void sessionReplaced() override;

private:
    void apply(const QJsonArray &rows);

    QList<QJsonObject> m_rows;
    QTimer m_timer;
};

} // namespace pando::desktop
