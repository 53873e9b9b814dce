#include "qml/states/markshape.h"
#include "qml/states/statemarks.h"

#include <QPainter>

namespace pando::desktop {

MarkShape::MarkShape(QQuickItem *parent) : QQuickPaintedItem(parent)
{
    setAntialiasing(true);
    m_renderer.load(marks::svg(m_shape, m_colour, m_inner));
}

template<typename T> void MarkShape::assign(T &field, const T &value)
{
    if (value == field)
        return;
    field = value;
    m_renderer.load(marks::svg(m_shape, m_colour, m_inner));
    update();
    Q_EMIT changed();
}

void MarkShape::setShape(const QString &shape)
{
    assign(m_shape, shape);
}

void MarkShape::setColour(const QColor &colour)
{
    assign(m_colour, colour);
}

void MarkShape::setInner(const QColor &inner)
{
    assign(m_inner, inner);
}

void MarkShape::paint(QPainter *painter)
{
    painter->setRenderHint(QPainter::Antialiasing);
    m_renderer.render(painter, boundingRect());
}

} // namespace pando::desktop
