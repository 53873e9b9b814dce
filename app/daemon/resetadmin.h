#pragma once
// pandod --reset-admin USER: recovers an install nobody can administer (the only administrator
// disabled, its password lost, or none ever made), offline, with the data directory locked.

#include "app/daemon/daemonoptions.h"

#include <QTextStream>

namespace pando::daemon {

// The process's exit code: 0 done, 1 refused or failed (the reason on err).
int resetAdmin(const DaemonOptions &options, QTextStream &out, QTextStream &err);

} // namespace pando::daemon
