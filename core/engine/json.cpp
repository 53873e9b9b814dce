// The engine's records as the API shows them. One place, so the CLI, the desktop and the
// OpenAPI document agree on field names.
#include "engine.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::core {

namespace {
qint64 durationMs(qint64 started, qint64 finished)
{
    return started > 0 && finished >= started ? finished - started : 0;
}
} // namespace

QJsonObject toJson(const DeployRecord &d)
{
    QJsonObject o{{QStringLiteral("id"), d.id},
                  {QStringLiteral("app"), d.app},
                  {QStringLiteral("ref"), d.ref},
                  {QStringLiteral("commit"), d.commit},
                  {QStringLiteral("status"), toString(d.status)},
                  {QStringLiteral("failed_step"), d.failedStep},
                  {QStringLiteral("error"), d.error},
                  {QStringLiteral("image"), d.imageId},
                  {QStringLiteral("container"), d.containerId},
                  {QStringLiteral("actor"), d.actor},
                  {QStringLiteral("created_ms"), d.createdMs},
                  {QStringLiteral("started_ms"), d.startedMs},
                  {QStringLiteral("finished_ms"), d.finishedMs},
                  {QStringLiteral("duration_ms"), durationMs(d.startedMs, d.finishedMs)}};
    if (!d.approvalId.isEmpty())
        o.insert(QStringLiteral("approval"), d.approvalId);
    if (d.port > 0)
        o.insert(QStringLiteral("port"), d.port);
    return o;
}

QJsonObject toJson(const StepRecord &s)
{
    return QJsonObject{{QStringLiteral("seq"), s.seq},
                       {QStringLiteral("name"), s.name},
                       {QStringLiteral("status"), toString(s.status)},
                       {QStringLiteral("detail"), s.detail},
                       {QStringLiteral("started_ms"), s.startedMs},
                       {QStringLiteral("finished_ms"), s.finishedMs},
                       {QStringLiteral("duration_ms"), durationMs(s.startedMs, s.finishedMs)}};
}

QJsonObject toJson(const adapters::LogLine &line)
{
    return QJsonObject{
        {QStringLiteral("time_ms"), line.timestampMs},
        {QStringLiteral("stream"), line.stderrStream ? QStringLiteral("stderr") : QStringLiteral("stdout")},
        {QStringLiteral("text"), line.text}};
}

QJsonObject toJson(const StepLogLine &line)
{
    return QJsonObject{{QStringLiteral("step"), line.seq},
                       {QStringLiteral("line"), line.line},
                       {QStringLiteral("time_ms"), line.timeMs},
                       {QStringLiteral("stderr"), line.stderrStream},
                       {QStringLiteral("text"), line.text}};
}

QJsonObject toJson(const AuditRecord &line)
{
    return QJsonObject{{QStringLiteral("seq"), line.seq},
                       {QStringLiteral("time_ms"), line.timeMs},
                       {QStringLiteral("actor"), line.actor},
                       {QStringLiteral("action"), line.action},
                       {QStringLiteral("object"), line.object},
                       {QStringLiteral("outcome"), line.outcome},
                       {QStringLiteral("detail"), QJsonDocument::fromJson(line.detail.toUtf8()).object()},
                       {QStringLiteral("request_id"), line.requestId},
                       {QStringLiteral("source"), line.source},
                       {QStringLiteral("prev_hash"), line.prevHash},
                       {QStringLiteral("hash"), line.hash}};
}

QJsonObject AddressView::toJson() const
{
    QJsonObject o{{QStringLiteral("url"), url}, {QStringLiteral("tls"), tls}, {QStringLiteral("moved"), moved}};
    if (certificate)
        o.insert(QStringLiteral("certificate"),
                 QJsonObject{{QStringLiteral("issuer"), certificate->issuer},
                             {QStringLiteral("not_after_ms"),
                              certificate->notAfter.isValid() ? certificate->notAfter.toMSecsSinceEpoch() : 0},
                             {QStringLiteral("error"), certificate->error}});
    return o;
}

QJsonObject AppView::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), record.name},
                  {QStringLiteral("url"), url},
                  {QStringLiteral("status"), toString(status)},
                  {QStringLiteral("status_reason"), statusReason},
                  {QStringLiteral("route_port"), record.routePort},
                  {QStringLiteral("current_deploy"), record.currentDeploy},
                  {QStringLiteral("created_ms"), record.createdMs},
                  {QStringLiteral("updated_ms"), record.updatedMs},
                  {QStringLiteral("spec"), spec.toJson()},
                  {QStringLiteral("spec_text"), record.specYaml},
                  {QStringLiteral("source_connection"), record.sourceConnection}};
    QJsonArray list;
    for (const AddressView &address : addresses)
        list.append(address.toJson());
    o.insert(QStringLiteral("addresses"), list);
    if (lastDeploy)
        o.insert(QStringLiteral("last_deploy"), core::toJson(*lastDeploy));
    return o;
}

QJsonObject DeployView::toJson() const
{
    QJsonObject o = core::toJson(record);
    QJsonArray list;
    for (const StepRecord &s : steps)
        list.append(core::toJson(s));
    o.insert(QStringLiteral("steps"), list);
    return o;
}

} // namespace pando::core
