#pragma once
// libgit2's objects held by unique_ptr, each freed by its own git_*_free, for the git adapters
// that call libgit2 directly (gitkit itself and the git resource type). Include after <git2.h>
// is on the include path: the targets that use it link libgit2 themselves.

#include <git2.h>
#include <memory>

namespace pando::adapters::git {

template<class T, void (*Free)(T *)> struct GitFree {
    void operator()(T *p) const { Free(p); }
};
using RepoPtr = std::unique_ptr<git_repository, GitFree<git_repository, git_repository_free>>;
using RemotePtr = std::unique_ptr<git_remote, GitFree<git_remote, git_remote_free>>;
using ReferencePtr = std::unique_ptr<git_reference, GitFree<git_reference, git_reference_free>>;
using ObjectPtr = std::unique_ptr<git_object, GitFree<git_object, git_object_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitFree<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, GitFree<git_tree, git_tree_free>>;
using DiffPtr = std::unique_ptr<git_diff, GitFree<git_diff, git_diff_free>>;
using WalkPtr = std::unique_ptr<git_revwalk, GitFree<git_revwalk, git_revwalk_free>>;

} // namespace pando::adapters::git
