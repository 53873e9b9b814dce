#pragma once
// Writing one commit's tree into a plain directory: blobs as files (executable bit kept),
// symlink blobs as symlinks that are never followed, submodules as empty directories. Every
// name is checked so nothing can be written outside the target directory.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QString>

struct git_index;
struct git_repository;
struct git_tree;

namespace pando::adapters::git::detail {

// target must be an existing, empty directory this call alone writes to (bar a .git directory,
// which no tree entry may name). Each file written is also added to index when one is given.
Status writeTree(git_repository *repo, const git_tree *tree, const QString &target, const CancelToken &cancel,
                 git_index *index = nullptr);

// The last libgit2 error as text ("unknown libgit2 error" when there is none).
QString lastGitError();

} // namespace pando::adapters::git::detail
