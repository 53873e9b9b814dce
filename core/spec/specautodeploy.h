#pragma once
// The AppSpec's source.autodeploy: "off", "push", "poll", or a mapping
// {on: push|poll, tags: GLOB, every: DURATION}. Read by appspec.cpp's walker; acted on by
// core/autodeploy (webhooks and the poller).

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QJsonObject>

namespace pando::core::detail {

struct DocNode;

inline constexpr int MinPollEveryMs = 30 * 1000;           // a forge is not asked more often than that
inline constexpr int MaxPollEveryMs = 24 * 60 * 60 * 1000; // once a day

// Reads source.autodeploy (when present) into spec; errors name the field and its line.
Status readAutoDeploy(const DocNode &source, AppSpec &spec);
// Field rules for a spec built in code.
Status checkAutoDeploy(const AppSpec::Source &source);
// source.autodeploy as toJson() writes it (nothing while it is off).
void insertAutoDeployJson(const AppSpec::Source::AutoDeploy &autodeploy, QJsonObject &source);

} // namespace pando::core::detail

namespace pando::core {
// "off", "push" or "poll".
QString autoDeployModeName(AppSpec::Source::AutoDeploy::Mode mode);
// Whether a pushed ref ("refs/heads/main", "refs/tags/v1.2") is one the app follows: its branch
// (source.ref) or, with autodeploy.tags, a tag matching the glob. Returns the branch or tag name
// to deploy, or an empty string.
QString followedRef(const AppSpec::Source &source, const QString &pushedRef);
} // namespace pando::core
