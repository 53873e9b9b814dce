// The AppSpec's field rules, row by row. Most rows are written once as (path, value) pairs and
// run twice, as YAML and as JSON, so that both inputs keep the same rules and error paths.
// (Memory sizes, the validator of a built AppSpec and app names: tst_appspecvalues.)

#include "core/spec/appspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

constexpr int Ok = -1;
const QString Remove = u"~remove"_s;

using Fields = QList<QPair<QString, QString>>; // dotted path -> raw YAML value

struct Tree {
    QString key;
    QString raw;
    QList<Tree> children;
    bool leaf = true;
};

Fields base()
{
    return {{u"name"_s, u"hello"_s}, {u"source.repo"_s, u"file:///srv/git/hello.git"_s}, {u"run.port"_s, u"8080"_s}};
}

Fields merged(const Fields &overrides)
{
    Fields fields = base();
    for (const auto &[path, value] : overrides) {
        auto it = std::find_if(fields.begin(), fields.end(), [&](const auto &f) { return f.first == path; });
        if (it != fields.end())
            it->second = value;
        else
            fields.append({path, value});
    }
    fields.removeIf([](const auto &f) { return f.second == Remove; });
    return fields;
}

Tree tree(const Fields &fields)
{
    Tree root;
    root.leaf = false;
    for (const auto &[path, value] : fields) {
        Tree *node = &root;
        const QStringList parts = path.split(u'.');
        for (qsizetype i = 0; i < parts.size(); ++i) {
            auto it = std::find_if(node->children.begin(), node->children.end(),
                                   [&](const Tree &t) { return t.key == parts[i]; });
            if (it == node->children.end()) {
                node->children.append(Tree{parts[i], {}, {}, i + 1 == parts.size()});
                it = node->children.end() - 1;
            }
            node = &*it;
        }
        node->raw = value;
    }
    return root;
}

void emitYaml(const Tree &node, int indent, QByteArray &out)
{
    for (const Tree &child : node.children) {
        out += QByteArray(indent, ' ') + child.key.toUtf8() + ':';
        if (child.leaf) {
            out += ' ' + child.raw.toUtf8() + '\n';
        } else {
            out += '\n';
            emitYaml(child, indent + 2, out);
        }
    }
}

// The JSON form of a raw YAML scalar as a YAML reader would type it.
QByteArray jsonValue(const QString &raw)
{
    static const QRegularExpression number(uR"(^-?[0-9]+(\.[0-9]+)?$)"_s);
    if (raw.startsWith(u'[') || raw.startsWith(u'{') || raw.startsWith(u'"') || number.match(raw).hasMatch() ||
        raw == u"true" || raw == u"false")
        return raw.toUtf8();
    QString text = raw;
    if (raw.startsWith(u'\'') && raw.endsWith(u'\'') && raw.size() >= 2)
        text = raw.mid(1, raw.size() - 2).replace(u"''"_s, u"'"_s);
    const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return array.mid(1, array.size() - 2);
}

void emitJson(const Tree &node, QByteArray &out)
{
    out += '{';
    bool first = true;
    for (const Tree &child : node.children) {
        if (!first)
            out += ", ";
        first = false;
        out += jsonValue(u'"' + child.key + u'"') + ": ";
        if (child.leaf)
            out += jsonValue(child.raw);
        else
            emitJson(child, out);
    }
    out += '}';
}

QByteArray yamlOf(const Fields &overrides)
{
    QByteArray out;
    emitYaml(tree(merged(overrides)), 0, out);
    return out;
}

QByteArray jsonOf(const Fields &overrides)
{
    QByteArray out;
    emitJson(tree(merged(overrides)), out);
    return out;
}

void row(const char *name, const Fields &overrides, int code, const QString &where = {}, const QString &contains = {})
{
    QTest::newRow(name) << yamlOf(overrides) << jsonOf(overrides) << code << where << contains;
}

const char *fullSpec = R"(name: hello              # the app's identity
source:
  repo: file:///srv/git/hello.git
  ref: v1.2.0
build:
  dockerfile: docker/Dockerfile.prod
  context: .
  args: { VERSION: "1.2", DEBUG: false }
run:
  port: 8080
  command: ["/bin/httpd", "-f", "-p", "8080", "-h", "/www"]
  env: { GREETING: hi, WORKERS: 4 }
  resources: { memory: 256Mi, cpus: 0.5 }
health:
  path: /healthz
  timeout: 2m
  interval: 250ms
route:
  port: 18080
network:
  egress: none
labels: { environment: dev, app.kubernetes.io/name: hello }
)";

QString errorText(const Error &error)
{
    return u"[%1] %2 (hint: %3)"_s.arg(errorCodeName(error.code), error.text(), error.hint);
}

template<class R> QString why(const R &result)
{
    return result ? QString() : errorText(result.error());
}

} // namespace

class TestAppSpec : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void catalogue_data();
    void catalogue();
    void catalogueJson_data() { catalogue_data(); }
    void catalogueJson();
    void exactMessages_data();
    void exactMessages();
    void fullSpecValues();
    void defaults();
    void scalarsBecomeText();
    void toJsonShape();
    void toJsonRoundTrip();
    void imageSource_data();
    void imageSource();
    void imagePulls();
};

