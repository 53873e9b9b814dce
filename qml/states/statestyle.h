#pragma once
// StateStyle (the QML singleton of Pando.States): each display state's colour, shape and word, in
// one table that StateMark.qml, the deploy-duration chart and the tray icons' SVGs all follow.
//
// The signal colours are fixed hues picked to read on both Fusion's light and dark bases: a
// "failed" that turned another red with the theme would no longer match the tray icon or the
// chart. What follows the system palette is everything around them (the mark's word, the chart's
// background); progress blue is the app's one accent.
//
// Threading: GUI thread; the functions are pure.

#include "qml/states/displaystate.h"

#include <QColor>
#include <QObject>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class StateStyle : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    // The one accent colour (the in-progress blue).
    Q_PROPERTY(QColor accent READ accent CONSTANT)
    // The colour of error text and of stderr lines: the "failed" hue, so an error reads as the
    // same signal as a failed state's mark.
    Q_PROPERTY(QColor danger READ danger CONSTANT)

public:
    using QObject::QObject;

    static QColor colourOf(DisplayState::Value state);
    // The icon shape's name: disc, ring, diamond, noSign, cached, hollow, dash.
    static QString shapeOf(DisplayState::Value state);
    // The state as a translated word, for a mark whose view has no more exact one.
    static QString wordOf(DisplayState::Value state);

    QColor accent() const { return colourOf(DisplayState::Progress); }
    QColor danger() const { return colourOf(DisplayState::Failed); }
    Q_INVOKABLE QColor colour(int state) const { return colourOf(DisplayState::Value(state)); }
    Q_INVOKABLE QString shape(int state) const { return shapeOf(DisplayState::Value(state)); }
    Q_INVOKABLE QString word(int state) const { return wordOf(DisplayState::Value(state)); }
};

} // namespace pando::desktop
