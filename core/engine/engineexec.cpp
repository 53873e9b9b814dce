// A command run in the container an app serves from (`pando apps exec`, docs/cli.md): checked,
// audited, then handed to the runtime, which attaches it to the caller's streams.

#include "core/engine/engineprivate.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {
constexpr int MaxArguments = 1000;
constexpr int MaxArgumentBytes = 128 * 1024;
} // namespace

Result<int> Engine::exec(const QString &app, const adapters::ExecRequest &request, const Actor &actor,
                         const CancelToken &cancel,
                         const std::function<void(std::shared_ptr<adapters::ExecInput> input)> &opened,
                         const std::function<void(int stream, QByteArrayView data)> &onOutput)
{
    if (request.command.isEmpty() || request.command.first().isEmpty())
        return fail(ErrorCode::Invalid, u"names no command to run"_s, u"command"_s,
                    u"give the command after --: pando apps exec %1 -- sh"_s.arg(app));
    qint64 bytes = 0;
    for (const QString &word : request.command)
        bytes += word.toUtf8().size();
    if (request.command.size() > MaxArguments || bytes > MaxArgumentBytes)
        return fail(
            ErrorCode::TooLarge,
            u"the command has %1 words and %2 bytes, more than %3 words or %4 bytes"_s.arg(request.command.size())
                .arg(bytes)
                .arg(MaxArguments)
                .arg(MaxArgumentBytes),
            u"command"_s);
    if (request.columns < 0 || request.rows < 0 || request.columns > 10000 || request.rows > 10000)
        return fail(ErrorCode::Invalid, u"a terminal size must be from 1 to 10000"_s, u"tty"_s);
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    const QString container = d->currentContainer(app);
    if (container.isEmpty())
        return fail(ErrorCode::Conflict, u"%1 has no running version to run a command in"_s.arg(app), u"app/"_s + app,
                    u"deploy it first (pando deploy %1 --wait), or start it (pando apps start %1)"_s.arg(app));
    const QJsonObject detail{{u"command"_s, request.command.first().left(200)},
                             {u"arguments"_s, request.command.size() - 1},
                             {u"tty"_s, request.tty},
                             {u"deploy"_s, row->currentDeploy}};
    if (auto audited = d->audit.record(actor, u"app.exec"_s, u"app/"_s + app, u"success"_s, detail); !audited)
        return std::unexpected(audited.error()); // nothing runs that the record does not show
    auto code = d->runtime->exec(container, request, cancel, opened, onOutput);
    if (!code && code.error().code == ErrorCode::Conflict)
        return fail(ErrorCode::Conflict, u"the container of %1 does not run: %2"_s.arg(app, code.error().message),
                    u"app/"_s + app, u"see why with: pando apps show %1"_s.arg(app));
    return code;
}

} // namespace pando::core
