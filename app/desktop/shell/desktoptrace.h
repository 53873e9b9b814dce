#pragma once
// PANDO_DESKTOP_TRACE: the moments tests/bench/bench_desktop measures pando-desktop by, said on
// stderr as lines starting "pando-desktop: ". Unset, nothing is connected and it costs nothing.
//   1 (any value): "first frame" at the first frame swapped, and "apps view drawn with N apps" at
//       the first frame after the Apps view received its rows.
//   walk: then also, once the start settled ("settled, resident X MB"), switches views the way the
//       Ctrl+K palette does (Apps → Pipelines → Approvals → Apps, three times), saying for each
//       "view switch to NAME: X ms" (", first visit" the first time), the time from the switch to
//       its frame swapped; then scrolls the list that has the keyboard (the Apps list) from top
//       to bottom, a step per frame, saying "scroll frame X ms" for each frame and a summary, and
//       "walk done, resident X MB".
// The frame times are meant with QT_QPA_UPDATE_IDLE_TIME=0, as the benchmark runs it: otherwise
// each includes the platform's wait (5 ms by default) between asking for a frame and drawing it.

class QQuickWindow;

namespace pando::desktop {

class DesktopState;

void traceDesktop(QQuickWindow *window, DesktopState &state);

} // namespace pando::desktop