void TestAppSpec::catalogue_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains");
    const int Invalid = int(ErrorCode::Invalid);

    row("minimal", {}, Ok);

    // name
    row("name 63 chars", {{u"name"_s, QString(63, u'a')}}, Ok);
    row("name digits only", {{u"name"_s, u"123"_s}}, Ok);
    row("name with dash", {{u"name"_s, u"my-app-2"_s}}, Ok);
    row("name uppercase", {{u"name"_s, u"Hello"_s}}, Invalid, u"name"_s, u"lowercase"_s);
    row("name leading dash", {{u"name"_s, u"-x"_s}}, Invalid, u"name"_s, u"start or end with '-'"_s);
    row("name trailing dash", {{u"name"_s, u"x-"_s}}, Invalid, u"name"_s, u"start or end with '-'"_s);
    row("name shell ;", {{u"name"_s, u"'a;rm -rf'"_s}}, Invalid, u"name"_s, u"not \";\""_s);
    row("name shell $()", {{u"name"_s, u"'a$(x)'"_s}}, Invalid, u"name"_s, u"not \"$\""_s);
    row("name backtick", {{u"name"_s, u"'a`id`'"_s}}, Invalid, u"name"_s, u"lowercase letters, digits"_s);
    row("name underscore", {{u"name"_s, u"a_b"_s}}, Invalid, u"name"_s, u"not \"_\""_s);
    row("name dot", {{u"name"_s, u"a.b"_s}}, Invalid, u"name"_s, u"not \".\""_s);
    row("name 64 chars", {{u"name"_s, QString(64, u'a')}}, Invalid, u"name"_s, u"at most 63 characters, got 64"_s);
    row("name empty", {{u"name"_s, u"\"\""_s}}, Invalid, u"name"_s, u"must not be empty"_s);
    row("name missing", {{u"name"_s, Remove}}, Invalid, u"name"_s, u"missing required field"_s);
    row("name is a list", {{u"name"_s, u"[\"a\"]"_s}}, Invalid, u"name"_s, u"expected a string, got a list"_s);
    row("name is a mapping", {{u"name"_s, u"{\"a\": 1}"_s}}, Invalid, u"name"_s, u"expected a string, got a mapping"_s);

    // source.repo
    row("repo https", {{u"source.repo"_s, u"https://host/x.git"_s}}, Ok);
    row("repo http with port", {{u"source.repo"_s, u"http://host:8080/git/x.git"_s}}, Ok);
    row("repo scp-like", {{u"source.repo"_s, u"git@host:x.git"_s}}, Ok);
    row("repo scp-like nested path", {{u"source.repo"_s, u"git@github.com:org/x.git"_s}}, Ok);
    row("repo ssh url", {{u"source.repo"_s, u"ssh://git@host:2222/srv/x.git"_s}}, Ok);
    row("repo file", {{u"source.repo"_s, u"file:///srv/x.git"_s}}, Ok);
    row("repo https user only", {{u"source.repo"_s, u"https://deploy@host/x.git"_s}}, Ok);
    row("repo ext transport", {{u"source.repo"_s, u"'ext::sh -c touch% /tmp/pwned'"_s}}, Invalid, u"source.repo"_s,
        u"transport::address"_s);
    row("repo fd transport", {{u"source.repo"_s, u"'fd::17'"_s}}, Invalid, u"source.repo"_s, u"ext::, fd::"_s);
    row("repo transport inside", {{u"source.repo"_s, u"'https::/host/x'"_s}}, Invalid, u"source.repo"_s,
        u"transport::address"_s);
    row("repo upload-pack", {{u"source.repo"_s, u"'--upload-pack=touch /tmp/x'"_s}}, Invalid, u"source.repo"_s,
        u"must not start with '-'"_s);
    row("repo ssh option", {{u"source.repo"_s, u"'-oProxyCommand=x'"_s}}, Invalid, u"source.repo"_s,
        u"must not start with '-'"_s);
    row("repo upload-pack after url", {{u"source.repo"_s, u"'https://host/x.git --upload-pack=x'"_s}}, Invalid,
        u"source.repo"_s, u"\"--upload-pack\""_s);
    row("repo config option", {{u"source.repo"_s, u"'https://host/x.git?--config=core.sshCommand=x'"_s}}, Invalid,
        u"source.repo"_s, u"\"--config\""_s);
    row("repo ssh host option", {{u"source.repo"_s, u"'ssh://-oProxyCommand=x/y'"_s}}, Invalid, u"source.repo"_s,
        u"proxycommand"_s);
    row("repo ssh host dash", {{u"source.repo"_s, u"'ssh://-x/y.git'"_s}}, Invalid, u"source.repo"_s,
        u"must not start with '-'"_s);
    row("repo scp path dash", {{u"source.repo"_s, u"'git@host:-x.git'"_s}}, Invalid, u"source.repo"_s,
        u"must not start with '-'"_s);
    row("repo space", {{u"source.repo"_s, u"'https://host/x y.git'"_s}}, Invalid, u"source.repo"_s,
        u"whitespace or control"_s);
    row("repo encoded space", {{u"source.repo"_s, u"'https://host/x%20y.git'"_s}}, Invalid, u"source.repo"_s,
        u"whitespace or control"_s);
    row("repo encoded dash", {{u"source.repo"_s, u"'%2d%2dupload-pack=x'"_s}}, Invalid, u"source.repo"_s,
        u"must not start with '-'"_s);
    row("repo git transport", {{u"source.repo"_s, u"git://host/x.git"_s}}, Invalid, u"source.repo"_s,
        u"git:// transport is not supported"_s);
    row("repo plain path", {{u"source.repo"_s, u"/srv/git/x.git"_s}}, Invalid, u"source.repo"_s,
        u"not a repository address"_s);
    row("repo password", {{u"source.repo"_s, u"'https://user:s3cret@host/x.git'"_s}}, Invalid, u"source.repo"_s,
        u"password or token"_s);
    row("repo no host", {{u"source.repo"_s, u"'https:///x.git'"_s}}, Invalid, u"source.repo"_s, u"no host"_s);
    row("repo file with host", {{u"source.repo"_s, u"'file://evil/x.git'"_s}}, Invalid, u"source.repo"_s,
        u"local path"_s);
    row("repo empty", {{u"source.repo"_s, u"\"\""_s}}, Invalid, u"source.repo"_s, u"must not be empty"_s);
    row("repo missing", {{u"source.repo"_s, Remove}}, Invalid, u"source.repo"_s, u"missing required field"_s);
    row("repo list", {{u"source.repo"_s, u"[\"a\"]"_s}}, Invalid, u"source.repo"_s, u"expected a string"_s);
    row("source not a mapping", {{u"source.repo"_s, Remove}, {u"source"_s, u"x"_s}}, Invalid, u"source"_s,
        u"expected a mapping, got \"x\""_s);

    // source.ref
    row("ref branch", {{u"source.ref"_s, u"main"_s}}, Ok);
    row("ref tag", {{u"source.ref"_s, u"v1.2.0"_s}}, Ok);
    row("ref nested branch", {{u"source.ref"_s, u"release/2024-01"_s}}, Ok);
    row("ref commit", {{u"source.ref"_s, u"3f9c2ab4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0"_s}}, Ok);
    row("ref leading dash", {{u"source.ref"_s, u"'-x'"_s}}, Invalid, u"source.ref"_s, u"must not start with '-'"_s);
    row("ref option", {{u"source.ref"_s, u"'--upload-pack=x'"_s}}, Invalid, u"source.ref"_s,
        u"must not start with '-'"_s);
    row("ref dotdot", {{u"source.ref"_s, u"a..b"_s}}, Invalid, u"source.ref"_s, u"\"..\""_s);
    row("ref space", {{u"source.ref"_s, u"'a b'"_s}}, Invalid, u"source.ref"_s, u"whitespace"_s);
    row("ref tab", {{u"source.ref"_s, u"\"a\\tb\""_s}}, Invalid, u"source.ref"_s, u"whitespace"_s);
    row("ref empty", {{u"source.ref"_s, u"\"\""_s}}, Invalid, u"source.ref"_s, u"must not be empty"_s);
    row("ref tilde", {{u"source.ref"_s, u"'a~1'"_s}}, Invalid, u"source.ref"_s, u"'~'"_s);
    row("ref caret", {{u"source.ref"_s, u"'HEAD^'"_s}}, Invalid, u"source.ref"_s, u"'^'"_s);
    row("ref colon", {{u"source.ref"_s, u"'a:b'"_s}}, Invalid, u"source.ref"_s, u"':'"_s);
    row("ref lock", {{u"source.ref"_s, u"refs/heads/x.lock"_s}}, Invalid, u"source.ref"_s, u".lock"_s);
    row("ref leading slash", {{u"source.ref"_s, u"/x"_s}}, Invalid, u"source.ref"_s, u"'/'"_s);
    row("ref trailing slash", {{u"source.ref"_s, u"x/"_s}}, Invalid, u"source.ref"_s, u"'/'"_s);
    row("ref at", {{u"source.ref"_s, u"'@'"_s}}, Invalid, u"source.ref"_s, u"\"@\""_s);
    row("ref reflog", {{u"source.ref"_s, u"'a@{1}'"_s}}, Invalid, u"source.ref"_s, u"\"@{\""_s);
    row("ref hidden part", {{u"source.ref"_s, u"a/.hidden"_s}}, Invalid, u"source.ref"_s, u"starting with '.'"_s);
    row("ref trailing dot", {{u"source.ref"_s, u"a."_s}}, Invalid, u"source.ref"_s, u"end with '.'"_s);

    // build paths
    row("dockerfile nested", {{u"build.dockerfile"_s, u"docker/Dockerfile"_s}}, Ok);
    row("dockerfile dot slash", {{u"build.dockerfile"_s, u"./Dockerfile"_s}}, Ok);
    row("dockerfile inner dotdot", {{u"build.dockerfile"_s, u"a/../Dockerfile"_s}}, Ok);
    row("dockerfile parent", {{u"build.dockerfile"_s, u"../Dockerfile"_s}}, Invalid, u"build.dockerfile"_s,
        u"leaves the build context"_s);
    row("dockerfile absolute", {{u"build.dockerfile"_s, u"/etc/passwd"_s}}, Invalid, u"build.dockerfile"_s,
        u"is absolute"_s);
    row("dockerfile escapes", {{u"build.dockerfile"_s, u"a/../../x"_s}}, Invalid, u"build.dockerfile"_s,
        u"leaves the build context"_s);
    row("dockerfile is dir", {{u"build.dockerfile"_s, u"."_s}}, Invalid, u"build.dockerfile"_s, u"names a directory"_s);
    row("dockerfile empty", {{u"build.dockerfile"_s, u"\"\""_s}}, Invalid, u"build.dockerfile"_s,
        u"must not be empty"_s);
    row("dockerfile windows", {{u"build.dockerfile"_s, u"'C:\\x'"_s}}, Invalid, u"build.dockerfile"_s,
        u"is absolute"_s);
    row("context sub", {{u"build.context"_s, u"app"_s}}, Ok);
    row("context parent", {{u"build.context"_s, u"'..'"_s}}, Invalid, u"build.context"_s, u"leaves the repository"_s);
    row("context escapes", {{u"build.context"_s, u"sub/../.."_s}}, Invalid, u"build.context"_s,
        u"leaves the repository"_s);
    row("context absolute", {{u"build.context"_s, u"/srv"_s}}, Invalid, u"build.context"_s, u"is absolute"_s);
    row("context home", {{u"build.context"_s, u"'~/x'"_s}}, Invalid, u"build.context"_s, u"is absolute"_s);
    row("context mapping", {{u"build.context"_s, u"{\"a\": 1}"_s}}, Invalid, u"build.context"_s,
        u"expected a string, got a mapping"_s);
    row("build args", {{u"build.args"_s, u"{\"VERSION\": \"1.0\", \"N\": 3}"_s}}, Ok);
    row("build args bad key", {{u"build.args"_s, u"{\"1X\": \"a\"}"_s}}, Invalid, u"build.args.1X"_s,
        u"not a valid variable name"_s);
    row("build args list", {{u"build.args"_s, u"[\"A=1\"]"_s}}, Invalid, u"build.args"_s, u"expected a mapping"_s);
    row("build not a mapping", {{u"build"_s, u"Dockerfile"_s}}, Invalid, u"build"_s, u"expected a mapping"_s);

    // run.port
    row("port 1", {{u"run.port"_s, u"1"_s}}, Ok);
    row("port 65535", {{u"run.port"_s, u"65535"_s}}, Ok);
    row("port quoted", {{u"run.port"_s, u"\"8080\""_s}}, Ok);
    row("port 0", {{u"run.port"_s, u"0"_s}}, Invalid, u"run.port"_s, u"expected an integer 1-65535, got \"0\""_s);
    row("port 70000", {{u"run.port"_s, u"70000"_s}}, Invalid, u"run.port"_s,
        u"expected an integer 1-65535, got \"70000\""_s);
    row("port 65536", {{u"run.port"_s, u"65536"_s}}, Invalid, u"run.port"_s, u"1-65535"_s);
    row("port abc", {{u"run.port"_s, u"\"abc\""_s}}, Invalid, u"run.port"_s,
        u"expected an integer 1-65535, got \"abc\""_s);
    row("port negative", {{u"run.port"_s, u"-1"_s}}, Invalid, u"run.port"_s, u"1-65535"_s);
    row("port fraction", {{u"run.port"_s, u"80.5"_s}}, Invalid, u"run.port"_s, u"1-65535"_s);
    row("port huge", {{u"run.port"_s, u"99999999999999999999"_s}}, Invalid, u"run.port"_s, u"1-65535"_s);
    row("port list", {{u"run.port"_s, u"[8080]"_s}}, Invalid, u"run.port"_s, u"got a list"_s);
    // No port: the one the built image exposes, found when it deploys.
    row("port missing", {{u"run.port"_s, Remove}, {u"run.command"_s, u"[\"x\"]"_s}}, Ok);
    row("run missing", {{u"run.port"_s, Remove}}, Ok);
    row("run not a mapping", {{u"run.port"_s, Remove}, {u"run"_s, u"8080"_s}}, Invalid, u"run"_s,
        u"expected a mapping"_s);

    // run.command
    row("command argv", {{u"run.command"_s, u"[\"/bin/httpd\", \"-f\", \"-p\", \"8080\"]"_s}}, Ok);
    row("command empty list", {{u"run.command"_s, u"[]"_s}}, Ok);
    row("command numbers", {{u"run.command"_s, u"[\"sleep\", 5, true]"_s}}, Ok);
    row("command string", {{u"run.command"_s, u"'/bin/httpd -f -p 8080'"_s}}, Invalid, u"run.command"_s,
        u"expected an argv list"_s);
    row("command nested", {{u"run.command"_s, u"[\"a\", [\"b\"]]"_s}}, Invalid, u"run.command[1]"_s,
        u"expected a string, got a list"_s);
    row("command empty program", {{u"run.command"_s, u"[\"\", \"x\"]"_s}}, Invalid, u"run.command[0]"_s,
        u"must not be empty"_s);
    row("command mapping", {{u"run.command"_s, u"{\"sh\": \"-c\"}"_s}}, Invalid, u"run.command"_s, u"got a mapping"_s);

    // run.env
    row("env", {{u"run.env"_s, u"{\"GREETING\": \"hi\", \"_X1\": \"\"}"_s}}, Ok);
    row("env numbers and bools", {{u"run.env"_s, u"{\"PORT\": 8080, \"DEBUG\": true}"_s}}, Ok);
    row("env key digit", {{u"run.env"_s, u"{\"1BAD\": \"x\"}"_s}}, Invalid, u"run.env.1BAD"_s,
        u"not a valid variable name"_s);
    row("env key dash", {{u"run.env"_s, u"{\"A-B\": \"x\"}"_s}}, Invalid, u"run.env.A-B"_s,
        u"not a valid variable name"_s);
    row("env key equals", {{u"run.env"_s, u"{\"A=B\": \"x\"}"_s}}, Invalid, u"run.env.A=B"_s,
        u"not a valid variable name"_s);
    row("env value list", {{u"run.env"_s, u"{\"A\": [1]}"_s}}, Invalid, u"run.env.A"_s,
        u"expected a string, got a list"_s);
    row("env list", {{u"run.env"_s, u"[\"A=1\"]"_s}}, Invalid, u"run.env"_s, u"expected a mapping, got a list"_s);

    // run.resources
    row("memory Mi", {{u"run.resources.memory"_s, u"256Mi"_s}}, Ok);
    row("memory Gi", {{u"run.resources.memory"_s, u"1Gi"_s}}, Ok);
    row("memory M", {{u"run.resources.memory"_s, u"512M"_s}}, Ok);
    row("memory G", {{u"run.resources.memory"_s, u"1G"_s}}, Ok);
    row("memory Ki at floor", {{u"run.resources.memory"_s, u"6144Ki"_s}}, Ok);
    row("memory bytes", {{u"run.resources.memory"_s, u"268435456"_s}}, Ok);
    row("memory fraction", {{u"run.resources.memory"_s, u"0.5Gi"_s}}, Ok);
    row("memory 1024Ki below floor", {{u"run.resources.memory"_s, u"1024Ki"_s}}, Invalid, u"run.resources.memory"_s,
        u"below the minimum of 6Mi"_s);
    row("memory bytes below floor", {{u"run.resources.memory"_s, u"6291455"_s}}, Invalid, u"run.resources.memory"_s,
        u"below the minimum"_s);
    row("memory zero", {{u"run.resources.memory"_s, u"0"_s}}, Invalid, u"run.resources.memory"_s,
        u"below the minimum"_s);
    row("memory words", {{u"run.resources.memory"_s, u"lots"_s}}, Invalid, u"run.resources.memory"_s,
        u"expected an amount like \"256Mi\""_s);
    row("memory MB", {{u"run.resources.memory"_s, u"256MB"_s}}, Invalid, u"run.resources.memory"_s,
        u"expected an amount"_s);
    row("memory negative", {{u"run.resources.memory"_s, u"-1Gi"_s}}, Invalid, u"run.resources.memory"_s,
        u"expected an amount"_s);
    row("memory huge", {{u"run.resources.memory"_s, u"99999999Ti"_s}}, Invalid, u"run.resources.memory"_s,
        u"more than 1Pi"_s);
    row("memory bytes field", {{u"run.resources.memoryBytes"_s, u"268435456"_s}}, Ok);
    row("memory both agree",
        {{u"run.resources.memory"_s, u"256Mi"_s}, {u"run.resources.memoryBytes"_s, u"268435456"_s}}, Ok);
    row("memory both disagree", {{u"run.resources.memory"_s, u"256Mi"_s}, {u"run.resources.memoryBytes"_s, u"1000"_s}},
        Invalid, u"run.resources.memoryBytes"_s, u"does not match memory"_s);
    row("cpus half", {{u"run.resources.cpus"_s, u"0.5"_s}}, Ok);
    row("cpus 1024", {{u"run.resources.cpus"_s, u"1024"_s}}, Ok);
    row("cpus zero", {{u"run.resources.cpus"_s, u"0"_s}}, Invalid, u"run.resources.cpus"_s,
        u"greater than 0 and at most 1024"_s);
    row("cpus negative", {{u"run.resources.cpus"_s, u"-1"_s}}, Invalid, u"run.resources.cpus"_s, u"greater than 0"_s);
    row("cpus too many", {{u"run.resources.cpus"_s, u"1025"_s}}, Invalid, u"run.resources.cpus"_s, u"at most 1024"_s);
    row("cpus words", {{u"run.resources.cpus"_s, u"\"abc\""_s}}, Invalid, u"run.resources.cpus"_s, u"got \"abc\""_s);
    row("resources list", {{u"run.resources"_s, u"[1]"_s}}, Invalid, u"run.resources"_s, u"expected a mapping"_s);

    // health
    row("health path", {{u"health.path"_s, u"/healthz"_s}}, Ok);
    row("health path relative", {{u"health.path"_s, u"healthz"_s}}, Invalid, u"health.path"_s,
        u"must start with '/'"_s);
    row("health path space", {{u"health.path"_s, u"'/a b'"_s}}, Invalid, u"health.path"_s, u"whitespace"_s);
    row("health timeout seconds", {{u"health.timeout"_s, u"30s"_s}}, Ok);
    row("health timeout minutes", {{u"health.timeout"_s, u"2m"_s}}, Ok);
    row("health timeout compound", {{u"health.timeout"_s, u"1m30s"_s}}, Ok);
    row("health timeout integer", {{u"health.timeout"_s, u"45"_s}}, Ok);
    row("health timeout hour", {{u"health.timeout"_s, u"1h"_s}}, Ok);
    row("health timeout zero", {{u"health.timeout"_s, u"0"_s}}, Invalid, u"health.timeout"_s, u"from 1s to 1h"_s);
    row("health timeout too long", {{u"health.timeout"_s, u"2h"_s}}, Invalid, u"health.timeout"_s, u"from 1s to 1h"_s);
    row("health timeout words", {{u"health.timeout"_s, u"soon"_s}}, Invalid, u"health.timeout"_s,
        u"expected a duration like \"30s\""_s);
    row("health timeout unit only", {{u"health.timeout"_s, u"s"_s}}, Invalid, u"health.timeout"_s, u"duration"_s);
    row("health interval", {{u"health.interval"_s, u"500ms"_s}}, Ok);
    row("health interval too short", {{u"health.interval"_s, u"1ms"_s}}, Invalid, u"health.interval"_s,
        u"from 10ms to 60s"_s);

    // health while serving, and what is restarted
    row("health every", {{u"health.every"_s, u"200ms"_s}}, Ok);
    row("health every too short", {{u"health.every"_s, u"50ms"_s}}, Invalid, u"health.every"_s, u"from 100ms to 1h"_s);
    row("health failures", {{u"health.failures"_s, u"5"_s}}, Ok);
    row("health failures zero", {{u"health.failures"_s, u"0"_s}}, Invalid, u"health.failures"_s, u"an integer 1-100"_s);
    row("health failures words", {{u"health.failures"_s, u"many"_s}}, Invalid, u"health.failures"_s, u"got \"many\""_s);
    row("restart never", {{u"run.restart"_s, u"never"_s}}, Ok);
    row("restart on-failure", {{u"run.restart"_s, u"on-failure"_s}}, Ok);
    row("restart typo", {{u"run.restart"_s, u"onfailure"_s}}, Invalid, u"run.restart"_s,
        u"expected \"always\", \"on-failure\" or \"never\""_s);

    // route
    row("route port", {{u"route.port"_s, u"18080"_s}}, Ok);
    row("route port 0", {{u"route.port"_s, u"0"_s}}, Invalid, u"route.port"_s, u"1-65535"_s);
    row("route port 70000", {{u"route.port"_s, u"70000"_s}}, Invalid, u"route.port"_s,
        u"expected an integer 1-65535, got \"70000\""_s);
    row("route port text", {{u"route.port"_s, u"http"_s}}, Invalid, u"route.port"_s, u"got \"http\""_s);

    // network
    row("egress none", {{u"network.egress"_s, u"none"_s}}, Ok);
    row("egress all", {{u"network.egress"_s, u"all"_s}}, Ok);
    row("egress other word", {{u"network.egress"_s, u"open"_s}}, Invalid, u"network.egress"_s,
        u"expected \"all\" or \"none\", got \"open\""_s);
    row("egress uppercase", {{u"network.egress"_s, u"None"_s}}, Invalid, u"network.egress"_s, u"got \"None\""_s);
    row("egress boolean", {{u"network.egress"_s, u"false"_s}}, Invalid, u"network.egress"_s, u"got \"false\""_s);
    row("egress list", {{u"network.egress"_s, u"[\"none\"]"_s}}, Invalid, u"network.egress"_s, u"got a list"_s);
    row("network list", {{u"network"_s, u"[\"none\"]"_s}}, Invalid, u"network"_s, u"expected a mapping"_s);
    row("unknown network", {{u"network.egres"_s, u"none"_s}}, Invalid, u"network.egres"_s,
        u"unknown field; did you mean \"egress\"?"_s);
    row("unknown network rule", {{u"network.ingress"_s, u"none"_s}}, Invalid, u"network.ingress"_s, u"unknown field"_s);

    // labels
    row("labels", {{u"labels"_s, u"{\"environment\": \"dev\", \"app.kubernetes.io/name\": \"x\"}"_s}}, Ok);
    row("labels reserved", {{u"labels"_s, u"{\"dev.pando.app\": \"other\"}"_s}}, Invalid, u"labels.dev.pando.app"_s,
        u"reserved for Pando"_s);
    row("labels bad key", {{u"labels"_s, u"{\"-x\": \"y\"}"_s}}, Invalid, u"labels.-x"_s, u"not a valid label key"_s);
    row("labels list", {{u"labels"_s, u"[\"a\"]"_s}}, Invalid, u"labels"_s, u"expected a mapping"_s);

    // unknown fields at several depths
    row("unknown top", {{u"nmae"_s, u"x"_s}}, Invalid, u"nmae"_s, u"unknown field; did you mean \"name\"?"_s);
    row("unknown top unlike", {{u"zzz"_s, u"1"_s}}, Invalid, u"zzz"_s, u"unknown field"_s);
    row("unknown run", {{u"run.prot"_s, u"8080"_s}}, Invalid, u"run.prot"_s,
        u"unknown field; did you mean \"port\"?"_s);
    row("unknown run without port", {{u"run.port"_s, Remove}, {u"run.prot"_s, u"8080"_s}}, Invalid, u"run.prot"_s,
        u"did you mean \"port\"?"_s);
    row("unknown source", {{u"source.branch"_s, u"main"_s}}, Invalid, u"source.branch"_s, u"unknown field"_s);
    row("unknown build", {{u"build.dockerFile"_s, u"D"_s}}, Invalid, u"build.dockerFile"_s,
        u"did you mean \"dockerfile\"?"_s);
    row("unknown resources", {{u"run.resources.memroy"_s, u"1Gi"_s}}, Invalid, u"run.resources.memroy"_s,
        u"did you mean \"memory\"?"_s);
    row("unknown health", {{u"health.timeout_s"_s, u"5"_s}}, Invalid, u"health.timeout_s"_s,
        u"did you mean \"timeout\"?"_s);
    row("unknown route", {{u"route.host"_s, u"x"_s}}, Invalid, u"route.host"_s, u"unknown field"_s);
}

