// The reading module's limits and error positions: malformed YAML and JSON, aliases, duplicate
// keys, nesting and size. Everything goes through parseAppSpec/parseAppSpecJson, the way callers
// reach it, plus a few direct reads of the tree.

#include "core/spec/appspec.h"
#include "core/spec/yamlreader.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

constexpr int Ok = -1;
const QByteArray Valid = "name: hello\nsource:\n  repo: file:///srv/git/hello.git\nrun:\n  port: 8080\n";

QByteArray nestedBlockMaps(int depth)
{
    QByteArray out;
    for (int i = 0; i < depth; ++i)
        out += QByteArray(2 * i, ' ') + "k" + QByteArray::number(i) + ":\n";
    out += QByteArray(2 * depth, ' ') + "v: 1\n";
    return out;
}

QByteArray aliasBomb()
{
    QByteArray out = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    const char *names = "abcdefghi";
    for (int i = 1; i < 9; ++i) {
        out += QByteArray(1, names[i]) + ": &" + names[i] + " [";
        for (int j = 0; j < 9; ++j)
            out += QByteArray(j ? ",*" : "*") + names[i - 1];
        out += "]\n";
    }
    return out;
}

// The tree as one line, keys sorted (a merge adds its keys after the mapping's own), quoted
// scalars marked: two documents that mean the same print the same.
QString shape(const detail::DocNode &node)
{
    switch (node.kind) {
    case detail::DocNode::Kind::Null:
        return u"~"_s;
    case detail::DocNode::Kind::Scalar:
        return node.quoted ? u'"' + node.text + u'"' : node.text;
    case detail::DocNode::Kind::Sequence: {
        QStringList items;
        for (const auto &item : node.items)
            items << shape(item);
        return u'[' + items.join(u", "_s) + u']';
    }
    case detail::DocNode::Kind::Map: {
        QStringList entries;
        for (const auto &[key, value] : node.entries)
            entries << key + u": "_s + shape(value);
        entries.sort();
        return u'{' + entries.join(u", "_s) + u'}';
    }
    }
    return {};
}

detail::ReaderLimits withAliases()
{
    detail::ReaderLimits limits;
    limits.document = u"pipeline"_s;
    limits.aliases = true;
    return limits;
}

QString errorText(const Error &error)
{
    return u"[%1] %2"_s.arg(errorCodeName(error.code), error.text());
}

template<class R> QString why(const R &result)
{
    return result ? QString() : errorText(result.error());
}

} // namespace

class TestYamlReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void yaml_data();
    void yaml();
    void json_data();
    void json();
    void sizeLimitBoundary();
    void treeShape();
    void quotedScalarsAreMarked();
    void aliasesExpand_data();
    void aliasesExpand();
    void aliasesRefused_data();
    void aliasesRefused();
};

