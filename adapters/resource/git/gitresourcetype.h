#pragma once
// The built-in `git` resource type, as Concourse's: check finds new commits on a branch
// (optionally only those touching `paths` and not only `ignore_paths`), or new tags matching
// `tag_filter`; in leaves a repository checked out at one commit; out pushes a repository a task
// left. Fetching and pushing go through gitkit's mirror cache (libgit2), so pipelines and deploys
// share one mirror per repository (gitresourceio.cpp has in and out).
//
//   source: uri (required), branch (default: the remote's default branch; a put needs one),
//           paths: [globs], ignore_paths: [globs], tag_filter: "v*",
//           username, password, private_key, private_key_passphrase (never logged)
//   version: {"ref": full commit id} (plus {"tag": name} with tag_filter)
//   in:     the tree (files, executable bits, symlinks kept, never followed) and a .git of its
//           own: HEAD detached at the commit, the branch at it too, origin the uri, and the files
//           .git/ref, short_ref, commit_message, committer, committer_name, author, author_date,
//           committer_date, describe_ref, metadata.json; params short_ref_format, clean_tags
//           (depth, submodules, disable_git_lfs, fetch_tags are accepted: the whole history is
//           there, submodules are empty directories, LFS pointers stay pointers)
//   out:    params repository (required), branch, rebase | merge (+ returning), force, tag,
//           tag_prefix, annotate, only_tag; notes is refused. Version: {"ref": the pushed commit}
//
// Globs: `*` and `?` stay within one path segment, `**` spans segments, `[...]` is a class;
// a pattern naming a directory also matches everything below it ("src" matches "src/a.c").
// A commit passes the filter when any path it changed (against its first parent) matches
// `paths` (or paths is empty) and does not match `ignore_paths`.
//
// Tags are ordered by version-aware name order ("v1.2" < "v1.10"). Branch history is walked
// along first parents, newest first, and returned oldest first. A `from` version that is no
// longer in the history (a force push) is treated as no version: only the newest is returned.
//
// Threading: calls block and may be made from any thread (mirror fetches are serialised per
// repository by GitMirrors).

#include "adapters/api/resourcetype.h"
#include "adapters/kit/gitkit/gitmirrors.h"

namespace pando::adapters::git {

// The glob match used for paths/ignore_paths (exposed for tests).
bool matchPathGlob(const QString &pattern, const QString &path);
// Version-aware ordering of tag names: digit runs compare as numbers.
bool tagNameLess(const QString &a, const QString &b);

class GitResourceType final : public ResourceType {
public:
    explicit GitResourceType(QString cacheRoot, GitCredentials credentials = {});
    ~GitResourceType() override;

    QString name() const override { return QStringLiteral("git"); }
    Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                 const LogSink &log) override;
    Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                               const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                               const LogSink &log) override;
    Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) override;

private:
    QString m_cacheRoot;
    GitCredentials m_credentials; // when a source names none
};

} // namespace pando::adapters::git
