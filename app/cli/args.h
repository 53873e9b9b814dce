#pragma once
// The command line of `pando`, read off the command tables (commands.h): the words that name a
// command, its positional arguments and its flags. Flags may come anywhere; a one-letter flag
// means what the command named so far says (-f is --file for `apps create`, --follow for `logs`).

#include "commands.h"

#include "adapters/api/error.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace pando::cli {

struct Args {
    const CommandDef *command = nullptr; // null with --help/--version alone, or `pando GROUP --help`
    QString group;                       // `pando apps --help`: the group asked about
    QStringList arguments;               // positional arguments after the command words
    QMap<QString, QString> options;      // long option name → value ("" for flags); --scope repeats, comma-joined;
                                         // a repeatable flag's values joined by U+001F
    bool json = false;
    bool help = false;
    bool version = false;

    bool has(const QString &option) const { return options.contains(option); }
    QString value(const QString &option) const { return options.value(option); }
    // Each value of a repeatable option, in the order given.
    QStringList values(const QString &option) const;
    // --limit N as a number (parseArgs checked it), or nullopt when not given.
    std::optional<int> count(const QString &option) const;
};

// argv without the program name. Usage errors are ErrorCode::Invalid with where naming the word;
// usage is set to what to print below the error (the command's usage, its group's, or all).
Result<Args> parseArgs(const QStringList &argv, QString &usage);

// What --help prints: every command, one group's, or one command's usage and flags.
QString usageText();
QString groupHelp(const QString &group);
QString commandHelp(const CommandDef &command);
// The names of the groups and of the top-level commands, in the overview's order.
QStringList topLevelWords();
// A group's subcommands, in table order.
QList<const CommandDef *> groupCommands(const QString &group);
// The closest of candidates to word ("creat" → "create"), or empty when none is close.
QString closest(const QString &word, const QStringList &candidates);

} // namespace pando::cli