void TestYamlReader::yaml_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains");
    const int Invalid = int(ErrorCode::Invalid);

    QTest::newRow("valid") << Valid << Ok << QString() << QString();
    QTest::newRow("valid flow style") << QByteArray("{name: a, source: {repo: 'git@h:x'}, run: {port: 1}}") << Ok
                                      << QString() << QString();
    QTest::newRow("valid with bom and crlf")
        << QByteArray("\xef\xbb\xbfname: a\r\nsource:\r\n  repo: file:///x\r\nrun:\r\n  port: 1\r\n") << Ok << QString()
        << QString();
    QTest::newRow("anchor without alias")
        << QByteArray("name: &n a\nsource: {repo: 'git@h:x'}\nrun: {port: 1}\n") << Ok << QString() << QString();

    // Malformed YAML: the position is yaml-cpp's, made 1-based.
    QTest::newRow("unclosed flow sequence") << QByteArray("name: hello\nrun:\n  command: [\"a\", \"b\"\n") << Invalid
                                            << u"line 4, column 1"_s << u"end of sequence flow"_s;
    QTest::newRow("unclosed flow map") << QByteArray("name: hello\nsource: {repo: x\n") << Invalid
                                       << u"line 3, column 1"_s << u"end of map flow"_s;
    QTest::newRow("text after quoted scalar")
        << QByteArray("name: 'a' b\n") << Invalid << u"line 1, column 11"_s << u"end of map not found"_s;
    QTest::newRow("extra flow end") << QByteArray("name: [a, b]]\n") << Invalid << u"line 1, column 13"_s
                                    << u"illegal flow end"_s;
    QTest::newRow("list item after map") << QByteArray("a: b\n- c\n") << Invalid << u"line 2, column 1"_s
                                         << u"end of map not found"_s;
    QTest::newRow("bad indentation") << QByteArray("name: hello\nrun:\n  port: 1\n bad: 2\n") << Invalid
                                     << u"line 4, column 2"_s << u"end of map not found"_s;
    QTest::newRow("value after scalar") << QByteArray("name: hello: world\n") << Invalid << u"line 1, column 12"_s
                                        << u"illegal map value"_s;
    QTest::newRow("unknown escape") << QByteArray("name: \"a\\qb\"\n") << Invalid << u"line 1, column 11"_s
                                    << u"unknown escape character: q"_s;
    QTest::newRow("tab indentation") << QByteArray("run:\n\tport: 1\n") << Invalid << u"line 2, column 6"_s
                                     << u"illegal map value"_s;

    // Structure the reader refuses.
    QTest::newRow("alias") << QByteArray("name: &n hello\nlabels: {x: *n}\n") << Invalid << u"line 2, column 13"_s
                           << u"aliases"_s;
    QTest::newRow("merge key") << QByteArray("base: &b {port: 1}\nrun:\n  <<: *b\n") << Invalid << u"line 3, column 7"_s
                               << u"aliases"_s;
    QTest::newRow("alias bomb") << aliasBomb() << Invalid << u"line 2, column 8"_s << u"aliases"_s;
    QTest::newRow("duplicate top key") << (Valid + "name: other\n") << Invalid << u"name"_s
                                       << u"duplicate key (given first at line 1, again at line 6, column 1)"_s;
    QTest::newRow("duplicate nested key")
        << QByteArray("name: a\nrun:\n  port: 1\n  port: 2\n") << Invalid << u"run.port"_s << u"duplicate key"_s;
    QTest::newRow("duplicate env key") << (Valid + "  env: {A: 1, B: 2, A: 3}\n") << Invalid << u"run.env.A"_s
                                       << u"duplicate key"_s;
    QTest::newRow("duplicate key in list item")
        << QByteArray("labels: [{a: 1}, {b: 1, b: 2}]\n") << Invalid << u"labels[1].b"_s << u"duplicate key"_s;
    QTest::newRow("list as key") << QByteArray("? [a]\n: b\n") << Invalid << u"line 1, column 3"_s << u"mapping keys"_s;
    QTest::newRow("null key") << QByteArray("name: a\n: b\n") << Invalid << u"line 2, column 1"_s << u"mapping keys"_s;
    QTest::newRow("two documents") << (Valid + "---\nname: b\n") << Invalid << u"line 6, column 1"_s
                                   << u"only one YAML document"_s;
    QTest::newRow("empty") << QByteArray() << Invalid << QString() << u"empty"_s;
    QTest::newRow("comments only") << QByteArray("# nothing\n\n# here\n") << Invalid << QString() << u"empty"_s;
    QTest::newRow("null document") << QByteArray("~\n") << Invalid << QString() << u"empty"_s;
    QTest::newRow("top-level list") << QByteArray("- a\n- b\n") << Invalid << u"line 1, column 1"_s
                                    << u"must be a mapping"_s;
    QTest::newRow("top-level scalar") << QByteArray("hello\n") << Invalid << u"line 1, column 1"_s
                                      << u"must be a mapping"_s;

    // Encoding.
    QTest::newRow("invalid utf-8") << (Valid + "labels: {a: \"\xc3\x28\"}\n") << Invalid << u"line 6, column 14"_s
                                   << u"not valid UTF-8"_s;
    QTest::newRow("overlong utf-8") << QByteArray("name: \xc0\xaf\n") << Invalid << u"line 1, column 7"_s
                                    << u"not valid UTF-8"_s;
    QTest::newRow("nul byte") << QByteArray("name: a\0b\n", 10) << Invalid << u"line 1, column 8"_s
                              << u"control character 0x00"_s;
    QTest::newRow("escape byte") << QByteArray("name: a\x1b[31m\n") << Invalid << u"line 1, column 8"_s
                                 << u"control character 0x1b"_s;

    // Nesting: 64 levels are read, 65 are not; very deep input must not reach yaml-cpp's recursion.
    QTest::newRow("flow 64 deep") << (QByteArray(64, '[') + QByteArray(64, ']')) << Invalid << u"line 1, column 1"_s
                                  << u"must be a mapping"_s;
    QTest::newRow("flow 65 deep") << (QByteArray(65, '[') + QByteArray(65, ']')) << Invalid << u"line 1, column 65"_s
                                  << u"deeper than 64"_s;
    QTest::newRow("flow 65 deep in value") << ("labels: " + QByteArray(65, '[') + QByteArray(65, ']')) << Invalid
                                           << u"line 1, column 73"_s << u"deeper than 64"_s;
    QTest::newRow("flow 100000 deep") << QByteArray(100000, '[') << Invalid << u"line 1, column 65"_s
                                      << u"deeper than 64"_s;
    QTest::newRow("flow maps 100000 deep")
        << QByteArray(100000, '{') << Invalid << u"line 1, column 65"_s << u"deeper than 64"_s;
    QTest::newRow("flow mixed 100000 deep")
        << ("a: " + QByteArray(50000, '[').replace("[[", "[{a: ")) << Invalid << QString() << u"deeper than 64"_s;
    QTest::newRow("brackets inside quotes")
        << ("name: a\nlabels: {x: \"" + QByteArray(500, '[') + "\"}\n" + "source: {repo: 'git@h:x'}\nrun: {port: 1}\n")
        << Ok << QString() << QString();
    QTest::newRow("brackets inside plain scalar")
        << (Valid + "labels:\n  x: a" + QByteArray(100, '[').replace('[', "b[") + "\n") << Ok << QString() << QString();
    QTest::newRow("brackets inside comment")
        << (Valid + "# " + QByteArray(500, '[') + "\n") << Ok << QString() << QString();
    QTest::newRow("block maps 64 deep") << nestedBlockMaps(63) << Invalid << u"k0"_s << u"unknown field"_s;
    QTest::newRow("block maps 65 deep") << nestedBlockMaps(64) << Invalid << u"line 65, column 129"_s
                                        << u"deeper than 64"_s;
    QTest::newRow("block sequences 50000 deep")
        << (QByteArray(50000 * 2, ' ').replace("  ", "- ") + "x\n") << Invalid << QString() << u"deeper than 64"_s;

    // Size: checked before any parsing.
    QTest::newRow("over 1 MiB") << (Valid + "# " + QByteArray(MaxSpecBytes, 'x') + "\n") << int(ErrorCode::TooLarge)
                                << QString() << u"at most 1048576 bytes"_s;
    QTest::newRow("over 1 MiB of brackets")
        << QByteArray(MaxSpecBytes + 1, '[') << int(ErrorCode::TooLarge) << QString() << QString();
}

