// `((var))` interpolation on the YAML value tree: vars and secrets, fields of map values, whole
// values replaced by lists, undefined vars with the path they were used at, keys left alone,
// and the secret names (and values, for masking) reported.

#include "core/pipelines/template/interpolate.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

namespace {

detail::DocNode tree(const QByteArray &yaml)
{
    auto node = detail::readYaml(yaml);
    return node ? *node : detail::DocNode{};
}

const detail::DocNode *walk(const detail::DocNode &root, const QStringList &path)
{
    const detail::DocNode *node = &root;
    for (const auto &key : path) {
        bool isIndex = false;
        const int index = key.toInt(&isIndex);
        node = isIndex ? &node->items.at(size_t(index)) : node->value(key);
        if (!node)
            return nullptr;
    }
    return node;
}

InterpolationSources sources()
{
    InterpolationSources s;
    s.vars = *readVarsFile(
        "branch: main\nport: 8080\ntags: [a, b]\ndb: {host: db.local, port: 5432}\n\"dotted.name\": {\"a.b\": q}\n");
    s.secrets = [](const QString &name) -> std::optional<QString> {
        if (name == u"token")
            return u"t0k3n"_s;
        if (name == u"aws")
            return u"{\"key\": \"AKIA\", \"secret\": \"shh\"}"_s;
        if (name == u"branch")
            return u"from-secrets"_s;
        return std::nullopt;
    };
    return s;
}

} // namespace

