#pragma once
// The built-in `registry-image` resource type, as Concourse ships it: images in a registry that
// speaks the OCI Distribution API (Docker Hub, GHCR, GitLab, Harbor, a self-hosted registry), with
// no Docker daemon in between.
//
//   source: repository (required; Docker's naming: "busybox" is docker.io/library/busybox);
//           tag (track one tag's digest) or, without it, the tags that are semantic versions
//           ("1", "1.2", "1.2.3"; a leading "v" too), each digest once under its most specific
//           tag; variant (only tags "VERSION-VARIANT"; without it tags with a suffix are left out);
//           pre_releases (also VERSION-alpha…, -beta…, -rc…); username, password; insecure (plain
//           HTTP or an unchecked certificate); ca_certs (PEM); registry_mirror {host, username,
//           password} (used for Docker Hub names); platform {os, architecture, variant} picked
//           from a multi-platform image (default linux/amd64); debug (accepted).
//           Loopback registries are spoken to over plain HTTP, as Docker does.
//   version: {"tag": …, "digest": "sha256:…"}
//   check:  the digest the tag points to now, or the semver tags newer than the last one.
//   in:     repository, tag, digest; with format rootfs (the default) rootfs/ (the layers
//           unpacked, whiteouts applied) and metadata.json ({"env": […], "user": …} of the image's
//           config); with format oci image.tar, which `docker load` takes (manifest.json) and
//           which is also an OCI image layout (oci-layout, index.json, blobs/). skip_download:
//           the three files only. username/password in params replace the source's.
//   out:    params.image: a glob below the step's inputs naming one image tarball (`docker save`
//           format or an OCI layout, as oci-build-task and `docker save` write them), pushed
//           under source.tag, params.version (with "-VARIANT"), and each tag in the file
//           params.additional_tags; "latest" when none is named. The new version is the first tag
//           and the digest of the pushed manifest.
//
//   semver_constraint: only the version tags it allows (semverconstraint.h).
//
// Refused with the reason: aws_* (ECR's own login), content_trust (Notary), tag_regex,
// created_at_sort and bump_aliases. Secrets never appear in logs or errors.
//
// Threading: calls are stateless and may be made from any thread.

#include "adapters/api/resourcetype.h"
#include "adapters/resource/registryimage/tagversion.h"

namespace pando::adapters::registryimage {

class RegistryImageResourceType final : public ResourceType {
public:
    QString name() const override { return QStringLiteral("registry-image"); }
    Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                 const LogSink &log) override;
    Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                               const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                               const LogSink &log) override;
    Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) override;
};

// The built-in `docker-image` resource type, Concourse's older one, for checks and gets: its source
// (repository, tag default latest, username, password, insecure_registries, registry_mirror as a
// URL, ca_certs as {domain, cert}) read into registry-image's, versions {"digest": …}, and a get
// writing repository, tag, image-id (the config's digest) and digest, with rootfs: true also
// rootfs.tar and metadata.json, with save: true also image (a `docker save` tarball);
// skip_download writes the four files only. Its put, which builds with a Docker daemon inside the
// step, is refused with the way to do it with registry-image. client_certs, aws_* and
// additional_private_registries are refused with the reason.
class DockerImageResourceType final : public ResourceType {
public:
    QString name() const override { return QStringLiteral("docker-image"); }
    Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                 const LogSink &log) override;
    Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                               const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                               const LogSink &log) override;
    Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) override;

private:
    RegistryImageResourceType m_registryImage;
};

} // namespace pando::adapters::registryimage