void TestYamlReader::yaml()
{
    QFETCH(QByteArray, input);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    const auto result = parseAppSpec(input);
    if (code == Ok) {
        QVERIFY2(result, qPrintable(why(result)));
        return;
    }
    QVERIFY2(!result, "parsed, but an error was expected");
    QVERIFY2(int(result.error().code) == code, qPrintable(why(result)));
    if (!where.isNull())
        QCOMPARE(result.error().where, where);
    QVERIFY2(result.error().message.contains(contains), qPrintable(why(result)));
}

void TestYamlReader::json_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains");
    const int Invalid = int(ErrorCode::Invalid);
    const QByteArray valid = R"({"name": "hello", "source": {"repo": "file:///srv/x.git"}, "run": {"port": 8080}})";

    QTest::newRow("valid") << valid << Ok << QString() << QString();
    QTest::newRow("valid multiline")
        << QByteArray("{\n  \"name\": \"a\",\n  \"source\": {\"repo\": \"git@h:x\"},\n"
                      "  \"run\": {\"port\": 1, \"command\": [\"a\\/b\", \"\\u00e9\\ud83d\\ude00\"]}\n}")
        << Ok << QString() << QString();
    QTest::newRow("missing comma") << QByteArray("{\n  \"name\": \"a\"\n  \"run\": 1\n}") << Invalid
                                   << u"line 3, column 4"_s << u"invalid JSON"_s;
    QTest::newRow("trailing garbage") << QByteArray("{\"name\": \"a\"} x") << Invalid << QString() << u"invalid JSON"_s;
    QTest::newRow("top-level list") << QByteArray("[1]") << Invalid << u"line 1, column 1"_s << u"must be a mapping"_s;
    QTest::newRow("duplicate key") << QByteArray("{\"name\": \"a\",\n \"name\": \"b\"}") << Invalid << u"name"_s
                                   << u"duplicate key (given first at line 1, again at line 2, column 2)"_s;
    QTest::newRow("duplicate nested key")
        << QByteArray(R"({"name": "a", "run": {"env": {"A": "1", "A": "2"}, "port": 1}})") << Invalid << u"run.env.A"_s
        << u"duplicate key"_s;
    QTest::newRow("duplicate escaped key")
        << QByteArray(R"({"name": "a", "n\u0061me": "b"})") << Invalid << u"name"_s << u"duplicate key"_s;
    QTest::newRow("unknown field") << QByteArray(R"({"name": "a", "source": {"repo": "git@h:x"}, "run": {"prot": 1}})")
                                   << Invalid << u"run.prot"_s << u"did you mean \"port\"?"_s;
    QTest::newRow("depth 65") << (QByteArray(65, '[') + QByteArray(65, ']')) << Invalid << u"line 1, column 65"_s
                              << u"deeper than 64"_s;
    QTest::newRow("depth 100000") << (QByteArray(100000, '[') + QByteArray(100000, ']')) << Invalid
                                  << u"line 1, column 65"_s << u"deeper than 64"_s;
    QTest::newRow("over 1 MiB") << (QByteArray("{\"name\": \"") + QByteArray(MaxSpecBytes, 'a') + "\"}")
                                << int(ErrorCode::TooLarge) << QString() << QString();
    QTest::newRow("empty") << QByteArray() << Invalid << QString() << QString();
}

