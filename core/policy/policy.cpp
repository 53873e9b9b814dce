#include "policy.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <limits>

using namespace Qt::StringLiterals;

namespace pando::core::policy {

namespace {

const QString EnvironmentLabel = u"environment"_s;

// A limit of 0 means "no limit", which is above every threshold.
qint64 effectiveMemory(qint64 bytes)
{
    return bytes <= 0 ? std::numeric_limits<qint64>::max() : bytes;
}

double effectiveCpus(double cpus)
{
    return cpus <= 0 ? std::numeric_limits<double>::infinity() : cpus;
}

QString memoryText(qint64 bytes)
{
    return bytes <= 0 ? u"unlimited"_s : formatMemory(bytes);
}

QString cpusText(double cpus)
{
    return cpus <= 0 ? u"unlimited"_s : QString::number(cpus);
}

// A value from the file as it was written there, for error messages.
QString shown(const QJsonValue &value)
{
    const QByteArray json = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2)); // without the array's brackets
}

Result<QStringList> stringList(const QJsonValue &value, const QString &where)
{
    if (!value.isArray())
        return fail(ErrorCode::Invalid, u"expected a list of strings"_s, where);
    QStringList out;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString at = where + u'[' + QString::number(i) + u']';
        if (!array.at(i).isString() || array.at(i).toString().isEmpty())
            return fail(ErrorCode::Invalid, u"expected a non-empty string"_s, at);
        out << array.at(i).toString();
    }
    return out;
}

Status checkKeys(const QJsonObject &object, const QStringList &known, const QString &prefix)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            return fail(ErrorCode::Invalid, u"unknown key (known: "_s + known.join(u", "_s) + u')',
                        prefix.isEmpty() ? it.key() : prefix + u'.' + it.key());
    }
    return {};
}

Status readChanges(const QJsonValue &value, Policy &policy)
{
    const QString where = u"changes"_s;
    if (!value.isObject())
        return fail(ErrorCode::Invalid, u"expected an object"_s, where);
    const QJsonObject changes = value.toObject();
    if (auto known = checkKeys(changes, {u"newSourceRepo"_s, u"egress"_s, u"memoryAbove"_s, u"cpusAbove"_s}, where);
        !known)
        return known;
    for (const auto &[key, rule] :
         {std::pair{u"newSourceRepo"_s, &policy.newSourceRepo}, {u"egress"_s, &policy.egress}}) {
        if (!changes.contains(key))
            continue;
        if (!changes.value(key).isBool())
            return fail(ErrorCode::Invalid, u"expected true or false"_s, where + u'.' + key);
        *rule = changes.value(key).toBool();
    }
    if (changes.contains(u"memoryAbove"_s)) {
        const QJsonValue memory = changes.value(u"memoryAbove"_s);
        std::optional<qint64> bytes;
        if (memory.isString())
            bytes = parseMemory(memory.toString());
        else if (memory.isDouble() && memory.toDouble() == double(qint64(memory.toDouble())))
            bytes = qint64(memory.toDouble());
        if (!bytes || *bytes <= 0)
            return fail(
                ErrorCode::Invalid,
                u"expected a positive amount of memory (\"2Gi\", \"512Mi\" or bytes), got %1"_s.arg(shown(memory)),
                u"changes.memoryAbove"_s);
        policy.memoryAboveBytes = *bytes;
    }
    if (changes.contains(u"cpusAbove"_s)) {
        const QJsonValue cpus = changes.value(u"cpusAbove"_s);
        if (!cpus.isDouble() || cpus.toDouble() <= 0)
            return fail(ErrorCode::Invalid, u"expected a positive number of cpus, got %1"_s.arg(shown(cpus)),
                        u"changes.cpusAbove"_s);
        policy.cpusAbove = cpus.toDouble();
    }
    return {};
}

} // namespace

bool globMatches(const QString &glob, const QString &name)
{
    // App names are DNS labels, so the path-aware wildcard conversion (no '/') loses nothing.
    const QRegularExpression re(QRegularExpression::wildcardToRegularExpression(glob));
    return re.isValid() && re.match(name).hasMatch();
}

bool Policy::isEmpty() const
{
    return appGlobs.isEmpty() && environments.isEmpty() && !newSourceRepo && !egress && memoryAboveBytes == 0 &&
           cpusAbove == 0;
}

bool Policy::appRequiresApproval(const AppSpec *current, const AppSpec &next, const QString &appName) const
{
    for (const QString &glob : appGlobs) {
        if (globMatches(glob, appName))
            return true;
    }
    const QString nextEnv = next.labels.value(EnvironmentLabel);
    const QString currentEnv = current ? current->labels.value(EnvironmentLabel) : QString();
    for (const QString &env : environments) {
        if (env == nextEnv || env == currentEnv)
            return true;
    }
    return false;
}

