// The usage texts of `pando`, all generated from the command tables: the overview (`pando
// --help`), a group's (`pando apps --help`) and a command's (`pando deploy --help`).

#include "args.h"
#include "commands.h"

#include <vector>

namespace pando::cli {
namespace {

constexpr int SynopsisWidth = 30;

QString optText(const Opt &opt)
{
    const QString name = opt.letter ? QString(QStringLiteral("-") + QChar::fromLatin1(opt.letter))
                                    : QString(QStringLiteral("--") + toQString(opt.flag->name));
    const QString text = opt.flag->value.empty() ? name : QString(name + QLatin1Char(' ') + toQString(opt.flag->value));
    return opt.required ? text : QString(QLatin1Char('[') + text + QLatin1Char(']'));
}

// "apps rm NAME [--no-wait] [--keep-data] [--delete-data]".
QString synopsis(const CommandDef &command)
{
    QStringList parts{commandName(command)};
    if (!command.args.empty())
        parts << toQString(command.args);
    for (const Opt &opt : command.opts) {
        if (opt.flag)
            parts << optText(opt);
    }
    return parts.join(QLatin1Char(' '));
}

QString listing(const QList<const CommandDef *> &commands)
{
    QStringList lines;
    for (const CommandDef *command : commands) {
        const QString head = QStringLiteral("  ") + synopsis(*command);
        if (head.size() < SynopsisWidth + 2)
            lines << head.leftJustified(SynopsisWidth + 2) + toQString(command->summary);
        else
            lines << head << QString(SynopsisWidth + 2, QLatin1Char(' ')) + toQString(command->summary);
    }
    return lines.join(QLatin1Char('\n'));
}

QString flagLines(const QList<std::pair<QString, QString>> &rows)
{
    int width = 0;
    for (const auto &row : rows)
        width = std::max(width, int(row.first.size()));
    QStringList lines;
    for (const auto &[left, right] : rows)
        lines << QStringLiteral("  ") + left.leftJustified(width + 2) + right;
    return lines.join(QLatin1Char('\n'));
}

QString globalOptions()
{
    QList<std::pair<QString, QString>> rows;
    for (const Flag *flag : flags::Global) {
        QString left = QStringLiteral("--") + toQString(flag->name);
        if (flag->name == "help")
            left = QStringLiteral("-h, ") + left;
        if (!flag->value.empty())
            left += QLatin1Char(' ') + toQString(flag->value);
        rows.append({left, toQString(flag->help)});
    }
    return flagLines(rows);
}

const QString ExitStatus = QStringLiteral("exit status: 0 ok, 1 failed, 2 usage error, 130 interrupted;\n"
                                          "  watching a run: 0 succeeded, 1 failed, 3 errored, 4 aborted\n");

} // namespace

QString toQString(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

QString commandName(const CommandDef &command)
{
    return command.group.empty() ? toQString(command.name)
                                 : toQString(command.group) + QLatin1Char(' ') + toQString(command.name);
}

std::span<const CommandDef *const> allCommands()
{
    static const std::vector<const CommandDef *> all = [] {
        std::vector<const CommandDef *> list;
        for (const auto table : {appCommands(), envCommands(), hookCommands(), capacityCommands(), serviceCommands(),
                                 pipelineFileCommands(), pipelineCommands(), settingsCommands(), runCommands(),
                                 resourceCommands(), secretCommands(), auditCommands(), accountCommands(),
                                 grantCommands(), connectionCommands(), approvalCommands(), toolCommands()}) {
            for (const CommandDef &command : table)
                list.push_back(&command);
        }
        return list;
    }();
    return all;
}

QString usageText()
{
    QList<const CommandDef *> commands(allCommands().begin(), allCommands().end());
    return QStringLiteral("usage: pando [--server URL] [--token TOKEN] [--json] COMMAND ...\n\ncommands:\n") +
           listing(commands) +
           QStringLiteral(
               "\n\n  pando COMMAND --help (or pando help COMMAND) tells more of one command.\n\noptions:\n") +
           globalOptions() + QStringLiteral("\n\n") + ExitStatus;
}

QString groupHelp(const QString &group)
{
    return QStringLiteral("usage: pando %1 COMMAND ...\n\ncommands:\n").arg(group) + listing(groupCommands(group)) +
           QStringLiteral("\n\n  pando %1 COMMAND --help tells more of one.\n").arg(group);
}

QString commandHelp(const CommandDef &command)
{
    QString text = QStringLiteral("usage: pando ") + synopsis(command) + QStringLiteral("\n\n") +
                   toQString(command.summary) + QLatin1Char('\n');
    if (!command.details.empty())
        text += toQString(command.details) + QLatin1Char('\n');
    QList<std::pair<QString, QString>> rows;
    for (const Opt &opt : command.opts) {
        if (!opt.flag)
            continue;
        QString left = QStringLiteral("--") + toQString(opt.flag->name);
        if (opt.letter)
            left = QStringLiteral("-") + QChar::fromLatin1(opt.letter) + QStringLiteral(", ") + left;
        if (!opt.flag->value.empty())
            left += QLatin1Char(' ') + toQString(opt.flag->value);
        rows.append({left, toQString(opt.flag->help) + (opt.required ? QStringLiteral(" (required)") : QString())});
    }
    if (!rows.isEmpty())
        text += QStringLiteral("\noptions:\n") + flagLines(rows) + QLatin1Char('\n');
    text += QStringLiteral("\nglobal options:\n") + globalOptions() + QLatin1Char('\n');
    return text;
}

} // namespace pando::cli