static void checkResult(const Result<AppSpec> &result, int code, const QString &where, const QString &contains)
{
    if (code == Ok) {
        QVERIFY2(result.has_value(), qPrintable(why(result)));
        return;
    }
    QVERIFY2(!result.has_value(), "parsed, but an error was expected");
    QCOMPARE(int(result.error().code), code);
    QCOMPARE(result.error().where, where);
    QVERIFY2(result.error().message.contains(contains), qPrintable(why(result)));
}

void TestAppSpec::catalogue()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    checkResult(parseAppSpec(yaml), code, where, contains);
}

void TestAppSpec::catalogueJson()
{
    QFETCH(QByteArray, json);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    checkResult(parseAppSpecJson(json), code, where, contains);
}

void TestAppSpec::exactMessages_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QString>("text");
    QTest::newRow("port abc") << yamlOf({{u"run.port"_s, u"abc"_s}})
                              << u"run.port: expected an integer 1-65535, got \"abc\""_s;
    QTest::newRow("did you mean") << yamlOf({{u"run.prot"_s, u"8080"_s}})
                                  << u"run.prot: unknown field; did you mean \"port\"?"_s;
    QTest::newRow("missing name") << yamlOf({{u"name"_s, Remove}})
                                  << u"name: missing required field (the app's name, a DNS label like \"hello\")"_s;
    QTest::newRow("dockerfile parent")
        << yamlOf({{u"build.dockerfile"_s, u"../Dockerfile"_s}})
        << u"build.dockerfile: \"../Dockerfile\" leaves the build context; it must stay inside it"_s;
    QTest::newRow("egress word") << yamlOf({{u"network.egress"_s, u"None"_s}})
                                 << u"network.egress: expected \"all\" or \"none\", got \"None\""_s;
}