QStringList Policy::gatedChanges(const AppSpec *current, const AppSpec &next) const
{
    QStringList changes;
    // An image is a source of its own: deploying another one is the same change.
    const auto named = [](const AppSpec &spec) {
        return spec.source.isImage() ? spec.source.image : spec.source.repo;
    };
    if (newSourceRepo && current && named(*current) != named(next))
        changes << (next.source.isImage() ? u"source image changes from %1 to %2"_s
                                          : u"source repository changes from %1 to %2"_s)
                       .arg(named(*current), named(next));
    // A first deploy has nothing to compare with; every app starts from the spec's default.
    if (egress && current && current->network.egress != next.network.egress)
        changes << u"egress changes from %1 to %2"_s.arg(egressName(current->network.egress),
                                                         egressName(next.network.egress));
    if (memoryAboveBytes > 0) {
        const qint64 wanted = effectiveMemory(next.run.memoryBytes);
        const bool raised = !current || wanted > effectiveMemory(current->run.memoryBytes);
        if (wanted > memoryAboveBytes && raised)
            changes << u"memory limit %1 is above the threshold %2"_s.arg(memoryText(next.run.memoryBytes),
                                                                          formatMemory(memoryAboveBytes));
    }
    if (cpusAbove > 0) {
        const double wanted = effectiveCpus(next.run.cpus);
        const bool raised = !current || wanted > effectiveCpus(current->run.cpus);
        if (wanted > cpusAbove && raised)
            changes << u"cpu limit %1 is above the threshold %2"_s.arg(cpusText(next.run.cpus),
                                                                       QString::number(cpusAbove));
    }
    return changes;
}

Decision Policy::decide(const AppSpec *current, const AppSpec &next, const QString &appName) const
{
    Decision decision;
    for (const QString &glob : appGlobs) {
        if (globMatches(glob, appName)) {
            decision.reasons << u"app %1 matches %2"_s.arg(appName, glob);
            break;
        }
    }
    const QString nextEnv = next.labels.value(EnvironmentLabel);
    const QString currentEnv = current ? current->labels.value(EnvironmentLabel) : QString();
    for (const QString &env : environments) {
        if (env == nextEnv) {
            decision.reasons << u"environment is %1"_s.arg(env);
            break;
        }
        if (env == currentEnv) {
            decision.reasons << u"environment was %1"_s.arg(env);
            break;
        }
    }
    decision.reasons << gatedChanges(current, next);
    decision.needsApproval = !decision.reasons.isEmpty();
    return decision;
}

Result<Policy> parsePolicy(const QByteArray &json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(ErrorCode::Invalid, error.errorString(), u"offset %1"_s.arg(error.offset));
    if (!doc.isObject())
        return fail(ErrorCode::Invalid, u"expected an object"_s, u"(top level)"_s);
    const QJsonObject root = doc.object();
    if (auto known = checkKeys(root, {u"apps"_s, u"environments"_s, u"changes"_s}, {}); !known)
        return std::unexpected(known.error());
    Policy policy;
    if (root.contains(u"apps"_s)) {
        auto apps = stringList(root.value(u"apps"_s), u"apps"_s);
        if (!apps)
            return std::unexpected(apps.error());
        for (qsizetype i = 0; i < apps->size(); ++i) {
            if (!QRegularExpression(QRegularExpression::wildcardToRegularExpression(apps->at(i))).isValid())
                return fail(ErrorCode::Invalid, u"not a valid glob"_s, u"apps[%1]"_s.arg(i));
        }
        policy.appGlobs = *apps;
    }
    if (root.contains(u"environments"_s)) {
        auto environments = stringList(root.value(u"environments"_s), u"environments"_s);
        if (!environments)
            return std::unexpected(environments.error());
        policy.environments = *environments;
    }
    if (root.contains(u"changes"_s)) {
        if (auto changes = readChanges(root.value(u"changes"_s), policy); !changes)
            return std::unexpected(changes.error());
    }
    return policy;
}

Result<Policy> loadPolicy(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the policy file: "_s + file.errorString(), path);
    // A policy is a few lines; anything near this size is not one.
    if (file.size() > 1024LL * 1024)
        return fail(ErrorCode::TooLarge, u"the policy file is over 1 MiB"_s, path);
    auto policy = parsePolicy(file.readAll());
    if (!policy) {
        Error e = policy.error();
        e.where = path + u": "_s + e.where;
        return std::unexpected(e);
    }
    return policy;
}

} // namespace pando::core::policy
