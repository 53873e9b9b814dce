#pragma once
// Package events: the things Pando tells subscribers about, and the in-process bus they travel
// on. Their types are EventType (core/vocab), whose table holds the strings subscribers see.
//
// Threading: publish() may be called from any thread; published() is delivered to each
// receiver in its own thread (queued across threads).

#include "core/vocab/vocab.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

namespace pando::core {

struct Event {
    EventType type = EventType::AppCreated;
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