void TestAppSpec::exactMessages()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QString, text);
    const auto result = parseAppSpec(yaml);
    QVERIFY(!result);
    QCOMPARE(result.error().text(), text);
    if (QByteArray(QTest::currentDataTag()) == "egress word")
        QCOMPARE(result.error().hint, u"did you mean \"none\"?"_s);
}

void TestAppSpec::fullSpecValues()
{
    const auto result = parseAppSpec(fullSpec);
    QVERIFY2(result, qPrintable(why(result)));
    const AppSpec &spec = *result;
    QCOMPARE(spec.name, u"hello"_s);
    QCOMPARE(spec.source.repo, u"file:///srv/git/hello.git"_s);
    QCOMPARE(spec.source.ref, u"v1.2.0"_s);
    QCOMPARE(spec.build.dockerfile, u"docker/Dockerfile.prod"_s);
    QCOMPARE(spec.build.context, u"."_s);
    QCOMPARE(spec.build.args, (QMap<QString, QString>{{u"VERSION"_s, u"1.2"_s}, {u"DEBUG"_s, u"false"_s}}));
    QCOMPARE(spec.run.port, 8080);
    QCOMPARE(spec.run.command, (QStringList{u"/bin/httpd"_s, u"-f"_s, u"-p"_s, u"8080"_s, u"-h"_s, u"/www"_s}));
    QCOMPARE(spec.run.env, (QMap<QString, QString>{{u"GREETING"_s, u"hi"_s}, {u"WORKERS"_s, u"4"_s}}));
    QCOMPARE(spec.run.memoryBytes, 256LL * 1024 * 1024);
    QCOMPARE(spec.run.cpus, 0.5);
    QCOMPARE(spec.health.path, u"/healthz"_s);
    QCOMPARE(spec.health.timeoutSeconds, 120);
    QCOMPARE(spec.health.intervalMs, 250);
    QCOMPARE(spec.route.port, 18080);
    QCOMPARE(spec.network.egress, AppSpec::Egress::None);
    QCOMPARE(spec.labels,
             (QMap<QString, QString>{{u"environment"_s, u"dev"_s}, {u"app.kubernetes.io/name"_s, u"hello"_s}}));
}

