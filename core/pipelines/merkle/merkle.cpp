#include "merkle.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>

namespace pando::core::pipelines {

namespace {
void field(QCryptographicHash &hash, const QByteArray &bytes)
{
    hash.addData(QByteArray::number(bytes.size()));
    hash.addData(QByteArrayView(":"));
    hash.addData(bytes);
}
} // namespace

QString stepHash(const StepContent &content)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    // The version tag lets the encoding change without old hashes matching new meanings.
    // v2 added the scope: entries made before it (shared by every pipeline) match nothing now.
    field(hash, "pando-step-v2");
    field(hash, content.kind.toUtf8());
    field(hash, content.canonicalConfig);
    field(hash, QByteArray::number(content.inputDigests.size()));
    for (auto it = content.inputDigests.cbegin(); it != content.inputDigests.cend(); ++it) {
        field(hash, it.key().toUtf8());
        field(hash, it.value().toUtf8());
    }
    field(hash, content.imageDigest.toUtf8());
    field(hash, content.extra.toUtf8());
    field(hash, content.scope.toUtf8());
    return QString::fromLatin1(hash.result().toHex());
}

QString secretDigest(const QByteArray &key, const QString &value)
{
    return QString::fromLatin1(
        QMessageAuthenticationCode::hash(value.toUtf8(), key, QCryptographicHash::Sha256).toHex());
}

} // namespace pando::core::pipelines
