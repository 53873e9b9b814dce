#include "core/spec/yamlreader.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QSet>
#include <QStringList>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_map>

using namespace Qt::StringLiterals;

namespace pando::core::detail {

DocNode::DocNode() = default;

const DocNode *DocNode::value(const QString &key) const
{
    for (const auto &[k, v] : entries) {
        if (k == key)
            return &v;
    }
    return nullptr;
}

QString DocNode::location() const
{
    if (line <= 0)
        return {};
    return u"line %1, column %2"_s.arg(line).arg(column);
}

Error at(Error error, const DocNode &node)
{
    if (const QString location = node.location(); !location.isEmpty())
        error.message += u" (%1)"_s.arg(location);
    return error;
}

Result<QString> scalarText(const DocNode &node, const QString &where, const QString &expected)
{
    if (node.kind != DocNode::Kind::Scalar || node.text.trimmed().isEmpty())
        return std::unexpected(at(Error{ErrorCode::Invalid, u"expected %1"_s.arg(expected), where, {}}, node));
    return node.text.trimmed();
}

namespace {

QString lineColumn(int line, int column)
{
    return u"line %1, column %2"_s.arg(line).arg(column);
}

// Line starts of a text, so that byte offsets turn into line and column quickly.
class LineIndex {
public:
    explicit LineIndex(const QByteArray &text)
    {
        m_starts.push_back(0);
        for (qsizetype i = 0; i < text.size(); ++i) {
            if (text.at(i) == '\n')
                m_starts.push_back(i + 1);
        }
    }
    std::pair<int, int> at(qsizetype offset) const
    {
        auto it = std::upper_bound(m_starts.begin(), m_starts.end(), offset);
        const auto line = int(it - m_starts.begin());
        return {line, int(offset - m_starts[size_t(line - 1)]) + 1};
    }

private:
    std::vector<qsizetype> m_starts;
};

Error invalidAt(const QByteArray &text, qsizetype offset, const QString &message)
{
    const auto [line, column] = LineIndex(text).at(offset);
    return Error{ErrorCode::Invalid, message, lineColumn(line, column), {}};
}

// "the spec", or "the pipeline" when the caller named its document.
QString subject(const ReaderLimits &limits)
{
    return limits.document.isEmpty() ? u"the spec"_s : u"the "_s + limits.document;
}

std::optional<Error> checkSize(const QByteArray &text, const ReaderLimits &limits)
{
    if (text.size() <= limits.maxBytes)
        return std::nullopt;
    return Error{
        ErrorCode::TooLarge,
        u"%1 is %2 bytes; at most %3 bytes are accepted"_s.arg(subject(limits)).arg(text.size()).arg(limits.maxBytes),
        {},
        limits.document.isEmpty() ? u"keep the spec small: large data belongs in the repository, not in the spec"_s
                                  : u"keep the %1 small: large data belongs in a repository"_s.arg(limits.document)};
}

// YAML forbids C0 controls other than tab and newlines, and yaml-cpp passes malformed UTF-8
// through unchecked; both are refused here with the position of the first bad byte.
std::optional<Error> checkEncoding(const QByteArray &text, const ReaderLimits &limits)
{
    const QString notUtf8 = u"%1 is not valid UTF-8"_s.arg(subject(limits));
    const auto *data = reinterpret_cast<const unsigned char *>(text.constData());
    const qsizetype size = text.size();
    for (qsizetype i = 0; i < size;) {
        const unsigned char c = data[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
                return invalidAt(text, i,
                                 u"control character 0x%1 is not allowed"_s.arg(int(c), 2, 16, QLatin1Char('0')));
            ++i;
            continue;
        }
        int extra = 0;
        unsigned int min = 0;
        unsigned int cp = 0;
        if ((c & 0xe0) == 0xc0) {
            extra = 1, min = 0x80, cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            extra = 2, min = 0x800, cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            extra = 3, min = 0x10000, cp = c & 0x07;
        } else {
            return invalidAt(text, i, notUtf8);
        }
        for (int k = 1; k <= extra; ++k) {
            if (i + k >= size || (data[i + k] & 0xc0) != 0x80)
                return invalidAt(text, i, notUtf8);
            cp = (cp << 6) | (data[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return invalidAt(text, i, notUtf8);
        i += extra + 1;
    }
    return std::nullopt;
}

// A cheap look at flow nesting ([ and {) on the raw text, before yaml-cpp sees it: its parser
// recurses once per level, so a 100000-deep "[[[[" must never reach it. The scan knows quotes
// and comments well enough; the exact depth check happens again while the tree is built.
std::optional<Error> checkFlowDepth(const QByteArray &text, int maxDepth)
{
    int depth = 0;
    char lastSig = 0;       // the last non-blank character on this line (0: none yet)
    bool spaceSince = true; // blank seen since lastSig
    const qsizetype size = text.size();
    for (qsizetype i = 0; i < size; ++i) {
        const char c = text.at(i);
        if (c == '\n' || c == '\r') {
            lastSig = 0;
            spaceSince = true;
            continue;
        }
        if (c == ' ' || c == '\t') {
            spaceSince = true;
            continue;
        }
        const bool tokenStart = lastSig == 0 || (depth > 0 && (lastSig == '[' || lastSig == '{' || lastSig == ',')) ||
                                (spaceSince && (lastSig == ':' || lastSig == '-' || lastSig == '?')) ||
                                (depth > 0 && lastSig == ':');
        if (c == '#' && spaceSince) {
            while (i < size && text.at(i) != '\n')
                ++i;
            lastSig = 0;
            spaceSince = true;
            continue;
        }
        if (tokenStart && (c == '"' || c == '\'')) {
            for (++i; i < size; ++i) {
                const char q = text.at(i);
                if (c == '"' && q == '\\') {
                    ++i;
                } else if (q == c) {
                    if (c == '\'' && i + 1 < size && text.at(i + 1) == '\'')
                        ++i; // '' is an escaped quote inside single quotes
                    else
                        break;
                }
            }
            lastSig = c;
            spaceSince = false;
            continue;
        }
        if ((c == '[' || c == '{') && (depth > 0 || tokenStart)) {
            if (++depth > maxDepth)
                return invalidAt(text, i, u"nesting is deeper than %1 levels"_s.arg(maxDepth));
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
        lastSig = c;
        spaceSince = false;
    }
    return std::nullopt;
}

// Thrown from inside the event handler to stop yaml-cpp; caught in readYaml, never beyond.
struct StopReading {
    Error error;
};

QString pathOf(const std::vector<QString> &segments)
{
    QString path;
    for (const auto &segment : segments) {
        if (!path.isEmpty() && !segment.startsWith(u'['))
            path += u'.';
        path += segment;
    }
    return path;
}

bool isYamlNull(const std::string &value)
{
    return value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL";
}

class TreeBuilder final : public YAML::EventHandler {
public:
    explicit TreeBuilder(const ReaderLimits &limits) : m_limits(limits) {}

    std::optional<DocNode> takeRoot() { return std::move(m_root); }
    int documentLine() const { return m_docLine; }
    int documentColumn() const { return m_docColumn; }

    void OnDocumentStart(const YAML::Mark &mark) override
    {
        m_docLine = mark.line + 1;
        m_docColumn = mark.column + 1;
    }
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark &mark, YAML::anchor_t anchor) override
    {
        DocNode node = leaf(mark, DocNode::Kind::Null);
        remember(anchor, node);
        add(std::move(node));
    }
    void OnAlias(const YAML::Mark &mark, YAML::anchor_t anchor) override
    {
        // Without aliases nothing is ever expanded: an AppSpec has no use for them.
        if (!m_limits.aliases)
            stop(mark, m_limits.document.isEmpty()
                           ? u"aliases (*name) are not allowed in an AppSpec; write the value out"_s
                           : u"aliases (*name) are not allowed in a %1; write the value out"_s.arg(m_limits.document));
        const auto found = m_anchors.find(anchor);
        if (found == m_anchors.end())
            stop(mark, u"an alias names an anchor that is not defined before it"_s);
        const Anchored &anchored = found->second;
        // The copy counts where it lands: an alias of aliases of aliases ("billion laughs") ends here.
        if (int(m_stack.size()) + anchored.depth > m_limits.maxDepth)
            stop(mark, u"nesting is deeper than %1 levels once its aliases are expanded"_s.arg(m_limits.maxDepth));
        count(anchored.nodes, mark.line + 1, mark.column + 1);
        add(DocNode(anchored.node));
    }
    void OnScalar(const YAML::Mark &mark, const std::string &tag, YAML::anchor_t anchor,
                  const std::string &value) override
    {
        const bool plain = tag == "?";
        DocNode node = leaf(mark, plain && isYamlNull(value) ? DocNode::Kind::Null : DocNode::Kind::Scalar);
        if (node.kind == DocNode::Kind::Scalar) {
            node.text = QString::fromStdString(value);
            node.quoted = !plain;
        }
        remember(anchor, node);
        add(std::move(node));
    }
    void OnSequenceStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override
    {
        open(mark, DocNode::Kind::Sequence, anchor);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override
    {
        open(mark, DocNode::Kind::Map, anchor);
    }
    void OnMapEnd() override { close(); }

private:
    struct Frame {
        DocNode node;
        YAML::anchor_t anchor = 0; // the anchor the node is named by (0: none)
        bool expectingKey = true;
        QString key;
        std::vector<int> keyLines;   // the line of each key in node.entries
        bool merging = false;        // the key just read is a merge key (<<)
        std::vector<DocNode> merged; // what merge keys named, in order; applied when the mapping ends
    };
    // What an anchor named, with its size and depth, to copy for an alias.
    struct Anchored {
        DocNode node;
        int nodes = 0;
        int depth = 0;
    };

    // How many values node has, itself included, and how many levels of sequences and mappings.
    static void measure(const DocNode &node, int depth, int &nodes, int &deepest)
    {
        ++nodes;
        if (node.kind == DocNode::Kind::Sequence || node.kind == DocNode::Kind::Map)
            deepest = std::max(deepest, ++depth);
        for (const DocNode &item : node.items)
            measure(item, depth, nodes, deepest);
        for (const auto &entry : node.entries)
            measure(entry.second, depth, nodes, deepest);
    }

    // Keeps what anchor names (once the node is whole) for the aliases after it. The copy kept
    // counts against maxNodes as the tree does, so memory is bounded by the limit whatever the
    // anchors and aliases do.
    void remember(YAML::anchor_t anchor, const DocNode &node)
    {
        if (anchor == 0 || !m_limits.aliases)
            return;
        Anchored anchored{node, 0, 0};
        measure(node, 0, anchored.nodes, anchored.depth);
        count(anchored.nodes, node.line, node.column);
        m_anchors[anchor] = std::move(anchored);
    }

    void count(int nodes, int line, int column)
    {
        m_nodes += nodes;
        if (m_nodes > m_limits.maxNodes)
            throw StopReading{
                Error{ErrorCode::Invalid,
                      u"%1 has more than %2 values once its anchors and aliases are expanded"_s.arg(subject(m_limits))
                          .arg(m_limits.maxNodes),
                      lineColumn(line, column),
                      {}}};
    }

    // Puts what merge keys named into the mapping: each key it does not give itself, from the
    // first merged mapping that has it.
    void applyMerges(Frame &frame)
    {
        if (frame.merged.empty())
            return;
        // A set, not a scan per key: a merge of a large mapping stays linear.
        QSet<QString> given;
        for (const auto &entry : frame.node.entries)
            given.insert(entry.first);
        for (const DocNode &source : frame.merged) {
            for (const auto &entry : source.entries) {
                if (given.contains(entry.first))
                    continue;
                given.insert(entry.first);
                frame.node.entries.push_back(entry);
                frame.keyLines.push_back(entry.second.line);
            }
        }
        frame.merged.clear();
    }

    [[noreturn]] void stop(const YAML::Mark &mark, const QString &message, const QString &where = {})
    {
        throw StopReading{Error{
            ErrorCode::Invalid, message, where.isEmpty() ? lineColumn(mark.line + 1, mark.column + 1) : where, {}}};
    }

    DocNode leaf(const YAML::Mark &mark, DocNode::Kind kind)
    {
        if (++m_nodes > m_limits.maxNodes)
            stop(mark, u"%1 has more than %2 values"_s.arg(subject(m_limits)).arg(m_limits.maxNodes));
        DocNode node;
        node.kind = kind;
        node.line = mark.line + 1;
        node.column = mark.column + 1;
        return node;
    }

    void open(const YAML::Mark &mark, DocNode::Kind kind, YAML::anchor_t anchor)
    {
        if (!m_stack.empty() && m_stack.back().node.kind == DocNode::Kind::Map && m_stack.back().expectingKey)
            stop(mark, u"mapping keys must be plain strings, not sequences or mappings"_s);
        if (int(m_stack.size()) + 1 > m_limits.maxDepth)
            stop(mark, u"nesting is deeper than %1 levels"_s.arg(m_limits.maxDepth));
        m_stack.push_back(Frame{leaf(mark, kind), anchor});
    }

    void close()
    {
        applyMerges(m_stack.back());
        DocNode node = std::move(m_stack.back().node);
        const YAML::anchor_t anchor = m_stack.back().anchor;
        m_stack.pop_back();
        remember(anchor, node);
        add(std::move(node));
    }

    std::vector<QString> pathTo(const QString &last) const
    {
        std::vector<QString> segments;
        for (const auto &frame : m_stack) {
            if (&frame == &m_stack.back())
                break;
            if (frame.node.kind == DocNode::Kind::Map)
                segments.push_back(frame.key);
            else
                segments.push_back(u"[%1]"_s.arg(frame.node.items.size()));
        }
        segments.push_back(last);
        return segments;
    }

    void add(DocNode &&node)
    {
        if (m_stack.empty()) {
            m_root = std::move(node);
            return;
        }
        Frame &top = m_stack.back();
        if (top.node.kind == DocNode::Kind::Sequence) {
            top.node.items.push_back(std::move(node));
            return;
        }
        if (!top.expectingKey) {
            top.expectingKey = true;
            if (top.merging) {
                top.merging = false;
                merge(top, std::move(node));
                return;
            }
            top.node.entries.emplace_back(top.key, std::move(node));
            return;
        }
        if (node.kind != DocNode::Kind::Scalar) {
            throw StopReading{Error{ErrorCode::Invalid,
                                    u"mapping keys must be non-empty strings"_s,
                                    lineColumn(node.line, node.column),
                                    {}}};
        }
        if (m_limits.aliases && !node.quoted && node.text == u"<<") {
            // A merge key: what it names joins the mapping when it ends. One mapping may have
            // several, as people write them to merge two anchors.
            top.merging = true;
            top.expectingKey = false;
            return;
        }
        for (const auto &entry : top.node.entries) {
            if (entry.first == node.text) {
                const auto index = size_t(&entry - top.node.entries.data());
                throw StopReading{Error{
                    ErrorCode::Invalid,
                    u"duplicate key (given first at line %1, again at line %2, column %3)"_s.arg(top.keyLines[index])
                        .arg(node.line)
                        .arg(node.column),
                    pathOf(pathTo(node.text)),
                    {}}};
            }
        }
        top.key = node.text;
        top.keyLines.push_back(node.line);
        top.expectingKey = false;
    }

    // The value of a merge key: a mapping, or a sequence of mappings (the first wins a key).
    void merge(Frame &top, DocNode &&value)
    {
        const auto refuse = [&](const DocNode &wrong) {
            throw StopReading{
                Error{ErrorCode::Invalid,
                      u"a merge key (<<) takes a mapping or a list of mappings, usually an alias (<<: *name)"_s,
                      lineColumn(wrong.line, wrong.column),
                      {}}};
        };
        if (value.kind == DocNode::Kind::Map) {
            top.merged.push_back(std::move(value));
            return;
        }
        if (value.kind != DocNode::Kind::Sequence)
            refuse(value);
        for (DocNode &item : value.items) {
            if (item.kind != DocNode::Kind::Map)
                refuse(item);
            top.merged.push_back(std::move(item));
        }
    }

    const ReaderLimits &m_limits;
    std::vector<Frame> m_stack;
    std::optional<DocNode> m_root;
    std::unordered_map<YAML::anchor_t, Anchored> m_anchors;
    int m_nodes = 0; // the values read, copied for aliases and kept for anchors
    int m_docLine = 0;
    int m_docColumn = 0;
};

} // namespace

namespace {

// Builds the tree from JSON that QJsonDocument has already accepted, so that the walker sees
// keys in document order, numbers as written and duplicate keys as errors (QJsonDocument
// silently keeps one of them).
class JsonBuilder {
public:
    JsonBuilder(const QByteArray &text, const ReaderLimits &limits) : m_text(text), m_lines(text), m_limits(limits) {}

    DocNode parse()
    {
        skipBlank();
        return value(1);
    }

private:
    [[noreturn]] void stop(qsizetype offset, const QString &message, const QString &where = {})
    {
        const auto [line, column] = m_lines.at(offset);
        throw StopReading{Error{ErrorCode::Invalid, message, where.isEmpty() ? lineColumn(line, column) : where, {}}};
    }

    void skipBlank()
    {
        while (m_pos < m_text.size() && (m_text.at(m_pos) == ' ' || m_text.at(m_pos) == '\t' ||
                                         m_text.at(m_pos) == '\n' || m_text.at(m_pos) == '\r'))
            ++m_pos;
    }

    DocNode node(DocNode::Kind kind)
    {
        if (++m_nodes > m_limits.maxNodes)
            stop(m_pos, u"%1 has more than %2 values"_s.arg(subject(m_limits)).arg(m_limits.maxNodes));
        DocNode n;
        n.kind = kind;
        std::tie(n.line, n.column) = m_lines.at(m_pos);
        return n;
    }

    QString string()
    {
        ++m_pos; // opening quote
        QString out;
        qsizetype runStart = m_pos;
        auto flush = [&] {
            out += QString::fromUtf8(m_text.constData() + runStart, m_pos - runStart);
        };
        while (m_pos < m_text.size() && m_text.at(m_pos) != '"') {
            if (m_text.at(m_pos) != '\\') {
                ++m_pos;
                continue;
            }
            flush();
            const char e = m_text.at(m_pos + 1);
            m_pos += 2;
            switch (e) {
            case 'b':
                out += u'\b';
                break;
            case 'f':
                out += u'\f';
                break;
            case 'n':
                out += u'\n';
                break;
            case 'r':
                out += u'\r';
                break;
            case 't':
                out += u'\t';
                break;
            case 'u':
                // UTF-16 code units go in one by one, which reassembles surrogate pairs.
                out += QChar(char16_t(QByteArray(m_text.constData() + m_pos, 4).toUShort(nullptr, 16)));
                m_pos += 4;
                break;
            default:
                out += QLatin1Char(e);
                break; // " \ /
            }
            runStart = m_pos;
        }
        flush();
        ++m_pos; // closing quote
        return out;
    }

    DocNode value(int depth)
    {
        const char c = m_text.at(m_pos);
        if (c == '{' || c == '[') {
            if (depth > m_limits.maxDepth)
                stop(m_pos, u"nesting is deeper than %1 levels"_s.arg(m_limits.maxDepth));
            DocNode n = node(c == '{' ? DocNode::Kind::Map : DocNode::Kind::Sequence);
            const char close = c == '{' ? '}' : ']';
            ++m_pos;
            skipBlank();
            std::vector<int> keyLines;
            while (m_text.at(m_pos) != close) {
                if (c == '{') {
                    const qsizetype keyAt = m_pos;
                    const auto keyLine = m_lines.at(keyAt).first;
                    QString key = string();
                    for (size_t j = 0; j < n.entries.size(); ++j) {
                        if (n.entries[j].first == key) {
                            m_path.push_back(key);
                            const QString where = pathOf(m_path);
                            const auto [line, column] = m_lines.at(keyAt);
                            stop(keyAt,
                                 u"duplicate key (given first at line %1, again at line %2, column %3)"_s
                                     .arg(keyLines[j])
                                     .arg(line)
                                     .arg(column),
                                 where);
                        }
                    }
                    skipBlank();
                    ++m_pos; // ':'
                    skipBlank();
                    m_path.push_back(key);
                    DocNode v = value(depth + 1);
                    m_path.pop_back();
                    n.entries.emplace_back(std::move(key), std::move(v));
                    keyLines.push_back(keyLine);
                } else {
                    m_path.push_back(u"[%1]"_s.arg(n.items.size()));
                    n.items.push_back(value(depth + 1));
                    m_path.pop_back();
                }
                skipBlank();
                if (m_text.at(m_pos) == ',') {
                    ++m_pos;
                    skipBlank();
                }
            }
            ++m_pos;
            return n;
        }
        if (c == '"') {
            DocNode n = node(DocNode::Kind::Scalar);
            n.text = string();
            n.quoted = true;
            return n;
        }
        const qsizetype start = m_pos;
        while (m_pos < m_text.size() && !QByteArrayView(",]} \t\r\n").contains(m_text.at(m_pos)))
            ++m_pos;
        const QByteArray word = m_text.mid(start, m_pos - start);
        const qsizetype saved = m_pos;
        m_pos = start;
        DocNode n = node(word == "null" ? DocNode::Kind::Null : DocNode::Kind::Scalar);
        m_pos = saved;
        if (n.kind == DocNode::Kind::Scalar)
            n.text = QString::fromLatin1(word);
        return n;
    }

    const QByteArray &m_text;
    LineIndex m_lines;
    const ReaderLimits &m_limits;
    qsizetype m_pos = 0;
    int m_nodes = 0;
    std::vector<QString> m_path;
};

} // namespace

QString lineColumnAt(const QByteArray &text, qsizetype offset)
{
    const auto [line, column] = LineIndex(text).at(offset);
    return lineColumn(line, column);
}

Result<DocNode> readYaml(const QByteArray &text, const ReaderLimits &limits)
{
    if (auto error = checkSize(text, limits))
        return std::unexpected(*error);
    if (auto error = checkEncoding(text, limits))
        return std::unexpected(*error);
    if (auto error = checkFlowDepth(text, limits.maxDepth))
        return std::unexpected(*error);

    // yaml-cpp reports problems by throwing; nothing it throws may leave this function.
    try {
        std::istringstream in(std::string(text.constData(), size_t(text.size())));
        YAML::Parser parser(in);
        TreeBuilder builder(limits);
        if (!parser.HandleNextDocument(builder))
            return fail(ErrorCode::Invalid, u"%1 is empty"_s.arg(subject(limits)));
        std::optional<DocNode> root = builder.takeRoot();
        if (!root || root->kind == DocNode::Kind::Null)
            return fail(ErrorCode::Invalid, u"%1 is empty"_s.arg(subject(limits)));
        TreeBuilder rest(limits);
        if (parser.HandleNextDocument(rest)) {
            return fail(ErrorCode::Invalid,
                        limits.document.isEmpty() ? u"only one YAML document is allowed in a spec"_s
                                                  : u"only one YAML document is allowed in a %1"_s.arg(limits.document),
                        lineColumn(rest.documentLine(), rest.documentColumn()));
        }
        return std::move(*root);
    } catch (const StopReading &stop) {
        return std::unexpected(stop.error);
    } catch (const YAML::Exception &e) {
        const QString where = e.mark.is_null() ? QString() : lineColumn(e.mark.line + 1, e.mark.column + 1);
        return fail(ErrorCode::Invalid, QString::fromStdString(e.msg), where);
    } catch (const std::exception &e) {
        return fail(ErrorCode::Invalid, u"could not read the YAML: %1"_s.arg(QString::fromLocal8Bit(e.what())));
    }
}

Result<DocNode> readJson(const QByteArray &text, const ReaderLimits &limits)
{
    if (auto error = checkSize(text, limits))
        return std::unexpected(*error);
    if (auto error = checkFlowDepth(text, limits.maxDepth))
        return std::unexpected(*error);
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(text, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return fail(ErrorCode::Invalid, u"invalid JSON: %1"_s.arg(parseError.errorString()),
                    lineColumnAt(text, std::clamp<qsizetype>(parseError.offset, 0, text.size())));
    }
    if (document.isNull())
        return fail(ErrorCode::Invalid, u"%1 is empty"_s.arg(subject(limits)));
    try {
        JsonBuilder builder(text, limits);
        return builder.parse();
    } catch (const StopReading &stop) {
        return std::unexpected(stop.error);
    }
}

namespace {
int editDistance(const QString &a, const QString &b)
{
    const auto n = size_t(a.size());
    const auto m = size_t(b.size());
    std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
    for (size_t i = 0; i <= n; ++i)
        d[i][0] = int(i);
    for (size_t j = 0; j <= m; ++j)
        d[0][j] = int(j);
    for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
            const QChar x = a.at(qsizetype(i - 1)).toLower();
            const QChar y = b.at(qsizetype(j - 1)).toLower();
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x == y ? 0 : 1)});
            if (i > 1 && j > 1 && x == b.at(qsizetype(j - 2)).toLower() && a.at(qsizetype(i - 2)).toLower() == y)
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[n][m];
}
} // namespace

QString closestWord(const QString &word, const QStringList &candidates)
{
    QString best;
    int bestDistance = 3;
    for (const auto &candidate : candidates) {
        const int distance = editDistance(word, candidate);
        if (distance < bestDistance && distance <= std::max<qsizetype>(1, candidate.size() / 3)) {
            best = candidate;
            bestDistance = distance;
        }
    }
    return best;
}

} // namespace pando::core::detail
