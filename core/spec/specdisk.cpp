#include "core/spec/specdisk.h"

#include "core/spec/specrules.h"
#include "core/spec/yamlreader.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core {

QString diskPolicyName(AppSpec::Run::DiskPolicy policy)
{
    return policy == AppSpec::Run::DiskPolicy::Warn ? u"warn"_s : u"stop"_s;
}

namespace detail {

Status checkDisk(qint64 bytes, AppSpec::Run::DiskPolicy policy)
{
    const QString where = u"run.resources.disk"_s;
    if (bytes != 0 && bytes < MinDiskBytes)
        return fail(ErrorCode::Invalid, u"%1 is below the minimum of 1Mi"_s.arg(formatMemory(bytes)), where,
                    u"leave resources.disk out for no disk limit"_s);
    if (bytes > MaxMemoryBytes)
        return fail(ErrorCode::Invalid, u"%1 is more than 1Pi"_s.arg(formatMemory(bytes)), where);
    if (policy != AppSpec::Run::DiskPolicy::Stop && policy != AppSpec::Run::DiskPolicy::Warn)
        return fail(ErrorCode::Invalid, u"expected \"stop\" or \"warn\""_s, u"run.resources.diskPolicy"_s);
    return {};
}

Status readDisk(const DocNode &resources, AppSpec &spec)
{
    const QString diskPath = u"run.resources.disk"_s;
    if (const DocNode *disk = resources.value(u"disk"_s); disk && disk->kind != DocNode::Kind::Null) {
        const auto bytes = disk->kind == DocNode::Kind::Scalar ? parseMemory(disk->text) : std::nullopt;
        if (!bytes)
            return invalidAt(*disk,
                             u"expected an amount like \"1Gi\", \"500Mi\" or bytes, got %1"_s.arg(shownValue(*disk)),
                             diskPath);
        if (auto ok = checkDisk(*bytes, AppSpec::Run::DiskPolicy::Stop); !ok)
            return invalidAt(*disk, ok.error().message, diskPath, ok.error().hint);
        spec.run.diskBytes = *bytes;
    }
    // diskBytes is what toJson() writes next to disk, so that its output reads back.
    if (const DocNode *raw = resources.value(u"diskBytes"_s); raw && raw->kind != DocNode::Kind::Null) {
        const QString path = u"run.resources.diskBytes"_s;
        static const QRegularExpression digits(uR"(^[0-9]{1,16}\z)"_s);
        if (raw->kind != DocNode::Kind::Scalar || !digits.match(raw->text.trimmed()).hasMatch())
            return invalidAt(*raw, u"expected an integer number of bytes, got %1"_s.arg(shownValue(*raw)), path);
        const qint64 bytes = raw->text.trimmed().toLongLong();
        if (spec.run.diskBytes != 0 && spec.run.diskBytes != bytes)
            return invalidAt(*raw,
                             u"%1 does not match disk (%2 = %3 bytes)"_s.arg(bytes).arg(
                                 formatMemory(spec.run.diskBytes), QString::number(spec.run.diskBytes)),
                             path);
        if (auto ok = checkDisk(bytes, AppSpec::Run::DiskPolicy::Stop); !ok)
            return invalidAt(*raw, ok.error().message, path, ok.error().hint);
        spec.run.diskBytes = bytes;
    }
    const QString policyPath = u"run.resources.diskPolicy"_s;
    if (const DocNode *policy = resources.value(u"diskPolicy"_s); policy && policy->kind != DocNode::Kind::Null) {
        const QStringList values{u"stop"_s, u"warn"_s};
        const QString value = policy->kind == DocNode::Kind::Scalar ? policy->text.trimmed() : QString();
        if (!values.contains(value)) {
            const QString best = value.isEmpty() ? QString() : closestWord(value.toLower(), values);
            return invalidAt(*policy, u"expected \"stop\" or \"warn\", got %1"_s.arg(shownValue(*policy)), policyPath,
                             best.isEmpty() ? QString() : u"did you mean \"%1\"?"_s.arg(best));
        }
        spec.run.diskPolicy = value == u"warn" ? AppSpec::Run::DiskPolicy::Warn : AppSpec::Run::DiskPolicy::Stop;
        if (spec.run.diskBytes == 0 && !resources.value(u"disk"_s) && !resources.value(u"diskBytes"_s))
            return invalidAt(*policy, u"says what happens past the disk limit, but there is none"_s, policyPath,
                             u"add run.resources.disk, or leave diskPolicy out"_s);
    }
    return {};
}

void insertDiskJson(const AppSpec::Run &run, QJsonObject &resources)
{
    if (run.diskBytes <= 0)
        return;
    // A shown amount that would not read back as the same bytes is written in bytes.
    const QString shownAmount = formatMemory(run.diskBytes);
    resources.insert(u"disk"_s,
                     parseMemory(shownAmount) == run.diskBytes ? shownAmount : QString::number(run.diskBytes));
    resources.insert(u"diskBytes"_s, run.diskBytes);
    resources.insert(u"diskPolicy"_s, diskPolicyName(run.diskPolicy));
}

} // namespace detail

} // namespace pando::core
