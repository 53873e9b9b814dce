#include "core/pipelines/config/pipelineconfig.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

QString stepKindName(StepKind kind)
{
    switch (kind) {
    case StepKind::Get:
        return u"get"_s;
    case StepKind::Put:
        return u"put"_s;
    case StepKind::Task:
        return u"task"_s;
    case StepKind::InParallel:
        return u"in_parallel"_s;
    case StepKind::Do:
        return u"do"_s;
    case StepKind::Try:
        return u"try"_s;
    case StepKind::Approve:
        return u"approve"_s;
    case StepKind::LoadVar:
        return u"load_var"_s;
    case StepKind::SetPipeline:
        return u"set_pipeline"_s;
    }
    return {};
}

QString Step::artifact() const
{
    if (kind == StepKind::Get || (kind == StepKind::Put && !put.noGet))
        return name;
    return {};
}

namespace {

template<class T> const T *byName(const QList<T> &list, const QString &name)
{
    for (const auto &item : list) {
        if (item.name == name)
            return &item;
    }
    return nullptr;
}

} // namespace

const ResourceType *Pipeline::resourceType(const QString &name) const
{
    return byName(resourceTypes, name);
}

const Resource *Pipeline::resource(const QString &name) const
{
    return byName(resources, name);
}

const Job *Pipeline::job(const QString &name) const
{
    return byName(jobs, name);
}

std::optional<Error> webhookTokenProblem(const QString &value, const QString &where)
{
    if (value.size() >= MinWebhookTokenChars)
        return std::nullopt;
    return Error{ErrorCode::Invalid,
                 QStringLiteral("a webhook token needs at least %1 characters (128 bits as hex); this one has %2")
                     .arg(MinWebhookTokenChars)
                     .arg(value.size()),
                 where,
                 QStringLiteral("generate one with: pando pipelines webhook-token (store it as a secret and use "
                                "webhook_token: ((name)))")};
}

QString placeholderSecretName(const QString &value)
{
    static const QRegularExpression whole(QStringLiteral(R"(^\(\(\s*(?:secrets?:)?([a-zA-Z0-9_/-]+)\s*\)\)$)"));
    const auto match = whole.match(value);
    return match.hasMatch() ? match.captured(1) : QString();
}

QStringList builtinResourceTypes()
{
    return {u"git"_s, u"s3"_s, u"semver"_s, u"time"_s, u"mock"_s, u"registry-image"_s, u"docker-image"_s};
}

} // namespace pando::core::pipelines
