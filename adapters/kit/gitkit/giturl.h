#pragma once
// What a repository URL may look like before libgit2 sees it, and how it is shown to people.
// Kept apart from GitMirrors so that the rules can be read (and tested) in one place.

#include "adapters/api/error.h"

#include <QString>

namespace pando::adapters::git::detail {

// Accepts file://, https://, http://, ssh:// and scp-like user@host:path; refuses transport
// syntax (ext::, fd::, any <name>::), option-looking parts, whitespace and control characters.
Status checkRepositoryUrl(const QString &url);

// The URL with any password or token in its user info replaced by "***", for messages and logs.
QString displayUrl(const QString &url);

} // namespace pando::adapters::git::detail
