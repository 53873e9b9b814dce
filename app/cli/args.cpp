#include "args.h"

namespace pando::cli {
namespace {

const Flag *flagNamed(const QString &name)
{
    for (const Flag *flag : flags::Catalogue) {
        if (toQString(flag->name) == name)
            return flag;
    }
    return nullptr;
}

bool isGlobal(const QString &name)
{
    for (const Flag *flag : flags::Global) {
        if (toQString(flag->name) == name)
            return true;
    }
    return false;
}

QStringList wordsOf(const CommandDef &command)
{
    QStringList words;
    if (!command.group.empty())
        words << toQString(command.group);
    words << toQString(command.name);
    return words;
}

// The command whose words begin words, if any.
const CommandDef *commandFor(const QStringList &words)
{
    for (const CommandDef *command : allCommands()) {
        const QStringList own = wordsOf(*command);
        if (words.size() >= own.size() && words.mid(0, own.size()) == own)
            return command;
    }
    return nullptr;
}

// A one-letter flag: what the command named so far means by it, else what the first command
// that has the letter means (-f before any command word is --file), "help" for -h.
QString letterFlag(QChar letter, const QStringList &wordsSoFar)
{
    if (letter == u'h')
        return QStringLiteral("help");
    const auto in = [letter](const CommandDef &command) -> QString {
        for (const Opt &opt : command.opts) {
            if (opt.flag && QChar::fromLatin1(opt.letter) == letter)
                return toQString(opt.flag->name);
        }
        return {};
    };
    if (const CommandDef *command = commandFor(wordsSoFar); command && !in(*command).isEmpty())
        return in(*command);
    for (const CommandDef *command : allCommands()) {
        if (QString name = in(*command); !name.isEmpty())
            return name;
    }
    return {};
}

bool takes(const CommandDef &command, const QString &name)
{
    for (const Opt &opt : command.opts) {
        if (opt.flag && toQString(opt.flag->name) == name)
            return true;
    }
    return isGlobal(name);
}

QStringList flagNames(const CommandDef *command)
{
    QStringList names;
    if (command) {
        for (const Opt &opt : command->opts) {
            if (opt.flag)
                names << QStringLiteral("--") + toQString(opt.flag->name);
        }
    }
    for (const Flag *flag : flags::Global)
        names << QStringLiteral("--") + toQString(flag->name);
    return names;
}

Error withSuggestion(Error error, const QString &word, const QStringList &candidates)
{
    if (const QString near = closest(word, candidates); !near.isEmpty())
        error.hint = QStringLiteral("did you mean \"%1\"?").arg(near);
    return error;
}

} // namespace

std::optional<int> Args::count(const QString &option) const
{
    if (!has(option))
        return std::nullopt;
    return value(option).toInt();
}

QString closest(const QString &word, const QStringList &candidates)
{
    // Levenshtein distance; a candidate within a third of the word's length (at least 1, at most
    // 2 edits), or one the word begins, is close.
    QString best;
    int bestDistance = std::max<int>(1, std::min<int>(2, int(word.size()) / 3)) + 1;
    for (const QString &candidate : candidates) {
        if (!word.isEmpty() && candidate.startsWith(word) && bestDistance > 0) {
            best = candidate;
            bestDistance = 0;
            continue;
        }
        QList<int> previous(candidate.size() + 1);
        for (int j = 0; j <= candidate.size(); ++j)
            previous[j] = j;
        for (int i = 1; i <= word.size(); ++i) {
            QList<int> current(candidate.size() + 1);
            current[0] = i;
            for (int j = 1; j <= candidate.size(); ++j)
                current[j] = std::min(
                    {previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word[i - 1] == candidate[j - 1] ? 0 : 1)});
            previous = current;
        }
        if (previous.back() < bestDistance) {
            bestDistance = previous.back();
            best = candidate;
        }
    }
    return best;
}

QStringList topLevelWords()
{
    QStringList words;
    for (const CommandDef *command : allCommands()) {
        const QString word = command->group.empty() ? toQString(command->name) : toQString(command->group);
        if (!words.contains(word))
            words << word;
    }
    return words;
}

QList<const CommandDef *> groupCommands(const QString &group)
{
    QList<const CommandDef *> list;
    for (const CommandDef *command : allCommands()) {
        if (!command->group.empty() && toQString(command->group) == group)
            list << command;
    }
    return list;
}

namespace {
constexpr QChar RepeatSeparator(0x1f);
} // namespace

QStringList Args::values(const QString &option) const
{
    return options.contains(option) ? options.value(option).split(RepeatSeparator) : QStringList();
}

