#pragma once
// MarkShape (QML, Pando.States): one state mark's shape, painted from its SVG (statemarks.h) at
// the item's size in device pixels, so a mark is as sharp at 2× as at 1×. StateMark.qml puts the
// word beside it and picks the colours; nothing else should need this item.
//
// Threading: GUI thread (painting on the scene graph's, as QQuickPaintedItem does).

#include <QColor>
#include <QQuickPaintedItem>
#include <QSvgRenderer>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class MarkShape : public QQuickPaintedItem {
    Q_OBJECT
    QML_ELEMENT
    // StateStyle's shape name: disc, ring, diamond, noSign, cached, hollow or dash.
    Q_PROPERTY(QString shape READ shape WRITE setShape NOTIFY changed)
    Q_PROPERTY(QColor colour READ colour WRITE setColour NOTIFY changed)
    // The colour of the sign inside a filled shape (the check, the pause, the bar): the
    // background, so the sign reads as cut out of the mark.
    Q_PROPERTY(QColor inner READ inner WRITE setInner NOTIFY changed)

public:
    explicit MarkShape(QQuickItem *parent = nullptr);

    QString shape() const { return m_shape; }
    void setShape(const QString &shape);
    QColor colour() const { return m_colour; }
    void setColour(const QColor &colour);
    QColor inner() const { return m_inner; }
    void setInner(const QColor &inner);

    void paint(QPainter *painter) override;

Q_SIGNALS:
    void changed();

private:
    // Sets a property: a repaint and changed() when the value is new.
    template<typename T> void assign(T &field, const T &value);

    QString m_shape = QStringLiteral("dash");
    QColor m_colour = Qt::gray;
    QColor m_inner = Qt::white;
    QSvgRenderer m_renderer; // the drawing of the three above, made again when one changes
};

} // namespace pando::desktop
