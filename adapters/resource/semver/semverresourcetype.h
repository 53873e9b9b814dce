#pragma once
// The built-in `semver` resource type, as Concourse ships it: one version number kept in a file
// of a git branch or an object of an S3 bucket, read by check, handed to a build by get
// (optionally bumped there only), and set or bumped by put.
//
//   source: driver (git or s3; default s3); initial_version (default 0.0.0)
//           git: uri, branch, file (required); username, password (http); private_key (ssh);
//                git_user ("Name <email>"); commit_message (%version% and %file% replaced)
//           s3:  bucket, key (required); access_key_id, secret_access_key, session_token,
//                region_name, endpoint, disable_ssl, skip_ssl_verification
//   version: {"number": "1.2.3"}
//   check:  the stored version (initial_version when none is stored), when it is not older than
//           the version checked from
//   in:     files `version` and `number`, bumped by params bump and pre without storing that
//   out:    params file (a path in the inputs holding the version to store) or bump/pre applied
//           to the stored version. The git driver commits on top of the branch and pushes fast-
//           forward only; when the branch moved it reads the new version and bumps again.
//
// Bumps (Concourse's semantics): bump major|minor|patch|final; pre NAME makes or counts up a
// pre-release "-NAME.N" (pre_without_version: "-NAME"). Refused with the reason: the swift and
// gcs drivers. Secrets never appear in logs or errors.
//
// Threading: calls may be made from any thread (git work on one repository is serialised by
// gitkit).

#include "adapters/api/resourcetype.h"

#include <optional>

namespace pando::adapters::semver {

struct SemVer {
    quint64 major = 0;
    quint64 minor = 0;
    quint64 patch = 0;
    QStringList pre;   // "rc", "1"
    QStringList build; // after '+': kept, never ordered by
    QString text() const;
};
// Semantic Versioning 2.0 ("1.2.3", "1.0.0-rc.1+build.5"); a leading "v" is not accepted.
std::optional<SemVer> parseSemVer(const QString &text);
int compareSemVer(const SemVer &a, const SemVer &b);
// Applies bump (major, minor, patch, final or empty) and pre (a pre-release name or empty).
Result<SemVer> bumpSemVer(SemVer version, const QString &bump, const QString &pre, bool preWithoutVersion);

class SemverResourceType final : public ResourceType {
public:
    // cacheRoot: where git mirrors are kept (shared with the git resource type).
    explicit SemverResourceType(QString cacheRoot) : m_cacheRoot(std::move(cacheRoot)) {}

    QString name() const override { return QStringLiteral("semver"); }
    Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                 const LogSink &log) override;
    Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                               const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                               const LogSink &log) override;
    Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) override;

private:
    QString m_cacheRoot;
};

} // namespace pando::adapters::semver