void TestAppSpec::defaults()
{
    const auto result = parseAppSpec(yamlOf({}));
    QVERIFY2(result, qPrintable(why(result)));
    QCOMPARE(result->source.ref, u"main"_s);
    QCOMPARE(result->build.context, u"."_s);
    QCOMPARE(result->build.dockerfile, u"Dockerfile"_s);
    QVERIFY(result->run.command.isEmpty());
    QCOMPARE(result->run.memoryBytes, 0);
    QCOMPARE(result->run.cpus, 0.0);
    QCOMPARE(result->health.path, u"/"_s);
    QCOMPARE(result->health.timeoutSeconds, 60);
    QCOMPARE(result->health.intervalMs, 100);
    QCOMPARE(result->route.port, 0);
    QCOMPARE(result->network.egress, AppSpec::Egress::All);

    // Empty sections are the same as absent ones.
    const auto empty = parseAppSpec("name: a\nsource: {repo: 'git@h:x'}\nrun: {port: 1}\nbuild:\nhealth: ~\n"
                                    "route: {}\nnetwork:\nlabels:\n");
    QVERIFY2(empty, qPrintable(why(empty)));
    QCOMPARE(empty->build.dockerfile, u"Dockerfile"_s);
    QCOMPARE(empty->network.egress, AppSpec::Egress::All);
}

