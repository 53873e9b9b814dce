#pragma once
// The state marks as SVG: one drawing per shape of StateStyle (disc, ring, diamond, noSign,
// cached, hollow, dash), in the colour it is given, with its inner sign (the check, the pause,
// the bar) cut out in a second colour. StateMark.qml (through MarkShape) and the tray icon both
// draw these, so a state looks the same everywhere.
//
// Also the contrast arithmetic the marks and the state words are held to: WCAG 2's contrast
// ratio, and the nearest colour of the same hue that reaches a ratio against a background.
//
// Threading: pure functions, any thread.

#include "qml/states/displaystate.h"

#include <QByteArray>
#include <QColor>
#include <QIcon>
#include <QImage>

namespace pando::desktop::marks {

// WCAG 2's contrast ratio of two opaque colours: 1 (same) to 21 (black on white).
double contrast(const QColor &a, const QColor &b);
// colour itself when it reaches `minimum` against background; else the same hue made darker or
// lighter (whichever reaches it with less change) until it does.
QColor readable(const QColor &colour, const QColor &background, double minimum = 4.5);

// The SVG of a shape on a 64×64 canvas. An unknown shape draws the "dash".
QByteArray svg(const QString &shape, const QColor &colour, const QColor &inner);
// The shape rendered at size × size pixels on a transparent canvas.
QImage render(const QString &shape, const QColor &colour, const QColor &inner, int size);
// The tray's icon for the install's overall state: the state's mark, its sign in white.
QIcon trayIcon(DisplayState::Value overall);

} // namespace pando::desktop::marks
