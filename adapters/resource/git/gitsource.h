#pragma once
// A git resource's source as check, get and put read it (internal to the git resource type).

#include "adapters/kit/gitkit/gitmirrors.h"

#include <QJsonObject>
#include <QStringList>

namespace pando::adapters::git::detail {

struct GitSourceConfig {
    QString uri;
    QString branch;
    QStringList paths;
    QStringList ignorePaths;
    QString tagFilter;
    // Commit messages: "[ci skip]" / "[skip ci]" drop a commit unless disable_ci_skip;
    // commit_filter.exclude drops one holding any of these, commit_filter.include keeps only one
    // holding any of those (plain text, not patterns).
    bool ciSkip = true;
    QStringList excludeMessages;
    QStringList includeMessages;
    // username, password, private_key, private_key_passphrase: never logged.
    GitCredentials credentials;

    // The mirrors reached with these credentials, or the install's defaults when the source
    // names none.
    GitMirrors mirrors(const QString &cacheRoot, GitCredentials defaults) const;
};

Result<GitSourceConfig> parseSource(const QJsonObject &source);

} // namespace pando::adapters::git::detail