void TestAppSpec::scalarsBecomeText()
{
    for (const auto &input : {yamlOf({{u"run.env"_s, u"{\"PORT\": 8080, \"DEBUG\": true, \"RATIO\": 0.25}"_s}}),
                              jsonOf({{u"run.env"_s, u"{\"PORT\": 8080, \"DEBUG\": true, \"RATIO\": 0.25}"_s}})}) {
        const auto result = input.startsWith('{') ? parseAppSpecJson(input) : parseAppSpec(input);
        QVERIFY2(result, qPrintable(why(result)));
        QCOMPARE(result->run.env.value(u"PORT"_s), u"8080"_s);
        QCOMPARE(result->run.env.value(u"DEBUG"_s), u"true"_s);
        QCOMPARE(result->run.env.value(u"RATIO"_s), u"0.25"_s);
    }
}

void TestAppSpec::toJsonShape()
{
    const auto result = parseAppSpec(fullSpec);
    QVERIFY(result);
    const QJsonObject json = result->toJson();
    QCOMPARE(json.value(u"name"_s).toString(), u"hello"_s);
    QCOMPARE(json[u"source"_s][u"ref"_s].toString(), u"v1.2.0"_s);
    QCOMPARE(json[u"run"_s][u"port"_s].toInt(), 8080);
    QCOMPARE(json[u"run"_s][u"resources"_s][u"memory"_s].toString(), u"256Mi"_s);
    QCOMPARE(json[u"run"_s][u"resources"_s][u"memoryBytes"_s].toInteger(), 268435456);
    QCOMPARE(json[u"run"_s][u"resources"_s][u"cpus"_s].toDouble(), 0.5);
    QCOMPARE(json[u"run"_s][u"command"_s].toArray().size(), 6);
    QCOMPARE(json[u"health"_s][u"timeout"_s].toString(), u"120s"_s);
    QCOMPARE(json[u"health"_s][u"interval"_s].toString(), u"250ms"_s);
    QCOMPARE(json[u"route"_s][u"port"_s].toInt(), 18080);
    QCOMPARE(json[u"network"_s][u"egress"_s].toString(), u"none"_s);
    const auto minimal = parseAppSpec(yamlOf({}));
    QVERIFY2(minimal, qPrintable(why(minimal)));
    QCOMPARE(minimal->toJson()[u"network"_s][u"egress"_s].toString(), u"all"_s);
    QCOMPARE(json[u"labels"_s][u"environment"_s].toString(), u"dev"_s);
}

