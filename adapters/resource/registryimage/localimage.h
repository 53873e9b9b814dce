#pragma once
// What a registry-image put pushes: an image tarball from the step's inputs (`docker save`'s
// manifest.json, or an OCI layout's index.json, as oci-build-task and an `oci` get write them),
// unpacked into a private directory and read into the blobs and manifests to upload.
//
// Threading: stateless.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <utility>

namespace pando::adapters::registryimage {

// An image tarball read as `docker save` or an OCI layout.
struct LocalImage {
    struct Blob {
        QString file;
        QString digest;
        qint64 size = 0;
        QString mediaType;
    };
    Blob config;
    QList<Blob> layers;
    // An OCI layout's manifests as they are (digests kept), index last when there is one.
    QList<std::pair<QByteArray, QString>> manifests;
    QList<Blob> blobs; // an OCI layout's blobs
};

// Unpacks the tarball at file into dir: regular files and directories only, none outside dir
// (an absolute name, "..", a path through a link). Invalid at params.image otherwise.
Status unpackImageTarball(const QString &file, const QString &dir, const CancelToken &cancel);
// The image in an unpacked tarball; Invalid at params.image when it holds none, several, or
// names a file it does not have, or an OCI blob has other content than its digest.
Result<LocalImage> readLocalImage(const QString &root);
// A blob's descriptor in a manifest.
QJsonObject descriptor(const LocalImage::Blob &blob);
// The hex part of "sha256:HEX", a blob's name in an OCI layout.
QString hexOf(const QString &digest);

} // namespace pando::adapters::registryimage
