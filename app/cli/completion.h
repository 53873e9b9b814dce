#pragma once
// Shell completion scripts for `pando`, generated from the command tables (commands.h).

#include <QString>

namespace pando::cli {

QString bashCompletion(); // a `complete -F _pando pando` function
QString zshCompletion();  // a `#compdef pando` function, for $fpath or `source`
QString fishCompletion(); // `complete -c pando` lines

} // namespace pando::cli
