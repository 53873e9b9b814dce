// `pando pipelines format` (fly format-pipeline): every pipeline of the corpus formats to a file
// that reads back as the same pipeline (or is refused at the same place) and formats to itself;
// the layout it promises (a step's kind first, settings before a plan, the user's maps in their
// order, anchors expanded, comments gone, quoted text kept a string, scripts as blocks); and the
// errors of what is no pipeline file.

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/format.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/spec/yamlreader.h"
#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core::pipelines;

namespace {

// What `pando pipelines set` makes of text: the pipeline's canonical JSON, or where it is refused.
QString meaningOf(const QByteArray &text)
{
    InterpolationSources sources;
    sources.allowUndefined = true;
    sources.secretMode = InterpolationSources::SecretMode::Placeholder;
    const auto parsed = parsePipeline(text, sources);
    return parsed ? QString::fromUtf8(canonicalJson(toJson(*parsed))) : u"refused at "_s + parsed.error().where;
}

// Whether two documents hold the same values: maps the same keys (in any order), sequences the
// same items in order, scalars the same text, and a quoted one quoted (a block is a string too).
bool sameDocument(const core::detail::DocNode &a, const core::detail::DocNode &b, QString *where,
                  const QString &at = {})
{
    using Kind = core::detail::DocNode::Kind;
    auto differ = [&](const QString &why) {
        *where = at + u": "_s + why;
        return false;
    };
    if (a.kind != b.kind)
        return differ(u"another kind"_s);
    if (a.kind == Kind::Scalar) {
        if (a.text != b.text)
            return differ(u"\"%1\" became \"%2\""_s.arg(a.text, b.text));
        if (a.quoted != b.quoted && !a.text.contains(u'\n'))
            return differ(u"quoted or not"_s);
        return true;
    }
    if (a.items.size() != b.items.size() || a.entries.size() != b.entries.size())
        return differ(u"another size"_s);
    for (size_t i = 0; i < a.items.size(); ++i)
        if (!sameDocument(a.items[i], b.items[i], where, u"%1[%2]"_s.arg(at).arg(i)))
            return false;
    for (const auto &[key, value] : a.entries) {
        const core::detail::DocNode *other = b.value(key);
        if (!other)
            return differ(key + u" is gone"_s);
        if (!sameDocument(value, *other, where, at + u'.' + key))
            return false;
    }
    return true;
}

// Whether formatted holds what original does, value for value.
void compareDocuments(const QByteArray &original, const QByteArray &formatted, const QString &name)
{
    core::detail::ReaderLimits limits;
    limits.aliases = true;
    const auto a = core::detail::readYaml(original, limits);
    const auto b = core::detail::readYaml(formatted, limits);
    QVERIFY2(a && b, qPrintable(name));
    QString where;
    QVERIFY2(sameDocument(*a, *b, &where), qPrintable(name + u" "_s + where));
}

} // namespace