void TestYamlReader::json()
{
    QFETCH(QByteArray, input);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    const auto result = parseAppSpecJson(input);
    if (code == Ok) {
        QVERIFY2(result, qPrintable(why(result)));
        return;
    }
    QVERIFY2(!result, "parsed, but an error was expected");
    QVERIFY2(int(result.error().code) == code, qPrintable(why(result)));
    if (!where.isNull())
        QCOMPARE(result.error().where, where);
    QVERIFY2(result.error().message.contains(contains), qPrintable(why(result)));
}

void TestYamlReader::sizeLimitBoundary()
{
    // Exactly 1 MiB is read; one byte more is not.
    QByteArray padded = Valid + "# ";
    padded += QByteArray(MaxSpecBytes - padded.size() - 1, 'x') + "\n";
    QCOMPARE(padded.size(), MaxSpecBytes);
    const auto atLimit = parseAppSpec(padded);
    QVERIFY2(atLimit, qPrintable(why(atLimit)));
    const auto over = parseAppSpec(padded + "\n");
    QVERIFY(!over);
    QCOMPARE(over.error().code, ErrorCode::TooLarge);
}

void TestYamlReader::treeShape()
{
    const auto tree = detail::readYaml("b: 1\na: [x, {c: ~}]\nq: 'quoted'\n");
    QVERIFY2(tree, qPrintable(why(tree)));
    QCOMPARE(tree->kind, detail::DocNode::Kind::Map);
    QCOMPARE(tree->entries.size(), size_t(3));
    QCOMPARE(tree->entries[0].first, u"b"_s); // document order, not sorted
    QCOMPARE(tree->entries[1].second.kind, detail::DocNode::Kind::Sequence);
    QCOMPARE(tree->entries[1].second.items[1].value(u"c"_s)->kind, detail::DocNode::Kind::Null);
    QCOMPARE(tree->entries[1].second.line, 2);
    QCOMPARE(tree->entries[1].second.column, 4);

    const auto json = detail::readJson(R"({"b": 1, "a": ["x", {"c": null}], "q": "quoted"})");
    QVERIFY2(json, qPrintable(why(json)));
    QCOMPARE(json->entries[0].first, u"b"_s);
    QCOMPARE(json->entries[0].second.text, u"1"_s);
    QCOMPARE(json->entries[1].second.items[1].value(u"c"_s)->kind, detail::DocNode::Kind::Null);
}

