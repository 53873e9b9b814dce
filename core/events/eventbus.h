#pragma once
// Package events: the catalogue of things Pando tells subscribers about, and the in-process
// bus they travel on. Types: app.created, app.removed, deploy.queued, deploy.step,
// deploy.succeeded, deploy.failed, app.restarted, container.removed.
//
// Threading: publish() may be called from any thread; published() is delivered to each
// receiver in its own thread (queued across threads).

#include <QJsonObject>
#include <QObject>
#include <QString>

namespace pando::core {

struct Event {
    QString type;
    QString app;
    QString deployId;
    QJsonObject data;
    qint64 timeMs = 0;

    QJsonObject toJson() const;
};

class EventBus : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    void publish(const Event &event) { Q_EMIT published(event); }

Q_SIGNALS:
    void published(const pando::core::Event &event);
};

} // namespace pando::core

Q_DECLARE_METATYPE(pando::core::Event)