void TestAppSpec::toJsonRoundTrip()
{
    for (const QByteArray &yaml :
         {QByteArray(fullSpec), yamlOf({}), yamlOf({{u"run.resources.memory"_s, u"6291457"_s}}),
          yamlOf({{u"run.resources.memory"_s, u"1.5Gi"_s}})}) {
        const auto first = parseAppSpec(yaml);
        QVERIFY2(first, qPrintable(why(first)));
        const QByteArray json = QJsonDocument(first->toJson()).toJson();
        const auto second = parseAppSpecJson(json);
        QVERIFY2(second, qPrintable(why(second) + u"\n"_s + QString::fromUtf8(json)));
        QCOMPARE(second->toJson(), first->toJson());
        QCOMPARE(second->run.memoryBytes, first->run.memoryBytes);
    }
}

void TestAppSpec::imageSource_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("message");
    const QByteArray head = "name: web\nsource:\n  image: nginx:1.27\n";
    QTest::newRow("image and repo") << head + "  repo: https://git.example.com/a/b.git\n"
                                    << u"source.repo"_s << u"a source is a git repository or an image, not both"_s;
    QTest::newRow("ref") << head + "  ref: main\n" << u"source.ref"_s << u"an image source has no ref"_s;
    QTest::newRow("connection name")
        << head + "  connection: Private_Registry\n"
        << u"source.connection"_s
        << u"\"Private_Registry\" is not a connection name: lowercase letters, digits and '-', "
           "1-63 characters, not starting or ending with '-'"_s;
    QTest::newRow("autodeploy") << head + "  autodeploy: push\n"
                                << u"source.autodeploy"_s << u"an image source has no autodeploy"_s;
    QTest::newRow("build") << head + "build:\n  dockerfile: Dockerfile\n"
                           << u"build"_s << u"an image source is deployed as it is, not built"_s;
    QTest::newRow("preview") << head + "preview:\n  ttl: 1d\n"
                             << u"preview"_s << u"previews are built from pull requests; an image source has none"_s;
    QTest::newRow("pull word") << head + "  pull: sometimes\n"
                               << u"source.pull"_s << u"expected auto, always or missing, got \"sometimes\""_s;
    QTest::newRow("pull of a repo") << QByteArray("name: web\nsource:\n  repo: https://git.example.com/a/b.git\n"
                                                  "  pull: always\n")
                                    << u"source.pull"_s << u"only an image source is pulled"_s;
    QTest::newRow("not a reference") << QByteArray("name: web\nsource:\n  image: Nginx Latest\n") << u"source.image"_s
                                     << u"\"Nginx Latest\" is not an image reference"_s;
    QTest::newRow("neither") << QByteArray("name: web\nsource:\n  ref: main\n") << u"source.repo"_s
                             << u"missing required field (the git repository to deploy from, or source.image to "
                                "deploy an image)"_s;
}