void TestYamlReader::quotedScalarsAreMarked()
{
    const auto tree = detail::readYaml("a: 1\nb: '1'\nc: \"1\"\nd: !!str 1\n");
    QVERIFY(tree);
    QVERIFY(!tree->value(u"a"_s)->quoted);
    QVERIFY(tree->value(u"b"_s)->quoted);
    QVERIFY(tree->value(u"c"_s)->quoted);
    QVERIFY(tree->value(u"d"_s)->quoted);
    const auto limited = detail::readYaml("a: [1, 2, 3, 4]\n", {1024, 64, 4});
    QVERIFY(!limited);
    QVERIFY2(limited.error().message.contains(u"more than 4 values"_s), qPrintable(why(limited)));
}

// Anchors, aliases and merge keys where a reader allows them (pipelines, task and vars files):
// each document reads as the same document written out, as the YAML 1.1 merge-key type and
// Concourse's fly read it.
void TestYamlReader::aliasesExpand_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("writtenOut");

    QTest::newRow("scalar") << QByteArray("a: &v hello\nb: *v\n") << QByteArray("a: hello\nb: hello\n");
    QTest::newRow("quoted scalar stays quoted") << QByteArray("a: &v '1'\nb: *v\n") << QByteArray("a: '1'\nb: '1'\n");
    QTest::newRow("null") << QByteArray("a: &v ~\nb: *v\n") << QByteArray("a: ~\nb: ~\n");
    QTest::newRow("a step used twice")
        << QByteArray("shared: &notify {put: chat, params: {text: failed}}\n"
                      "jobs:\n- name: a\n  on_failure: *notify\n- name: b\n  on_failure: *notify\n")
        << QByteArray("shared: {put: chat, params: {text: failed}}\n"
                      "jobs:\n- name: a\n  on_failure: {put: chat, params: {text: failed}}\n"
                      "- name: b\n  on_failure: {put: chat, params: {text: failed}}\n");
    QTest::newRow("anchor on a sequence")
        << QByteArray("tags: &t [linux, big]\nagain: *t\n") << QByteArray("tags: [linux, big]\nagain: [linux, big]\n");
    QTest::newRow("anchor inside a list item")
        << QByteArray("plan:\n- &get {get: repo, trigger: true}\n- task: t\n- *get\n")
        << QByteArray("plan:\n- {get: repo, trigger: true}\n- task: t\n- {get: repo, trigger: true}\n");
    QTest::newRow("merge: own keys win") << QByteArray("git: &git {uri: 'https://example.com/r.git', branch: main}\n"
                                                       "source:\n  <<: *git\n  branch: develop\n")
                                         << QByteArray("git: {uri: 'https://example.com/r.git', branch: main}\n"
                                                       "source: {uri: 'https://example.com/r.git', branch: develop}\n");
    QTest::newRow("merge: own key before the merge wins too")
        << QByteArray("d: &d {a: 1, b: 2}\nm: {b: 3, <<: *d}\n") << QByteArray("d: {a: 1, b: 2}\nm: {a: 1, b: 3}\n");
    QTest::newRow("merge: a list, the first wins")
        << QByteArray("x: &x {a: 1, b: 1}\ny: &y {b: 2, c: 2}\nm:\n  <<: [*x, *y]\n  d: 4\n")
        << QByteArray("x: {a: 1, b: 1}\ny: {b: 2, c: 2}\nm: {a: 1, b: 1, c: 2, d: 4}\n");
    QTest::newRow("merge: two merge keys in one mapping")
        << QByteArray("server: &s {SERVER: a, USER: u}\ntarget: &t {TARGET: b}\n"
                      "params:\n  <<: *s\n  PATH_A: /a\n  <<: *t\n  PATH_B: /b\n")
        << QByteArray("server: {SERVER: a, USER: u}\ntarget: {TARGET: b}\n"
                      "params: {SERVER: a, USER: u, PATH_A: /a, TARGET: b, PATH_B: /b}\n");
    QTest::newRow("merge: an anchor that merges")
        << QByteArray("a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n")
        << QByteArray("a: {x: 1}\nb: {x: 1, y: 2}\nc: {x: 1, y: 2, z: 3}\n");
    QTest::newRow("merge: written inline") << QByteArray("m: {<<: {a: 1}, b: 2}\n") << QByteArray("m: {a: 1, b: 2}\n");
    QTest::newRow("a quoted << is a key like any other")
        << QByteArray("d: &d {a: 1}\nm: {'<<': *d}\n") << QByteArray("d: {a: 1}\nm: {'<<': {a: 1}}\n");
    QTest::newRow("an anchor defined again names the later value")
        << QByteArray("a: &v one\nb: *v\nc: &v two\nd: *v\n") << QByteArray("a: one\nb: one\nc: two\nd: two\n");
}

