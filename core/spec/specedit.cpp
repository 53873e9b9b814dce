#include "core/spec/specedit.h"

#include "core/spec/appspec.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <ranges>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// A value as a YAML double-quoted scalar: always a string, whatever it holds.
QByteArray quoted(const QString &value)
{
    QByteArray out = "\"";
    for (const char32_t c : value.toUcs4()) {
        if (c == U'"' || c == U'\\')
            out += '\\' + QByteArray(1, char(c));
        else if (c == U'\n')
            out += "\\n";
        else if (c == U'\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f)
            out += "\\x" + QByteArray::number(uint(c), 16).rightJustified(2, '0');
        else
            out += QString::fromUcs4(&c, 1).toUtf8();
    }
    return out + '"';
}

// The spec's lines, each without its line break, and how to end new ones.
class Lines {
public:
    explicit Lines(const QByteArray &text)
    {
        m_lines = text.split('\n');
        m_endsWithBreak = text.endsWith('\n');
        if (m_endsWithBreak)
            m_lines.removeLast();
        m_crlf = !m_lines.isEmpty() && m_lines.first().endsWith('\r');
        for (QByteArray &line : m_lines)
            if (line.endsWith('\r'))
                line.chop(1);
    }

    qsizetype size() const { return m_lines.size(); }
    const QByteArray &operator[](qsizetype i) const { return m_lines[i]; }
    QList<QByteArray> &lines() { return m_lines; }

    static int indentOf(const QByteArray &line)
    {
        int n = 0;
        while (n < line.size() && line[n] == ' ')
            ++n;
        return n;
    }
    // Blank lines and comments belong to no key.
    bool isFiller(qsizetype i) const
    {
        const QByteArray t = m_lines[i].trimmed();
        return t.isEmpty() || t.startsWith('#');
    }
    // The first line at or after from, before to, that holds content; -1 when none does.
    qsizetype nextContent(qsizetype from, qsizetype to) const
    {
        for (qsizetype i = from; i < to; ++i)
            if (!isFiller(i))
                return i;
        return -1;
    }
    // The line in [from, to) at exactly indent whose key is key ("key:", "'key':", "\"key\":").
    qsizetype findKey(qsizetype from, qsizetype to, int indent, const QByteArray &key) const
    {
        for (qsizetype i = from; i < to; ++i)
            if (!isFiller(i) && indentOf(m_lines[i]) == indent && keyOf(m_lines[i]) == key)
                return i;
        return -1;
    }
    static QByteArray keyOf(const QByteArray &line)
    {
        static const QRegularExpression key(uR"re(^\s*("([^"\\]*)"|'([^']*)'|([^\s"'#:][^:#]*?))\s*:(\s|$))re"_s);
        const auto match = key.match(QString::fromUtf8(line));
        if (!match.hasMatch())
            return {};
        for (int group : {2, 3, 4})
            if (match.capturedStart(group) >= 0)
                return match.captured(group).toUtf8();
        return {};
    }
    // What follows the key's colon, comment aside: empty for a block below it.
    static QByteArray valueOf(const QByteArray &line)
    {
        const qsizetype colon = line.indexOf(':', indentOf(line) + qsizetype(keyOf(line).size()));
        QByteArray rest = line.mid(colon + 1).trimmed();
        if (rest.startsWith('#'))
            return {};
        return rest;
    }
    // The end (exclusive) of the block the key on keyLine owns: the lines after it that are
    // indented deeper, up to its last line with content.
    qsizetype blockEnd(qsizetype keyLine, int indent) const
    {
        qsizetype last = keyLine;
        for (qsizetype i = keyLine + 1; i < size(); ++i) {
            if (isFiller(i))
                continue;
            if (indentOf(m_lines[i]) <= indent)
                break;
            last = i;
        }
        return last + 1;
    }

    QByteArray text() const
    {
        const QByteArray lineBreak = m_crlf ? "\r\n" : "\n";
        QByteArray out = m_lines.join(lineBreak);
        if (m_endsWithBreak || !m_lines.isEmpty())
            out += lineBreak;
        return out;
    }

private:
    QList<QByteArray> m_lines;
    bool m_endsWithBreak = false;
    bool m_crlf = false;
};

QByteArray variableLine(int indent, const QString &name, const QString &value)
{
    return QByteArray(indent, ' ') + name.toUtf8() + ": " + quoted(value);
}

QList<QByteArray> variableLines(int indent, const QMap<QString, QString> &variables)
{
    QList<QByteArray> out;
    for (auto it = variables.cbegin(); it != variables.cend(); ++it)
        out.append(variableLine(indent, it.key(), it.value()));
    return out;
}

bool isEmptyValue(const QByteArray &value)
{
    return value.isEmpty() || value == "{}" || value == "~" || value == "null" || value == "Null" || value == "NULL";
}

// run.env of a YAML spec as env, the rest untouched; nullopt when the text is not laid out as
// blocks this can follow.
std::optional<QByteArray> editYaml(const QByteArray &text, const QMap<QString, QString> &before,
                                   const QMap<QString, QString> &env)
{
    Lines lines(text);
    qsizetype first = lines.nextContent(0, lines.size());
    // A document start marker ("---") may come first.
    if (first >= 0 && lines[first].trimmed() == "---")
        first = lines.nextContent(first + 1, lines.size());
    if (first < 0 || lines[first].trimmed().startsWith('{'))
        return std::nullopt;
    const int rootIndent = Lines::indentOf(lines[first]);
    const qsizetype runLine = lines.findKey(first, lines.size(), rootIndent, "run");
    if (runLine < 0) {
        lines.lines().append("run:");
        lines.lines().append(QByteArray(rootIndent + 2, ' ') + "env:");
        lines.lines().append(variableLines(rootIndent + 4, env));
        return lines.text();
    }
    if (!isEmptyValue(Lines::valueOf(lines[runLine])))
        return std::nullopt;
    const qsizetype runEnd = lines.blockEnd(runLine, rootIndent);
    const qsizetype firstChild = lines.nextContent(runLine + 1, runEnd);
    const int childIndent = firstChild < 0 ? rootIndent + 2 : Lines::indentOf(lines[firstChild]);
    const qsizetype envLine = lines.findKey(runLine + 1, runEnd, childIndent, "env");
    QList<QByteArray> &out = lines.lines();
    if (envLine < 0) {
        QList<QByteArray> added{QByteArray(childIndent, ' ') + "env:"};
        added.append(variableLines(childIndent + 2, env));
        for (qsizetype i = 0; i < added.size(); ++i)
            out.insert(runEnd + i, added[i]);
        if (firstChild < 0)
            out[runLine] = QByteArray(rootIndent, ' ') + "run:";
        return lines.text();
    }
    const QByteArray envValue = Lines::valueOf(lines[envLine]);
    if (!isEmptyValue(envValue))
        return std::nullopt;
    const qsizetype envEnd = lines.blockEnd(envLine, childIndent);
    const qsizetype firstEntry = lines.nextContent(envLine + 1, envEnd);
    const int keyIndent = firstEntry < 0 ? childIndent + 2 : Lines::indentOf(lines[firstEntry]);
    // Each variable's lines: its key's and those indented below it (a value over several lines).
    struct Entry {
        QString name;
        qsizetype from;
        qsizetype to;
    };
    QList<Entry> entries;
    for (qsizetype i = envLine + 1; i < envEnd; ++i) {
        if (lines.isFiller(i) || Lines::indentOf(lines[i]) != keyIndent)
            continue;
        entries.append({QString::fromUtf8(Lines::keyOf(lines[i])), i, lines.blockEnd(i, keyIndent)});
        if (entries.last().name.isEmpty())
            return std::nullopt;
    }
    if (qsizetype(entries.size()) != before.size())
        return std::nullopt;
    QMap<QString, QString> added = env;
    for (const Entry &entry : entries)
        added.remove(entry.name);
    const QList<QByteArray> newLines = variableLines(keyIndent, added);
    const qsizetype insertAt = entries.isEmpty() ? envLine + 1 : entries.last().to;
    for (qsizetype i = 0; i < newLines.size(); ++i)
        out.insert(insertAt + i, newLines[i]);
    // From the last variable up, so that the earlier ones keep their lines.
    for (const Entry &entry : std::views::reverse(entries)) {
        if (!env.contains(entry.name))
            out.remove(entry.from, entry.to - entry.from);
        else if (env.value(entry.name) != before.value(entry.name)) {
            out.remove(entry.from, entry.to - entry.from);
            out.insert(entry.from, variableLine(keyIndent, entry.name, env.value(entry.name)));
        }
    }
    const QByteArray envKey = QByteArray(childIndent, ' ') + "env:";
    if (env.isEmpty())
        out[envLine] = envKey + " {}";
    else if (!envValue.isEmpty())
        out[envLine] = envKey;
    return lines.text();
}

// run.env of a JSON spec as env: the JSON rewritten, indented.
std::optional<QByteArray> editJson(const QByteArray &text, const QMap<QString, QString> &env)
{
    QJsonParseError error;
    QJsonDocument document = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return std::nullopt;
    QJsonObject root = document.object();
    QJsonObject run = root.value(u"run"_s).toObject();
    QJsonObject variables;
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        variables.insert(it.key(), it.value());
    run.insert(u"env"_s, variables);
    root.insert(u"run"_s, run);
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

} // namespace

QList<EnvChange> envChanges(const QMap<QString, QString> &env, const EnvEdit &edit)
{
    QMap<QString, EnvChange> changes;
    for (const QString &name : edit.unset)
        if (env.contains(name))
            changes.insert(name, {name, env.value(name), std::nullopt});
    for (auto it = edit.set.cbegin(); it != edit.set.cend(); ++it) {
        const std::optional<QString> before =
            env.contains(it.key()) ? std::optional<QString>(env.value(it.key())) : std::nullopt;
        if (before != it.value())
            changes.insert(it.key(), {it.key(), before, it.value()});
        else
            changes.remove(it.key());
    }
    return changes.values();
}

Result<QByteArray> editRunEnv(const QByteArray &specText, const EnvEdit &edit)
{
    auto spec = parseAppSpec(specText);
    if (!spec)
        return std::unexpected(spec.error());
    AppSpec expected = *spec;
    for (const EnvChange &change : envChanges(spec->run.env, edit)) {
        if (change.after)
            expected.run.env.insert(change.name, *change.after);
        else
            expected.run.env.remove(change.name);
    }
    if (expected.run.env == spec->run.env)
        return specText;
    if (auto valid = validateAppSpec(expected); !valid)
        return std::unexpected(valid.error());
    const bool json = specText.trimmed().startsWith('{');
    const std::optional<QByteArray> edited =
        json ? editJson(specText, expected.run.env) : editYaml(specText, spec->run.env, expected.run.env);
    // The edit is kept only when the text reads back as exactly the spec asked for.
    if (edited) {
        if (auto reread = parseAppSpec(*edited); reread && reread->toJson() == expected.toJson())
            return *edited;
    }
    return fail(ErrorCode::Invalid,
                u"run.env is written in a form that cannot be changed in place (a flow mapping like "
                u"{A: b})"_s,
                u"run.env"_s,
                u"write run.env as one variable a line, or change the spec and send it with pando apps update NAME "
                u"-f FILE"_s);
}

} // namespace pando::core
