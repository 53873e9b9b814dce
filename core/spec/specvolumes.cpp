#include "core/spec/specvolumes.h"

#include "core/spec/specrules.h"
#include "core/spec/yamlreader.h"

#include <QDir>
#include <QJsonObject>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::detail {

namespace {

QString fieldAt(int index, const QString &field = {})
{
    return field.isEmpty() ? u"run.volumes[%1]"_s.arg(index) : u"run.volumes[%1].%2"_s.arg(index).arg(field);
}

// Whether one path is the other or lies below it.
bool pathsOverlap(const QString &a, const QString &b)
{
    return a == b || a.startsWith(b + u'/') || b.startsWith(a + u'/');
}

Status checkVolume(const AppSpec::Run::Volume &volume, int index)
{
    static const QRegularExpression label(uR"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?\z)"_s);
    if (volume.name.size() > MaxVolumeNameChars || !label.match(volume.name).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"%1 is not a volume name: lowercase letters, digits and -, at most 32 characters"_s.arg(
                        quoted(volume.name)),
                    fieldAt(index, u"name"_s));
    const QString where = fieldAt(index, u"path"_s);
    if (!volume.path.startsWith(u'/'))
        return fail(ErrorCode::Invalid, u"%1 is not an absolute path in the container"_s.arg(quoted(volume.path)),
                    where, u"write it as the app sees it, like /data"_s);
    static const QRegularExpression visible(uR"(^[^\x00-\x20\x7f:,]+\z)"_s);
    if (!visible.match(volume.path).hasMatch() || volume.path.split(u'/').contains(u".."_s))
        return fail(ErrorCode::Invalid,
                    u"%1 may not hold spaces, control characters, ':', ',' or '..'"_s.arg(quoted(volume.path)), where);
    const QString clean = QDir::cleanPath(volume.path);
    // What the container needs for itself, and what Pando puts there, cannot be covered.
    for (const QString &system : {u"/"_s, u"/proc"_s, u"/sys"_s, u"/dev"_s, u"/etc"_s, u"/bin"_s, u"/sbin"_s, u"/lib"_s,
                                  u"/usr"_s, u"/run/secrets"_s}) {
        if (clean == system || (system != u"/" && clean.startsWith(system + u'/') &&
                                (system == u"/proc" || system == u"/sys" || system == u"/dev")))
            return fail(ErrorCode::Invalid, u"%1 would cover the container's own %2"_s.arg(quoted(volume.path), system),
                        where, u"mount it at a directory of its own, like /data or /var/lib/NAME"_s);
    }
    if (volume.sizeBytes != 0 && (volume.sizeBytes < 1024LL * 1024 || volume.sizeBytes > MaxMemoryBytes))
        return fail(ErrorCode::Invalid, u"%1 is not from 1Mi to 1Pi"_s.arg(formatMemory(volume.sizeBytes)),
                    fieldAt(index, u"size"_s));
    return {};
}

} // namespace

Status checkVolumes(const QList<AppSpec::Run::Volume> &volumes)
{
    if (volumes.size() > MaxVolumes)
        return fail(ErrorCode::Invalid, u"%1 volumes; an app may have at most %2"_s.arg(volumes.size()).arg(MaxVolumes),
                    u"run.volumes"_s);
    for (int i = 0; i < volumes.size(); ++i) {
        if (auto ok = checkVolume(volumes[i], i); !ok)
            return ok;
        for (int j = 0; j < i; ++j) {
            if (volumes[j].name == volumes[i].name)
                return fail(ErrorCode::Invalid, u"volume %1 is named twice"_s.arg(quoted(volumes[i].name)),
                            fieldAt(i, u"name"_s));
            if (pathsOverlap(QDir::cleanPath(volumes[j].path), QDir::cleanPath(volumes[i].path)))
                return fail(
                    ErrorCode::Invalid,
                    u"%1 overlaps volume %2 at %3"_s.arg(quoted(volumes[i].path), volumes[j].name, volumes[j].path),
                    fieldAt(i, u"path"_s), u"give each volume a directory of its own"_s);
        }
    }
    return {};
}

Status readVolumes(const DocNode &run, AppSpec &spec)
{
    const DocNode *node = run.value(u"volumes"_s);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    if (node->kind != DocNode::Kind::Sequence)
        return invalidAt(
            *node, u"expected a list of volumes like [{name: data, path: /data}], got %1"_s.arg(shownValue(*node)),
            u"run.volumes"_s);
    for (size_t i = 0; i < node->items.size(); ++i) {
        const DocNode &item = node->items[i];
        const int index = int(i);
        if (item.kind != DocNode::Kind::Map)
            return invalidAt(item, u"expected a mapping {name, path, size}, got %1"_s.arg(shownValue(item)),
                             fieldAt(index));
        for (const auto &[key, value] : item.entries) {
            const QStringList known{u"name"_s, u"path"_s, u"size"_s};
            if (!known.contains(key)) {
                const QString best = closestWord(key, known);
                return invalidAt(
                    item, best.isEmpty() ? u"unknown field"_s : u"unknown field; did you mean \"%1\"?"_s.arg(best),
                    fieldAt(index, key), u"known fields here: name, path, size"_s);
            }
        }
        AppSpec::Run::Volume volume;
        for (const QString &field : {u"name"_s, u"path"_s}) {
            const DocNode *value = item.value(field);
            if (!value || value->kind == DocNode::Kind::Null)
                return invalidAt(item, u"missing required field"_s, fieldAt(index, field));
            if (value->kind != DocNode::Kind::Scalar)
                return invalidAt(*value, u"expected a string, got %1"_s.arg(shownValue(*value)), fieldAt(index, field));
            (field == u"name" ? volume.name : volume.path) = value->text.trimmed();
        }
        if (const DocNode *size = item.value(u"size"_s); size && size->kind != DocNode::Kind::Null) {
            const auto bytes = size->kind == DocNode::Kind::Scalar ? parseMemory(size->text) : std::nullopt;
            if (!bytes)
                return invalidAt(*size,
                                 u"expected an amount like \"1Gi\" or \"500Mi\", got %1"_s.arg(shownValue(*size)),
                                 fieldAt(index, u"size"_s));
            volume.sizeBytes = *bytes;
        }
        spec.run.volumes.append(volume);
    }
    if (auto ok = checkVolumes(spec.run.volumes); !ok) {
        // The item the error is about, for its line.
        const QString where = ok.error().where;
        const int index = where.section(u'[', 1).section(u']', 0, 0).toInt();
        if (index >= 0 && size_t(index) < node->items.size())
            return std::unexpected(at(ok.error(), node->items[size_t(index)]));
        return ok;
    }
    return {};
}

QJsonArray volumesJson(const QList<AppSpec::Run::Volume> &volumes)
{
    QJsonArray out;
    for (const AppSpec::Run::Volume &volume : volumes) {
        QJsonObject json{{u"name"_s, volume.name}, {u"path"_s, volume.path}};
        if (volume.sizeBytes > 0) {
            const QString shown = formatMemory(volume.sizeBytes);
            json.insert(u"size"_s, parseMemory(shown) == volume.sizeBytes ? shown : QString::number(volume.sizeBytes));
        }
        out.append(json);
    }
    return out;
}

} // namespace pando::core::detail
