#include "core/detection/baseimages.h"

#include <QRegularExpression>
#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

using Variables = QMap<QString, QString>;

// The escape character a `# escape=` parser directive sets, among the comment lines the
// Dockerfile starts with (a directive after anything else is a comment).
QChar escapeOf(const QStringList &lines)
{
    static const QRegularExpression directive(uR"(^#\s*([A-Za-z]+)\s*=\s*(\S*)\s*$)"_s);
    for (const QString &line : lines) {
        const auto match = directive.match(line.trimmed());
        if (!match.hasMatch())
            break;
        if (match.captured(1).compare("escape"_L1, Qt::CaseInsensitive) == 0 && match.captured(2) == "`"_L1)
            return u'`';
    }
    return u'\\';
}

// The Dockerfile's instructions, each on one line: continuation lines joined, comment and empty
// lines left out, and the bodies of heredocs (`RUN <<EOF` … `EOF`) passed over.
QStringList instructions(const QByteArray &dockerfile, QChar escape)
{
    QStringList lines = QString::fromUtf8(dockerfile).split(u'\n');
    for (QString &line : lines)
        if (line.endsWith(u'\r'))
            line.chop(1);
    static const QRegularExpression heredoc(uR"(<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2)"_s);
    QStringList out;
    QString current;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString trimmed = lines.at(i).trimmed();
        if (trimmed.isEmpty() || trimmed.startsWith(u'#'))
            continue;
        if (trimmed.endsWith(escape)) {
            current += trimmed.chopped(1) + u' ';
            continue;
        }
        current += trimmed;
        // The heredocs this instruction opens take the lines that follow, up to their words.
        for (auto it = heredoc.globalMatch(current); it.hasNext();) {
            const auto match = it.next();
            const bool stripTabs = !match.captured(1).isEmpty();
            const QString word = match.captured(3);
            while (++i < lines.size()) {
                QString body = lines.at(i);
                if (stripTabs)
                    body.remove(QRegularExpression(u"^\\t+"_s));
                if (body == word)
                    break;
            }
        }
        out << current;
        current.clear();
    }
    if (!current.isEmpty())
        out << current;
    return out;
}

// value with its variables filled in as the builder does it; escape before $ keeps the $.
QString substitute(const QString &value, const Variables &vars, QChar escape)
{
    static const QRegularExpression name(u"^[A-Za-z_][A-Za-z0-9_]*"_s);
    QString out;
    for (qsizetype i = 0; i < value.size(); ++i) {
        const QChar c = value.at(i);
        if (c == escape && i + 1 < value.size() && value.at(i + 1) == u'$') {
            out += u'$';
            ++i;
            continue;
        }
        if (c != u'$' || i + 1 == value.size()) {
            out += c;
            continue;
        }
        if (value.at(i + 1) == u'{') {
            const qsizetype close = value.indexOf(u'}', i + 2);
            if (close < 0) {
                out += value.mid(i); // the builder refuses it and says why
                break;
            }
            const QString inner = value.mid(i + 2, close - i - 2);
            const auto match = name.match(inner);
            const QString var = match.captured(0);
            const QString rest = inner.mid(var.size());
            const bool set = vars.contains(var);
            const QString now = vars.value(var);
            if (rest.startsWith(":-"_L1))
                out += now.isEmpty() ? substitute(rest.mid(2), vars, escape) : now;
            else if (rest.startsWith(":+"_L1))
                out += now.isEmpty() ? QString() : substitute(rest.mid(2), vars, escape);
            else if (rest.startsWith(u'-'))
                out += set ? now : substitute(rest.mid(1), vars, escape);
            else if (rest.startsWith(u'+'))
                out += set ? substitute(rest.mid(1), vars, escape) : QString();
            else
                out += now;
            i = close;
            continue;
        }
        const auto match = name.match(value.mid(i + 1));
        if (!match.hasMatch()) {
            out += c;
            continue;
        }
        out += vars.value(match.captured(0));
        i += match.capturedLength(0);
    }
    return out;
}

// An ARG instruction's declarations ("ARG A=1 B" → A with its default, B without), each set
// to its build arg, else its default, else (for one declared again in a stage) the global value.
void declare(const QString &arguments, const QMap<QString, QString> &buildArgs, const Variables &outer, Variables &into,
             QChar escape)
{
    static const QRegularExpression word(uR"(([A-Za-z_][A-Za-z0-9_]*)(=("[^"]*"|'[^']*'|\S*))?)"_s);
    for (auto it = word.globalMatch(arguments); it.hasNext();) {
        const auto match = it.next();
        const QString var = match.captured(1);
        if (buildArgs.contains(var)) {
            into.insert(var, buildArgs.value(var));
        } else if (match.hasCaptured(2)) {
            QString value = match.captured(3);
            if (value.size() >= 2 && (value.front() == u'"' || value.front() == u'\'') && value.back() == value.front())
                value = value.mid(1, value.size() - 2);
            into.insert(var, substitute(value, into, escape));
        } else if (outer.contains(var)) {
            into.insert(var, outer.value(var));
        }
    }
}

bool looksLikeImage(const QString &reference)
{
    static const QRegularExpression image(u"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$"_s);
    return image.match(reference).hasMatch();
}

} // namespace

QStringList baseImages(const QByteArray &dockerfile, const QMap<QString, QString> &buildArgs)
{
    const QChar escape = escapeOf(QString::fromUtf8(dockerfile.left(4096)).split(u'\n'));
    Variables global;
    Variables stage;
    QSet<QString> stages; // names (lower case) and numbers of the stages so far
    int stageCount = 0;
    QStringList images;
    // source names an image unless it names an earlier stage.
    const auto consider = [&](const QString &source) {
        if (source.isEmpty() || stages.contains(source.toLower()) ||
            source.compare("scratch"_L1, Qt::CaseInsensitive) == 0)
            return;
        if (looksLikeImage(source) && !images.contains(source))
            images << source;
    };
    for (const QString &instruction : instructions(dockerfile, escape)) {
        const QString keyword = instruction.section(u' ', 0, 0).toUpper();
        const QString arguments = instruction.section(u' ', 1).trimmed();
        QStringList words = arguments.split(QRegularExpression(u"\\s+"_s), Qt::SkipEmptyParts);
        QStringList flags;
        while (!words.isEmpty() && words.first().startsWith("--"_L1))
            flags << words.takeFirst();
        if (keyword == "ARG"_L1) {
            declare(arguments, buildArgs, global, stageCount > 0 ? stage : global, escape);
        } else if (keyword == "FROM"_L1) {
            consider(substitute(words.value(0), global, escape));
            stages.insert(QString::number(stageCount++));
            if (words.size() >= 3 && words.at(1).compare("AS"_L1, Qt::CaseInsensitive) == 0)
                stages.insert(words.at(2).toLower());
            stage.clear();
        } else if (keyword == "COPY"_L1 || keyword == "RUN"_L1) {
            for (const QString &flag : std::as_const(flags)) {
                if (flag.startsWith("--from="_L1)) {
                    consider(substitute(flag.mid(7), stage, escape));
                } else if (flag.startsWith("--mount="_L1)) {
                    for (const QString &option : flag.mid(8).split(u','))
                        if (option.startsWith("from="_L1))
                            consider(substitute(option.mid(5), stage, escape));
                }
            }
        }
    }
    return images;
}

} // namespace pando::core