void TestYamlReader::aliasesExpand()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, writtenOut);
    const auto read = detail::readYaml(input, withAliases());
    QVERIFY2(read, qPrintable(why(read)));
    const auto expected = detail::readYaml(writtenOut);
    QVERIFY2(expected, qPrintable(why(expected)));
    QCOMPARE(shape(*read), shape(*expected));
}

void TestYamlReader::aliasesRefused_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains");

    QTest::newRow("an alias before its anchor")
        << QByteArray("a: *v\nb: &v x\n") << u"line 1, column 4"_s << u"anchor"_s;
    QTest::newRow("an alias of no anchor") << QByteArray("a: *nope\n") << u"line 1, column 4"_s << u"anchor"_s;
    QTest::newRow("billion laughs") << aliasBomb() << u"line 5, column 4"_s
                                    << u"more than 100000 values once its anchors and aliases are expanded"_s;
    QTest::newRow("merge of a scalar") << QByteArray("a: &v x\nm: {<<: *v}\n") << u"line 1, column 4"_s
                                       << u"a merge key (<<) takes a mapping or a list of mappings"_s;
    QTest::newRow("merge of a list with a scalar")
        << QByteArray("a: &v {k: 1}\nm:\n  <<: [*v, 3]\n") << u"line 3, column 12"_s << u"a merge key (<<)"_s;
    QTest::newRow("a key twice beside a merge")
        << QByteArray("d: &d {a: 1}\nm:\n  <<: *d\n  b: 1\n  b: 2\n") << u"m.b"_s << u"duplicate key"_s;
    QTest::newRow("deeper than 64 once expanded")
        << ("deep: &d " + QByteArray(40, '[') + QByteArray(40, ']') + "\nuse: " + QByteArray(30, '[') + "*d" +
            QByteArray(30, ']') + "\n")
        << u"line 2, column 36"_s << u"deeper than 64 levels once its aliases are expanded"_s;
}

void TestYamlReader::aliasesRefused()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    const auto read = detail::readYaml(input, withAliases());
    QVERIFY2(!read, "read, but an error was expected");
    QCOMPARE(read.error().code, ErrorCode::Invalid);
    QCOMPARE(read.error().where, where);
    QVERIFY2(read.error().message.contains(contains), qPrintable(why(read)));
}

QTEST_GUILESS_MAIN(TestYamlReader)
#include "tst_yamlreader.moc"