class TestPipelineFormat : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theCorpusReadsBackTheSame()
    {
        const QString dir = test::sourceDir() + u"/tests/corpus/pipelines"_s;
        const QStringList files = QDir(dir).entryList({u"*.yml"_s}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 20, "the corpus is missing");
        for (const QString &name : files) {
            QFile file(dir + u'/' + name);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray original = file.readAll();
            const auto formatted = formatPipeline(original);
            QVERIFY2(formatted, qPrintable(name + u": "_s + (formatted ? QString() : formatted.error().text())));
            QCOMPARE(meaningOf(*formatted), meaningOf(original));
            const auto again = formatPipeline(*formatted);
            QVERIFY(again);
            QVERIFY2(*again == *formatted, qPrintable(name + u" does not format to itself"_s));
            compareDocuments(original, *formatted, name);
            if (QTest::currentTestFailed())
                return;
        }
    }

    void writesTheLayoutItPromises()
    {
        const QByteArray text = "# the team's pipeline\n"
                                "jobs:\n"
                                "- plan:\n"
                                "  - config: &cfg\n"
                                "      run: {args: [\"-c\", \"echo one\\necho two\\n\"], path: sh}\n"
                                "      platform: linux\n"
                                "      image_resource: {source: {tag: \"1.36\", repository: busybox}, type: "
                                "registry-image}\n"
                                "    task: unit  # the tests\n"
                                "    ensure: {task: clean, config: *cfg}\n"
                                "  - trigger: true\n"
                                "    get: repo\n"
                                "  name: test\n"
                                "  serial: true\n"
                                "  x_note: kept\n"
                                "resources:\n"
                                "- source: {uri: \"https://example.com/r.git\", branch: main, depth: \"true\"}\n"
                                "  type: git\n"
                                "  name: repo\n";
        const auto formatted = formatPipeline(text);
        QVERIFY2(formatted, qPrintable(formatted ? QString() : formatted.error().text()));
        const QString out = QString::fromUtf8(*formatted);
        QCOMPARE(meaningOf(*formatted), meaningOf(text));
        compareDocuments(text, *formatted, u"the example"_s);
        QVERIFY2(out.startsWith(u"resources:\n"_s), qPrintable(out));             // before jobs
        QVERIFY2(!out.contains(u'#') || out.contains(u"\"#"_s), qPrintable(out)); // comments dropped
        QVERIFY2(!out.contains(u'&') && !out.contains(u'*'), qPrintable(out));    // anchors expanded
        // A step's kind first, then what Concourse documents for it; hooks last.
        QVERIFY2(out.indexOf(u"- task: unit"_s) >= 0 && out.indexOf(u"- task: unit"_s) < out.indexOf(u"config:"_s),
                 qPrintable(out));
        QVERIFY2(out.indexOf(u"- get: repo"_s) >= 0, qPrintable(out));
        QVERIFY2(out.indexOf(u"config:"_s) < out.indexOf(u"ensure:"_s), qPrintable(out));
        // A job's name and settings before its plan; keys the order does not know after.
        QVERIFY2(out.indexOf(u"- name: test"_s) < out.indexOf(u"serial: true"_s) &&
                     out.indexOf(u"serial: true"_s) < out.indexOf(u"plan:"_s) &&
                     out.indexOf(u"plan:"_s) < out.indexOf(u"x_note: kept"_s),
                 qPrintable(out));
        // The user's source keeps its order; quoted text stays a string; a script is a block.
        QVERIFY2(out.indexOf(u"uri:"_s) < out.indexOf(u"branch: main"_s) &&
                     out.indexOf(u"branch: main"_s) < out.indexOf(u"depth: \"true\""_s),
                 qPrintable(out));
        QVERIFY2(out.contains(u"tag: \"1.36\""_s), qPrintable(out));
        QVERIFY2(out.contains(u"- |\n"_s) && out.contains(u"echo one\n"_s), qPrintable(out));
        QVERIFY2(out.indexOf(u"platform: linux"_s) < out.indexOf(u"image_resource:"_s) &&
                     out.indexOf(u"image_resource:"_s) < out.indexOf(u"run:"_s) &&
                     out.indexOf(u"path: sh"_s) < out.indexOf(u"args:"_s),
                 qPrintable(out));
    }

    // Text a block would change (no final line break, several, leading blanks) stays quoted.
    void textWithLineBreaksIsKeptExactly()
    {
        const QByteArray text = "jobs: []\nx_notes:\n- \"two\\nlines\"\n- \"ends\\n\\n\"\n- \"  indented\\nmore\\n\"\n"
                                "- |\n  a script\n  of two lines\n";
        const auto formatted = formatPipeline(text);
        QVERIFY2(formatted, qPrintable(formatted ? QString() : formatted.error().text()));
        compareDocuments(text, *formatted, u"the notes"_s);
        QVERIFY2(formatted->contains("\"two\\nlines\""), formatted->constData());
        QVERIFY2(formatted->contains("- |\n"), formatted->constData());
    }

    void whatIsNoPipelineFileIsSaid()
    {
        auto list = formatPipeline("- a\n- b\n");
        QVERIFY(!list);
        QVERIFY2(list.error().message.contains(u"mapping"_s), qPrintable(list.error().text()));
        auto broken = formatPipeline("jobs:\n  - name: [a\n");
        QVERIFY(!broken);
        QVERIFY2(broken.error().where.contains(u"line"_s), qPrintable(broken.error().text()));
        auto laughs = formatPipeline("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                                     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
                                     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e]\n");
        QVERIFY2(!laughs, "a billion laughs is refused, not expanded");
    }
};

QTEST_GUILESS_MAIN(TestPipelineFormat)
#include "tst_pipelineformat.moc"
