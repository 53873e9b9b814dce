#pragma once
// The built-in `s3` resource type, as Concourse ships it: versions of objects in an S3 bucket
// (AWS or any S3-compatible server), found either by a regexp over the object keys whose capture
// group is the version, or as the versions S3 keeps of one key in a versioned bucket.
//
//   source: bucket (required); regexp or versioned_file (one of them); access_key_id,
//           secret_access_key, session_token (none: unsigned requests, for a public bucket);
//           region_name (default us-east-1); endpoint (an S3-compatible server: path-style
//           requests); disable_ssl; skip_ssl_verification; private (the url file is presigned);
//           skip_download; server_side_encryption; sse_kms_key_id; disable_multipart (Pando
//           uploads in one request anyway); initial_path (with regexp) or initial_version (with
//           versioned_file), and initial_content_text or initial_content_binary (base64)
//   version: {"path": key} with regexp, {"version_id": id} with versioned_file
//   check:  regexp: the keys under the regexp's literal directory that match it whole, ordered
//           by their version (semantic versions or plain numbers; a key whose version is
//           neither is left out); versioned_file: the key's versions, oldest first. With no
//           version at all, the initial one when the source names it.
//   in:     the object as its base name, `version` (the captured version, or the version id),
//           `url` (presigned when private). Params: skip_download ("true"/true: only the
//           version and url files), unpack (a tar, gzipped or otherwise compressed tar, a
//           gzipped file or a zip is unpacked into the directory instead; nothing may land
//           outside it). The initial version gives its initial content instead of a download.
//   out:    params.file (required): a glob below the step's inputs naming exactly one regular
//           file, uploaded into the regexp's directory under its own name, or as a new version of
//           versioned_file; acl, content_type.
//
// Refused with the reason: aws_role_arn (no STS here; give the role's keys), use_v2_signing
// (only Signature Version 4), cloudfront_url. Secrets never appear in logs or errors.
//
// Threading: calls are stateless and may be made from any thread.

#include "adapters/api/resourcetype.h"

#include <optional>

namespace pando::adapters::s3 {

// A version as Concourse's s3 resource orders them ("semi-semantic"): dot-separated release
// components, then an optional "-pre-release" (before the release) and "+post-release" (after
// it). Components compare as numbers when both are digits, numbers before words otherwise.
struct SemiVersion {
    QStringList release;
    QStringList pre;
    QStringList post;
};
std::optional<SemiVersion> parseSemiVersion(const QString &text);
int compareSemiVersions(const SemiVersion &a, const SemiVersion &b);

// The literal start of a regexp up to its last '/' before any pattern character: where to list.
QString regexpPrefix(const QString &regexp);

class S3ResourceType final : public ResourceType {
public:
    QString name() const override { return QStringLiteral("s3"); }
    Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                 const LogSink &log) override;
    Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                               const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                               const LogSink &log) override;
    Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) override;
};

} // namespace pando::adapters::s3
