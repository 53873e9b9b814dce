#pragma once
// StateStyle (the QML singleton of Pando.States): each display state's colour, shape and word, in
// one table that StateMark.qml, the deploy-duration chart and the tray icons' SVGs all follow.
//
// The signal colours are fixed hues: a "failed" that turned another red with the theme would no
// longer match the tray icon or the chart. Where a mark or a word is drawn, on() gives the same
// hue made darker or lighter until it reaches 4.5:1 against that background (WCAG's ratio for
// text), so a state reads on a light or dark window and on the selection alike. What follows the
// system palette is everything around them; progress blue is the app's one accent.
//
// Threading: GUI thread; the functions are pure.

#include "qml/states/displaystate.h"

#include <QColor>
#include <QObject>
#include <QPalette>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class StateStyle : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    // The one accent colour (the in-progress blue).
    Q_PROPERTY(QColor accent READ accent CONSTANT)
    // The colour of error text and of stderr lines: the "failed" hue, so an error reads as the
    // same signal as a failed state's mark, made readable on the application palette's window
    // and base.
    Q_PROPERTY(QColor danger READ danger NOTIFY paletteChanged)

public:
    explicit StateStyle(QObject *parent = nullptr);

    static QColor colourOf(DisplayState::Value state);
    // The icon shape's name: disc, ring, diamond, noSign, cached, hollow, dash.
    static QString shapeOf(DisplayState::Value state);
    // The state as a translated word, for a mark whose view has no more exact one.
    static QString wordOf(DisplayState::Value state);

    // The failed hue, readable on both the window and the base of palette.
    static QColor dangerOn(const QPalette &palette);
    // palette with a selection colour its selected text reaches 7:1 on (Fusion's own blue
    // reaches 3.6:1 with white), deep enough for every state's mark to keep its hue there.
    static QPalette withReadableSelection(QPalette palette);

    QColor accent() const { return colourOf(DisplayState::Progress); }
    QColor danger() const;
    Q_INVOKABLE QColor colour(int state) const { return colourOf(DisplayState::Value(state)); }
    // The state's colour as drawn on background: its hue at 4.5:1 or more.
    Q_INVOKABLE QColor on(int state, const QColor &background) const;
    // Any colour made readable on background the same way (a word's, an error's).
    Q_INVOKABLE QColor readable(const QColor &colour, const QColor &background) const;
    Q_INVOKABLE double contrast(const QColor &a, const QColor &b) const;
    // The selection colour a window uses: highlight deepened until highlightedText reaches 7:1
    // on it (withReadableSelection's rule). The window sets it once as it opens.
    Q_INVOKABLE QColor selection(const QColor &highlight, const QColor &highlightedText) const;
    Q_INVOKABLE QString shape(int state) const { return shapeOf(DisplayState::Value(state)); }
    Q_INVOKABLE QString word(int state) const { return wordOf(DisplayState::Value(state)); }

Q_SIGNALS:
    void paletteChanged();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
};

} // namespace pando::desktop