Result<Args> parseArgs(const QStringList &argv, QString &usage)
{
    usage = usageText();
    Args args;
    QStringList words;
    QString unknown; // the first unknown option: reported once the command is known, with a suggestion
    for (qsizetype i = 0; i < argv.size(); ++i) {
        const QString &word = argv[i];
        QString name;
        QString value;
        bool hasValue = false;
        if (word == QLatin1String("--")) {
            words += argv.mid(i + 1);
            break;
        }
        if (word.startsWith(QLatin1String("--"))) {
            name = word.mid(2);
            const qsizetype eq = name.indexOf(QLatin1Char('='));
            if (eq >= 0) {
                value = name.mid(eq + 1);
                name = name.left(eq);
                hasValue = true;
            }
        } else if (word.startsWith(QLatin1Char('-')) && word.size() == 2) {
            name = letterFlag(word[1], words);
        } else if (word.startsWith(QLatin1Char('-')) && word.size() > 1) {
            name.clear();
        } else {
            words << word;
            continue;
        }
        const Flag *flag = name.isEmpty() ? nullptr : flagNamed(name);
        if (!flag) {
            if (unknown.isEmpty())
                unknown = word;
            continue;
        }
        if (!flag->value.empty()) {
            if (!hasValue) {
                if (i + 1 >= argv.size())
                    return fail(ErrorCode::Invalid, QStringLiteral("needs a value"), word);
                value = argv[++i];
            }
        } else if (hasValue) {
            return fail(ErrorCode::Invalid, QStringLiteral("takes no value"), QStringLiteral("--") + name);
        }
        // A token may carry several scopes: --scope a --scope b.
        if (name == QLatin1String("scope") && args.options.contains(name))
            value = args.options.value(name) + QLatin1Char(',') + value;
        else if (flag->repeatable && args.options.contains(name))
            value = args.options.value(name) + RepeatSeparator + value;
        args.options.insert(name, value);
    }
    // `pando help deploy` is `pando deploy --help`.
    if (words.value(0) == QLatin1String("help")) {
        words.removeFirst();
        args.options.insert(QStringLiteral("help"), QString());
    }
    args.json = args.has(QStringLiteral("json"));
    args.help = args.has(QStringLiteral("help"));
    args.version = args.has(QStringLiteral("version"));
    const CommandDef *found = commandFor(words);
    if (!unknown.isEmpty()) {
        if (found)
            usage = commandHelp(*found);
        const QString bare = unknown.startsWith(QLatin1String("--")) ? unknown : QString();
        return std::unexpected(withSuggestion(Error{ErrorCode::Invalid, QStringLiteral("unknown option"), unknown},
                                              bare, flagNames(found)));
    }
    if ((args.help || args.version) && words.isEmpty())
        return args;
    if (words.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("no command given"));

    if (!found) {
        const QStringList groups = topLevelWords();
        const QList<const CommandDef *> subcommands = groupCommands(words[0]);
        if (subcommands.isEmpty())
            return std::unexpected(withSuggestion(
                Error{ErrorCode::Invalid, QStringLiteral("unknown command \"%1\"").arg(words[0]), words[0]}, words[0],
                groups));
        args.group = words[0];
        usage = groupHelp(words[0]);
        if (args.help && words.size() == 1)
            return args;
        if (words.size() == 1)
            return fail(ErrorCode::Invalid, QStringLiteral("missing subcommand"), words[0],
                        QStringLiteral("see pando %1 --help").arg(words[0]));
        QStringList names;
        for (const CommandDef *command : subcommands)
            names << toQString(command->name);
        return std::unexpected(
            withSuggestion(Error{ErrorCode::Invalid, QStringLiteral("unknown subcommand \"%1\"").arg(words[1]),
                                 words.mid(0, 2).join(QLatin1Char(' '))},
                           words[1], names));
    }
    args.command = found;
    usage = commandHelp(*found);
    if (args.help)
        return args;
    const QString command = commandName(*found);
    args.arguments = words.mid(wordsOf(*found).size());
    if (args.arguments.size() < found->minArgs)
        return fail(ErrorCode::Invalid, QStringLiteral("missing %1").arg(toQString(found->args)), command);
    if (args.arguments.size() > found->maxArgs)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("unexpected argument \"%1\"").arg(args.arguments.value(found->maxArgs)), command);
    for (auto it = args.options.cbegin(); it != args.options.cend(); ++it) {
        if (!takes(*found, it.key()))
            return fail(ErrorCode::Invalid, QStringLiteral("--%1 does not apply to \"%2\"").arg(it.key(), command),
                        command);
    }
    for (const Opt &opt : found->opts) {
        if (opt.flag && opt.required && !args.has(toQString(opt.flag->name)))
            return fail(ErrorCode::Invalid, QStringLiteral("needs --%1").arg(toQString(opt.flag->name)), command);
    }
    for (const Opt &opt : found->opts) {
        const QString name = opt.flag ? toQString(opt.flag->name) : QString();
        if (!opt.flag || !opt.flag->number || !args.has(name))
            continue;
        bool ok = false;
        const int n = args.value(name).toInt(&ok);
        if (!ok || n < 0)
            return fail(ErrorCode::Invalid, QStringLiteral("must be a whole number, got \"%1\"").arg(args.value(name)),
                        QStringLiteral("--") + name);
    }
    if (found->check) {
        if (auto checked = found->check(args); !checked)
            return std::unexpected(checked.error());
    }
    return args;
}

} // namespace pando::cli