// source.image: an image deployed as it is; nothing that reads or builds a repository with it.
void TestAppSpec::imageSource()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QString, where);
    QFETCH(QString, message);
    const auto result = parseAppSpec(yaml);
    QVERIFY(!result);
    QCOMPARE(result.error().code, ErrorCode::Invalid);
    QVERIFY2(result.error().where.startsWith(where), qPrintable(result.error().text()));
    // The message ends with where in the file it was found: "(line 4, column 9)".
    QVERIFY2(result.error().message == message || result.error().message.startsWith(message + u" (line "_s),
             qPrintable(result.error().message));
}

// When a deploy asks the registry: a tag of latest (or none) always, any other tag or a digest
// only when the engine lacks it, unless source.pull says; JSON keeps it, and reads back the same.
void TestAppSpec::imagePulls()
{
    const auto pulls = [](const QByteArray &image, const QByteArray &pull = {}) -> std::optional<bool> {
        auto spec = parseAppSpec("name: web\nsource:\n  image: " + image + "\n" +
                                 (pull.isEmpty() ? QByteArray() : "  pull: " + pull + "\n"));
        if (!spec)
            return std::nullopt;
        return spec->source.pullsAlways();
    };
    QCOMPARE(pulls("nginx"), true);
    QCOMPARE(pulls("nginx:latest"), true);
    QCOMPARE(pulls("registry.example.com:5000/team/app"), true); // the port is not a tag
    QCOMPARE(pulls("nginx:1.27"), false);
    QCOMPARE(pulls("registry.example.com:5000/team/app:2"), false);
    QCOMPARE(pulls("nginx@sha256:" + QByteArray(64, 'a')), false);
    QCOMPARE(pulls("nginx:1.27", "always"), true);
    QCOMPARE(pulls("nginx:latest", "missing"), false);
    QCOMPARE(pulls("nginx:latest", "auto"), true);

    auto spec = parseAppSpec("name: web\nsource:\n  image: ghcr.io/acme/web:2.1\n  pull: always\nrun:\n  port: 80\n");
    QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
    QVERIFY(spec->source.isImage());
    QVERIFY(spec->source.repo.isEmpty());
    const QJsonObject source = spec->toJson().value(u"source"_s).toObject();
    QCOMPARE(source, QJsonObject({{u"image"_s, u"ghcr.io/acme/web:2.1"_s}, {u"pull"_s, u"always"_s}}));
    auto again = parseAppSpecJson(QJsonDocument(spec->toJson()).toJson());
    QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
    QCOMPARE(again->source.image, spec->source.image);
    QCOMPARE(again->source.pull, AppSpec::Source::Pull::Always);

    // A private image names the registry connection it is pulled through (or one is chosen).
    auto connected = parseAppSpec("name: web\nsource:\n  image: ghcr.io/acme/web:2.1\n  connection: ghcr\n");
    QVERIFY2(connected, qPrintable(connected ? QString() : connected.error().text()));
    QCOMPARE(connected->source.connection, u"ghcr"_s);
    QCOMPARE(connected->toJson().value(u"source"_s).toObject().value(u"connection"_s), QJsonValue(u"ghcr"_s));
    QCOMPARE(parseAppSpecJson(QJsonDocument(connected->toJson()).toJson())->source.connection, u"ghcr"_s);
}

QTEST_GUILESS_MAIN(TestAppSpec)
#include "tst_appspec.moc"
