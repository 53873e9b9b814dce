#pragma once
// Where the window comes back: the place saved when it last closed, made to fit the screen it is
// on now (a window saved on a larger or a second monitor would otherwise open past the edges,
// its title bar out of reach).

#include <QRect>

namespace pando::desktop {

// saved, shrunk to at most available's size and moved inside available. An invalid saved place,
// or an empty screen, gives an invalid rectangle: keep the window's default place.
QRect fitIntoScreen(const QRect &saved, const QRect &available);

} // namespace pando::desktop