class TestInterpolate : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void resolves_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected");
        QTest::newRow("whole value from vars") << QByteArray("a: ((branch))\n") << u"a"_s << u"main"_s;
        QTest::newRow("vars win over secrets") << QByteArray("a: ((branch))\n") << u"a"_s << u"main"_s;
        QTest::newRow("forced secret source") << QByteArray("a: ((secrets:branch))\n") << u"a"_s << u"from-secrets"_s;
        QTest::newRow("forced vars source") << QByteArray("a: ((vars:port))\n") << u"a"_s << u"8080"_s;
        QTest::newRow("inside text") << QByteArray("a: \"refs/((branch))/x:((port))\"\n") << u"a"_s
                                     << u"refs/main/x:8080"_s;
        QTest::newRow("blanks inside") << QByteArray("a: (( branch ))\n") << u"a"_s << u"main"_s;
        QTest::newRow("nested field of a var")
            << QByteArray("a: ((db.host)):((db.port))\n") << u"a"_s << u"db.local:5432"_s;
        QTest::newRow("secret") << QByteArray("a: {b: [x, \"Bearer ((token))\"]}\n") << u"a.b.1"_s << u"Bearer t0k3n"_s;
        QTest::newRow("field of a JSON secret") << QByteArray("a: ((aws.secret))\n") << u"a"_s << u"shh"_s;
        QTest::newRow("quoted segments hold dots")
            << QByteArray("a: ((\"dotted.name\".\"a.b\"))\n") << u"a"_s << u"q"_s;
        QTest::newRow("quoted segment after a source")
            << QByteArray("a: ((vars:\"dotted.name\".\"a.b\"))\n") << u"a"_s << u"q"_s;
        QTest::newRow("no placeholder") << QByteArray("a: (not one)\n") << u"a"_s << u"(not one)"_s;
    }

    void resolves()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, path);
        QFETCH(QString, expected);
        auto root = tree(yaml);
        const auto report = interpolate(root, sources());
        QVERIFY2(report, qPrintable(report ? QString() : report.error().text()));
        const auto *node = walk(root, path.split(u'.'));
        QVERIFY(node);
        QCOMPARE(node->text, expected);
    }

    void wholeValueTakesTheVarsType()
    {
        auto root = tree("tags: ((tags))\ndb: ((db))\n");
        QVERIFY(interpolate(root, sources()));
        QCOMPARE(root.value(u"tags"_s)->kind, detail::DocNode::Kind::Sequence);
        QCOMPARE(root.value(u"tags"_s)->items.size(), size_t(2));
        QCOMPARE(root.value(u"db"_s)->value(u"host"_s)->text, u"db.local"_s);
    }

    void errors_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("undefined") << QByteArray("jobs:\n- plan:\n  - params: {X: ((missing))}\n")
                                   << u"jobs[0].plan[0].params.X"_s << u"undefined var \"missing\""_s;
        QTest::newRow("undefined inside text")
            << QByteArray("a: {b: \"x-((nope.f))\"}\n") << u"a.b"_s << u"undefined var \"nope.f\""_s;
        QTest::newRow("missing field") << QByteArray("a: ((db.user))\n") << u"a"_s
                                       << u"var \"db\" has no field \"user\""_s;
        QTest::newRow("missing secret field")
            << QByteArray("a: ((aws.region))\n") << u"a"_s << u"var \"aws\" has no field \"region\""_s;
        QTest::newRow("list inside text") << QByteArray("a: \"x ((tags))\"\n") << u"a"_s << u"is a list"_s;
        QTest::newRow("bad name") << QByteArray("a: ((a b))\n") << u"a"_s << u"invalid var reference"_s;
        QTest::newRow("unclosed quote") << QByteArray("a: ((\"dotted.name))\n") << u"a"_s
                                        << u"a double quote is not closed"_s;
        QTest::newRow("empty segment") << QByteArray("a: ((db..host))\n") << u"a"_s << u"invalid var reference"_s;
        QTest::newRow("unknown source") << QByteArray("a: ((vault:x))\n") << u"a"_s
                                        << u"unknown var source \"vault\""_s;
        QTest::newRow("secret only, not in secrets")
            << QByteArray("a: ((secrets:port))\n") << u"a"_s << u"not found in the secrets"_s;
    }

    void errors()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto root = tree(yaml);
        const auto report = interpolate(root, sources());
        QVERIFY(!report);
        QCOMPARE(report.error().code, ErrorCode::Invalid);
        QCOMPARE(report.error().where, where);
        QVERIFY2(report.error().message.contains(message), qPrintable(report.error().text()));
    }

    void keysAreNeverInterpolated()
    {
        auto root = tree("((branch)): ((branch))\n");
        QVERIFY(interpolate(root, sources()));
        QCOMPARE(root.entries.front().first, u"((branch))"_s);
        QCOMPARE(root.entries.front().second.text, u"main"_s);
    }

    void reportsNamesAndSecretValues()
    {
        auto root = tree("a: ((token))\nb: ((token))-((branch))\nc: ((aws.key))\n");
        const auto report = interpolate(root, sources());
        QVERIFY(report);
        QCOMPARE(report->secretsUsed, (QStringList{u"aws"_s, u"token"_s}));
        QCOMPARE(report->varsUsed, QStringList{u"branch"_s});
        QVERIFY(report->secretValues.contains(u"t0k3n"_s));
        QVERIFY(report->secretValues.contains(u"AKIA"_s));
    }

    void substitutedValuesAreToldAlsoWhenTheWalkFails()
    {
        // A run masks what it is told, and its error too: the values must reach it even when a
        // later placeholder fails the parse (the report is then never made).
        auto s = sources();
        QStringList told;
        s.substituted = [&told](const QString &value) {
            told.append(value);
        };
        auto root = tree("a: ((aws.secret))\nb: \"Bearer ((token))\"\nc: ((missing))\n");
        const auto report = interpolate(root, s);
        QVERIFY(!report);
        QVERIFY2(told.contains(u"shh"_s), qPrintable(told.join(u", "_s)));   // the field a placeholder picked
        QVERIFY2(told.contains(u"t0k3n"_s), qPrintable(told.join(u", "_s))); // a whole value inside text
        QVERIFY(!told.contains(u"AKIA"_s)); // a field nothing used stays unmasked, like any text
        // Placeholder mode substitutes nothing, so tells nothing.
        told.clear();
        s.secretMode = InterpolationSources::SecretMode::Placeholder;
        auto kept = tree("a: ((aws.secret))\n");
        QVERIFY(interpolate(kept, s));
        QVERIFY(told.isEmpty());
    }

    void placeholderModeKeepsSecretsOut()
    {
        auto s = sources();
        s.secretMode = InterpolationSources::SecretMode::Placeholder;
        auto root = tree("a: \"Bearer ((token))\"\nb: ((branch))\n");
        const auto report = interpolate(root, s);
        QVERIFY(report);
        QCOMPARE(root.value(u"a"_s)->text, u"Bearer ((token))"_s);
        QCOMPARE(root.value(u"b"_s)->text, u"main"_s);
        QCOMPARE(report->secretsUsed, QStringList{u"token"_s});
        QVERIFY(report->secretValues.isEmpty());
        // A secret that does not exist is still an error in placeholder mode.
        auto missing = tree("a: ((secrets:nope))\n");
        QVERIFY(!interpolate(missing, s));
    }

    void aSecretNotGrantedIsRefusedWithItsReason()
    {
        // An install-wide secret the pipeline may not read: the lookup has no value, and the
        // refusal, not "undefined var", is the answer, at the path it was used.
        auto s = sources();
        s.secretRefusal = [](const QString &name) -> std::optional<Error> {
            if (name == u"other"_s)
                return Error{ErrorCode::Invalid, u"the install-wide secret \"other\" is not granted"_s, {}, u"grant"_s};
            return std::nullopt;
        };
        auto root = tree("a: {b: \"x-((other))\"}\n");
        auto refused = interpolate(root, s);
        QVERIFY(!refused);
        QCOMPARE(refused.error().message, u"the install-wide secret \"other\" is not granted"_s);
        QCOMPARE(refused.error().where, u"a.b"_s);
        QCOMPARE(refused.error().hint, u"grant"_s);
        // A var of the name wins, and a secret the lookup has is never asked about.
        auto fine = tree("a: ((token))\nb: ((vars:branch))\n");
        QVERIFY(interpolate(fine, s));
        // Placeholder mode (a set) refuses it the same way.
        s.secretMode = InterpolationSources::SecretMode::Placeholder;
        auto again = tree("a: ((other))\n");
        QVERIFY(!interpolate(again, s));
    }

    void allowUndefinedLeavesThemAndLists()
    {
        InterpolationSources s;
        s.allowUndefined = true;
        auto root = tree("a: ((x))\nb: pre-((y.z))\n");
        const auto report = interpolate(root, s);
        QVERIFY(report);
        QCOMPARE(report->undefined, (QStringList{u"x"_s, u"y.z"_s}));
        QCOMPARE(root.value(u"b"_s)->text, u"pre-((y.z))"_s);
    }

    void expansionIsCapped()
    {
        // A billion laughs without aliases: a 100 KiB var used 200 times would make 20 MiB.
        QByteArray item(1000, 'x');
        QByteArray vars = "big: [";
        for (int i = 0; i < 100; ++i)
            vars += (i ? ", " : "") + item;
        vars += "]\n";
        QByteArray yaml = "uses:\n";
        for (int i = 0; i < 200; ++i)
            yaml += "  - ((big))\n";
        auto root = tree(yaml);
        InterpolationSources s;
        s.vars = *readVarsFile(vars);
        const auto report = interpolate(root, s);
        QVERIFY(!report);
        QCOMPARE(report.error().code, ErrorCode::TooLarge);
        QVERIFY2(report.error().message.contains(u"expansion limit"_s), qPrintable(report.error().text()));
        QVERIFY2(report.error().where.startsWith(u"uses["_s), qPrintable(report.error().text()));
        // The same var in a few places is fine.
        auto few = tree("uses: [((big)), ((big))]\n");
        QVERIFY(interpolate(few, s));
        // Inside text, each use counts too.
        QByteArray inText = "uses:\n";
        const QByteArray line(100 * 1000, 'y');
        InterpolationSources t;
        t.vars = *readVarsFile("line: " + line + "\n");
        for (int i = 0; i < 60; ++i)
            inText += "  - \"a ((line)) b\"\n";
        auto text = tree(inText);
        QCOMPARE(interpolate(text, t).error().code, ErrorCode::TooLarge);
    }

    void expansionDepthIsCapped()
    {
        // A var nested 40 deep, used 40 deep: the result would nest 80 levels.
        QByteArray nested = "deep: ";
        for (int i = 0; i < 40; ++i)
            nested += "[";
        nested += "x";
        for (int i = 0; i < 40; ++i)
            nested += "]";
        QByteArray yaml = "a: ";
        for (int i = 0; i < 40; ++i)
            yaml += "[";
        yaml += "((deep))";
        for (int i = 0; i < 40; ++i)
            yaml += "]";
        auto root = tree(yaml + "\n");
        InterpolationSources s;
        s.vars = *readVarsFile(nested + "\n");
        const auto report = interpolate(root, s);
        QVERIFY(!report);
        QVERIFY2(report.error().message.contains(u"levels deep"_s), qPrintable(report.error().text()));
    }

    void varsFile()
    {
        QVERIFY(!readVarsFile("- a\n- b\n"));
        // As fly reads a vars file: an alias is a copy.
        const auto aliased = readVarsFile("a: &x {host: h}\nb: *x\n");
        QVERIFY2(aliased, qPrintable(aliased ? QString() : aliased.error().text()));
        QCOMPARE(aliased->value(u"b"_s)->value(u"host"_s)->text, u"h"_s);
        QVERIFY(!readVarsFile("a: 1\na: 2\n"));
        QCOMPARE(placeholderNames(u"((a)) and (( b.c ))"_s), (QStringList{u"a"_s, u"b.c"_s}));
    }
};

QTEST_GUILESS_MAIN(TestInterpolate)
#include "tst_interpolate.moc"
