// The registry-image resource type against a real registry (Debian's docker-registry): an image
// Docker pushed found by its tag's digest and fetched as a root file system and as a tarball that
// Docker loads; images pushed from `docker save` tarballs; semver tags with variants, constraints and
// pre-releases; layers with whiteouts and entries that try to leave the root; HTTP Basic and the
// bearer-token login Docker Hub and GHCR use; and the errors bad source and params get.

#include "adapters/kit/dockerapi/dockerclient.h"
#include "adapters/kit/registrykit/registryclient.h"
#include "adapters/resource/registryimage/registryimageresourcetype.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/registry.h"
#include "tests/support/tarfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSemaphore>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>

using namespace Qt::StringLiterals;
using namespace pando;
using adapters::Version;
using adapters::registryimage::RegistryImageResourceType;
using test::ImageRegistry;
using test::TarEntry;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString sha256(const QByteArray &data)
{
    return u"sha256:"_s + QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

TarEntry file(const QByteArray &name, const QByteArray &content)
{
    return TarEntry{name, TarEntry::Type::File, content, {}};
}
TarEntry dir(const QByteArray &name)
{
    return TarEntry{name, TarEntry::Type::Directory, {}, {}};
}
TarEntry softlink(const QByteArray &name, const QByteArray &target)
{
    return TarEntry{name, TarEntry::Type::Symlink, {}, target};
}
TarEntry hardlink(const QByteArray &name, const QByteArray &target)
{
    return TarEntry{name, TarEntry::Type::Hardlink, {}, target};
}

// A `docker save` tarball of layers (each a list of entries) at path, its config naming env.
bool saveTarball(const QString &path, const QList<QList<TarEntry>> &layers, const QStringList &env = {u"PATH=/bin"_s})
{
    QTemporaryDir work;
    QList<TarEntry> outer;
    QJsonArray diffIds;
    QJsonArray names;
    for (qsizetype i = 0; i < layers.size(); ++i) {
        const QString layerFile = work.filePath(u"layer%1.tar"_s.arg(i));
        if (!test::writeTar(layerFile, layers[i]))
            return false;
        const QByteArray bytes = readAll(layerFile);
        diffIds.append(sha256(bytes));
        const QByteArray name = "layer" + QByteArray::number(i) + "/layer.tar";
        outer.append(file(name, bytes));
        names.append(QString::fromLatin1(name));
    }
    const QJsonObject config{
        {u"architecture"_s, u"amd64"_s},
        {u"os"_s, u"linux"_s},
        {u"config"_s, QJsonObject{{u"Env"_s, QJsonArray::fromStringList(env)}, {u"User"_s, u"1000"_s}}},
        {u"rootfs"_s, QJsonObject{{u"type"_s, u"layers"_s}, {u"diff_ids"_s, diffIds}}}};
    const QByteArray configBytes = QJsonDocument(config).toJson(QJsonDocument::Compact);
    outer.append(file("config.json", configBytes));
    const QJsonArray manifest{
        QJsonObject{{u"Config"_s, u"config.json"_s}, {u"RepoTags"_s, QJsonArray{}}, {u"Layers"_s, names}}};
    outer.append(file("manifest.json", QJsonDocument(manifest).toJson()));
    return test::writeTar(path, outer);
}

// A registry as Docker Hub serves blobs: its blob address answers 307 (with a page of its own)
// to a CDN address, here on the same server, which must be asked without the registry's login.
class RedirectingRegistry : public QThread {
public:
    explicit RedirectingRegistry(QByteArray blob) : m_blob(std::move(blob))
    {
        start();
        m_ready.acquire();
    }
    ~RedirectingRegistry() override
    {
        quit();
        wait();
    }
    quint16 port() const { return m_port; }
    bool loginReachedTheCdn() const { return m_leaked; }
    int cdnRequests() const { return m_cdn; }

protected:
    void run() override
    {
        QTcpServer server;
        server.listen(QHostAddress::LocalHost, 0);
        m_port = server.serverPort();
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this, &server] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket] { answer(socket); });
                QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
        m_ready.release();
        exec();
    }

private:
    void answer(QTcpSocket *socket)
    {
        m_buffer += socket->readAll();
        const qsizetype end = m_buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QByteArray head = m_buffer.left(end);
        m_buffer.remove(0, end + 4);
        const QByteArray path = head.split(' ').value(1);
        const bool login = head.toLower().contains("\nauthorization: basic ");
        auto reply = [socket](const QByteArray &status, const QByteArray &headers, const QByteArray &body) {
            socket->write("HTTP/1.1 " + status + "\r\n" + headers +
                          "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
        };
        if (path.startsWith("/cdn/")) {
            ++m_cdn;
            m_leaked = m_leaked || login;
            reply("200 OK", {}, m_blob);
        } else if (!login) {
            reply("401 Unauthorized", "WWW-Authenticate: Basic realm=\"hub\"\r\n", "{\"errors\":[]}");
        } else {
            reply("307 Temporary Redirect", "Location: /cdn/blob?signature=abc\r\n",
                  "<a href=\"/cdn/blob\">Temporary Redirect</a>.");
        }
    }

    QByteArray m_blob;
    QByteArray m_buffer;
    QSemaphore m_ready;
    quint16 m_port = 0;
    std::atomic_bool m_leaked{false};
    std::atomic_int m_cdn{0};
};

} // namespace

class TestRegistryImageResource : public QObject {
    Q_OBJECT

    ImageRegistry m_registry;
    static constexpr QLatin1StringView Password{"Registry-Pass-7f3a9"};
    ImageRegistry m_basic{u"robot"_s, Password};
    ImageRegistry m_token{u"robot"_s, Password, ImageRegistry::Auth::Token};
    RegistryImageResourceType m_type;
    QTemporaryDir m_inputs; // a put's work directory: inputs as subdirectories
    QStringList m_log;

    adapters::LogSink sink()
    {
        return [this](const QString &line) {
            m_log.append(line);
        };
    }
    QJsonObject source(const QString &repository, const QString &tag = {}) const
    {
        QJsonObject o{{u"repository"_s, QString(m_registry.host() + u'/' + repository)}};
        if (!tag.isEmpty())
            o.insert(u"tag"_s, tag);
        return o;
    }
    // Pushes a tarball made of layers as repository:tag through the resource's put.
    Result<adapters::VersionMetadata> push(const QJsonObject &src, const QList<QList<TarEntry>> &layers,
                                           const QJsonObject &extra = {})
    {
        const QString path = m_inputs.filePath(u"built/image.tar"_s);
        QDir().mkpath(m_inputs.filePath(u"built"_s));
        if (!saveTarball(path, layers))
            return fail(ErrorCode::Internal, u"cannot write the tarball"_s);
        QJsonObject params = extra;
        params.insert(u"image"_s, u"built/*.tar"_s);
        return m_type.out(src, params, m_inputs.path(), {}, CancelToken(), sink());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(ImageRegistry::available(&why), why);
        PANDO_REQUIRE_COMPONENT(ImageRegistry::tokenAvailable(&why), why);
        QVERIFY2(m_registry.start(), qPrintable(m_registry.error()));
        QVERIFY2(m_basic.start(), qPrintable(m_basic.error()));
        QVERIFY2(m_token.start(), qPrintable(m_token.error()));
    }

    // What Docker pushed (a Docker v2 manifest, gzipped layers) is found, fetched as a root file
    // system with its config's env and user, and as a tarball Docker loads back.
    void anImageDockerPushedIsCheckedAndFetched()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(test::DockerHarness::available(&why), u"Docker Engine: "_s + why);
        auto base = test::DockerHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        const adapters::dockerapi::DockerClient docker;
        const QString repo = m_registry.host() + u"/team/busybox"_s;
        QVERIFY(docker.post(u"/images/pando/busybox:latest/tag"_s, {{u"repo"_s, repo}, {u"tag"_s, u"1.36"_s}}));
        adapters::dockerapi::Request push;
        push.method = "POST";
        push.path = u"/images/%1/push"_s.arg(repo);
        push.addQuery(u"tag"_s, u"1.36"_s);
        push.headers.append({"X-Registry-Auth", QByteArray("{}").toBase64()});
        push.timeoutMs = 60000;
        auto pushed = docker.call(push);
        QVERIFY2(pushed && !pushed->body.contains("\"error\""),
                 pushed ? pushed->body.constData() : qPrintable(pushed.error().text()));
        adapters::dockerapi::Request untag;
        untag.method = "DELETE";
        untag.path = u"/images/%1:1.36"_s.arg(repo);
        QVERIFY(docker.call(untag));

        const QJsonObject src = source(u"team/busybox"_s, u"1.36"_s);
        auto versions = m_type.check(src, {}, CancelToken(), sink());
        QVERIFY2(versions, qPrintable(versions ? QString() : versions.error().text()));
        QCOMPARE(versions->size(), 1);
        const Version version = versions->first();
        QCOMPARE(version.value(u"tag"_s), u"1.36"_s);
        QVERIFY(version.value(u"digest"_s).startsWith(u"sha256:"_s));
        // Unchanged: nothing newer.
        auto again = m_type.check(src, version, CancelToken(), sink());
        QVERIFY(again && again->isEmpty());

        QTemporaryDir rootfsDir;
        auto got = m_type.in(src, version, {}, rootfsDir.path(), {}, CancelToken(), sink());
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QVERIFY(QFileInfo(rootfsDir.filePath(u"rootfs/bin/busybox"_s)).isExecutable());
        QCOMPARE(readAll(rootfsDir.filePath(u"digest"_s)), version.value(u"digest"_s).toUtf8());
        QCOMPARE(readAll(rootfsDir.filePath(u"tag"_s)), QByteArray("1.36"));
        QCOMPARE(readAll(rootfsDir.filePath(u"repository"_s)), repo.toUtf8());
        const QJsonObject metadata = QJsonDocument::fromJson(readAll(rootfsDir.filePath(u"metadata.json"_s))).object();
        QVERIFY2(metadata.value("env"_L1).isArray(), readAll(rootfsDir.filePath(u"metadata.json"_s)).constData());
        QVERIFY(!QFileInfo::exists(rootfsDir.filePath(u".layer"_s)));

        QTemporaryDir ociDir;
        auto oci = m_type.in(src, version, {{u"format"_s, u"oci"_s}}, ociDir.path(), {}, CancelToken(), sink());
        QVERIFY2(oci, qPrintable(oci ? QString() : oci.error().text()));
        QVERIFY(!QFileInfo::exists(ociDir.filePath(u"rootfs"_s)));
        const auto entries = test::tarFiles(ociDir.filePath(u"image.tar"_s));
        QVERIFY(entries.contains(u"manifest.json"_s) && entries.contains(u"index.json"_s) &&
                entries.contains(u"oci-layout"_s));
        const QJsonObject index = QJsonDocument::fromJson(entries.value(u"index.json"_s)).object();
        QCOMPARE(index.value("manifests"_L1).toArray().first().toObject().value("digest"_L1).toString(),
                 version.value(u"digest"_s));
        // docker load takes it, under the repository and tag it came from.
        QFile tar(ociDir.filePath(u"image.tar"_s));
        QVERIFY(tar.open(QIODevice::ReadOnly));
        adapters::dockerapi::Request load;
        load.method = "POST";
        load.path = u"/images/load"_s;
        load.bodyDevice = &tar;
        load.contentType = "application/x-tar";
        load.timeoutMs = 60000;
        auto loaded = docker.call(load);
        QVERIFY2(loaded && !loaded->body.contains("\"error"),
                 loaded ? loaded->body.constData() : qPrintable(loaded.error().text()));
        QVERIFY2(docker.get(u"/images/%1:1.36/json"_s.arg(repo)), "docker load did not tag the image");
        QVERIFY(docker.call(untag));

        // And pushed again from that tarball, as a put of oci-build-task's output: same image.
        QDir().mkpath(m_inputs.filePath(u"fetched"_s));
        QFile::remove(m_inputs.filePath(u"fetched/image.tar"_s));
        QVERIFY(QFile::copy(ociDir.filePath(u"image.tar"_s), m_inputs.filePath(u"fetched/image.tar"_s)));
        auto copied = m_type.out(source(u"team/copy"_s, u"v1"_s), {{u"image"_s, u"fetched/image.tar"_s}},
                                 m_inputs.path(), {}, CancelToken(), sink());
        QVERIFY2(copied, qPrintable(copied ? QString() : copied.error().text()));
        QCOMPARE(copied->version.value(u"digest"_s), version.value(u"digest"_s)); // the OCI layout's manifest, kept
    }

    // A put pushes under source.tag, the version (with the variant) and the additional tags; a get
    // unpacks the layers in order, whiteouts and opaque directories taking effect.
    void pushesTagsAndUnpacksLayersInOrder()
    {
        QFile tags(m_inputs.filePath(u"meta/tags"_s));
        QDir().mkpath(m_inputs.filePath(u"meta"_s));
        QVERIFY(tags.open(QIODevice::WriteOnly) && tags.write("edge  nightly\nsha-1234\n") > 0);
        tags.close();
        QJsonObject src = source(u"team/app"_s, u"latest"_s);
        src.insert(u"variant"_s, u"alpine"_s);
        const QList<QList<TarEntry>> layers{{dir("etc/"), file("etc/config", "one"), file("etc/gone", "x"), dir("var/"),
                                             dir("var/cache/"), file("var/cache/old", "old"), file("bin/tool", "v1")},
                                            {file("etc/.wh.gone", {}), dir("var/cache/"),
                                             file("var/cache/.wh..wh..opq", {}), file("var/cache/new", "new"),
                                             file("bin/tool", "v2"), softlink("bin/alias", "tool")}};
        auto pushed = push(src, layers, {{u"version"_s, u"1.4.0"_s}, {u"additional_tags"_s, u"meta/tags"_s}});
        QVERIFY2(pushed, qPrintable(pushed ? QString() : pushed.error().text()));
        QCOMPARE(pushed->version.value(u"tag"_s), u"latest"_s);
        adapters::registrykit::RegistryClient client(
            *adapters::registrykit::parseImageName(m_registry.host() + u"/team/app"_s, {}), {});
        for (const QString &tag : {u"latest"_s, u"1.4.0-alpine"_s, u"edge"_s, u"nightly"_s, u"sha-1234"_s}) {
            auto manifest = client.manifest(tag, CancelToken());
            QVERIFY2(manifest, qPrintable(tag));
            QCOMPARE(manifest->digest, pushed->version.value(u"digest"_s));
        }

        QTemporaryDir out;
        auto got = m_type.in(src, pushed->version, {}, out.path(), {}, CancelToken(), sink());
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        const QString rootfs = out.filePath(u"rootfs"_s);
        QCOMPARE(readAll(rootfs + u"/etc/config"_s), QByteArray("one"));
        QVERIFY(!QFileInfo::exists(rootfs + u"/etc/gone"_s));
        QVERIFY(!QFileInfo::exists(rootfs + u"/var/cache/old"_s));
        QCOMPARE(readAll(rootfs + u"/var/cache/new"_s), QByteArray("new"));
        QCOMPARE(readAll(rootfs + u"/bin/tool"_s), QByteArray("v2"));
        QCOMPARE(QFileInfo(rootfs + u"/bin/alias"_s).symLinkTarget(), rootfs + u"/bin/tool"_s);
        const QJsonObject metadata = QJsonDocument::fromJson(readAll(out.filePath(u"metadata.json"_s))).object();
        QCOMPARE(metadata.value("user"_L1).toString(), u"1000"_s);
        QCOMPARE(metadata.value("env"_L1).toArray().first().toString(), u"PATH=/bin"_s);

        QTemporaryDir skipped;
        auto light =
            m_type.in(src, pushed->version, {{u"skip_download"_s, true}}, skipped.path(), {}, CancelToken(), sink());
        QVERIFY(light);
        QVERIFY(!QFileInfo::exists(skipped.filePath(u"rootfs"_s)));
        QCOMPARE(readAll(skipped.filePath(u"digest"_s)), pushed->version.value(u"digest"_s).toUtf8());
    }

    // Links in an image resolve inside its root: nothing is written, linked or removed outside.
    void layersCannotReachOutsideTheRoot()
    {
        QTemporaryDir outside;
        QFile victim(outside.filePath(u"victim"_s));
        QVERIFY(victim.open(QIODevice::WriteOnly) && victim.write("keep") == 4);
        victim.close();
        const QByteArray away = outside.path().toUtf8();
        const QJsonObject src = source(u"team/hostile"_s, u"latest"_s);
        auto pushed = push(src, {{softlink("escape", away), softlink("up", "../../../../../../.."),
                                  file("escape/planted", "no"), file("up/tmp/planted", "no")},
                                 {file("escape/.wh.victim", {}), softlink("escape/x", "y")}});
        QVERIFY2(pushed, qPrintable(pushed ? QString() : pushed.error().text()));
        QTemporaryDir out;
        auto got = m_type.in(src, pushed->version, {}, out.path(), {}, CancelToken(), sink());
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(readAll(outside.filePath(u"victim"_s)), QByteArray("keep"));
        QVERIFY(!QFileInfo::exists(outside.filePath(u"planted"_s)));
        QVERIFY(!QFileInfo::exists(outside.filePath(u"x"_s)));
        // They landed where the links point inside the root, as a container would see them.
        QCOMPARE(readAll(out.filePath(u"rootfs"_s) + QString::fromUtf8(away) + u"/planted"_s), QByteArray("no"));
        QCOMPARE(readAll(out.filePath(u"rootfs/tmp/planted"_s)), QByteArray("no"));

        // Names that climb, and whiteouts of "." or "..", fail the get and remove nothing.
        for (const QByteArray &hostile :
             {QByteArray("etc/../../escaped"), QByteArray(".wh..."), QByteArray("a/.wh..")}) {
            auto climbing = push(src, {{dir("a/"), file(hostile, "x")}});
            QVERIFY(climbing);
            QTemporaryDir target;
            auto refusedGet = m_type.in(src, climbing->version, {}, target.path(), {}, CancelToken(), sink());
            QVERIFY2(!refusedGet, hostile.constData());
            QVERIFY2(QFileInfo::exists(target.filePath(u"digest"_s)), hostile.constData());
            QVERIFY(!QFileInfo::exists(target.filePath(u"escaped"_s)));
        }

        auto linked = push(src, {{hardlink("passwd", "../../../../etc/passwd")}});
        QVERIFY(linked);
        QTemporaryDir refused;
        auto bad = m_type.in(src, linked->version, {}, refused.path(), {}, CancelToken(), sink());
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(u"does not have"_s), qPrintable(bad.error().text()));
    }

    // Without a tag: the semver tags, each digest once under its most specific tag, newer than the
    // last version; variants and pre-releases only when asked for.
    void tracksSemverTags()
    {
        const QJsonObject src = source(u"team/semver"_s);
        auto imageOf = [this, &src](const QByteArray &content, const QStringList &tags) {
            QFile list(m_inputs.filePath(u"meta/semver-tags"_s));
            if (!list.open(QIODevice::WriteOnly) || list.write(tags.join(u' ').toUtf8()) < 0)
                return QString();
            list.close();
            auto pushed = push(src, {{file("version", content)}}, {{u"additional_tags"_s, u"meta/semver-tags"_s}});
            return pushed ? pushed->version.value(u"digest"_s) : QString();
        };
        const QString a = imageOf("a", {u"1.0.0"_s});
        const QString b = imageOf("b", {u"1"_s, u"1.1"_s, u"1.1.0"_s, u"v1.1"_s});
        const QString c = imageOf("c", {u"1.2.0-rc.1"_s});
        const QString d = imageOf("d", {u"1.1.0-alpine"_s, u"alpine"_s});
        QVERIFY(!a.isEmpty() && !b.isEmpty() && !c.isEmpty() && !d.isEmpty());

        auto first = m_type.check(src, {}, CancelToken(), sink());
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QCOMPARE(*first, (QList<Version>{{{u"tag"_s, u"1.1.0"_s}, {u"digest"_s, b}}}));
        auto after = m_type.check(src, {{u"tag"_s, u"1.0.0"_s}, {u"digest"_s, a}}, CancelToken(), sink());
        QVERIFY(after);
        QCOMPARE(*after, (QList<Version>{{{u"tag"_s, u"1.1.0"_s}, {u"digest"_s, b}}}));
        QJsonObject pre = src;
        pre.insert(u"pre_releases"_s, true);
        auto withPre = m_type.check(pre, {{u"tag"_s, u"1.0.0"_s}, {u"digest"_s, a}}, CancelToken(), sink());
        QVERIFY(withPre);
        QCOMPARE(*withPre, (QList<Version>{{{u"tag"_s, u"1.1.0"_s}, {u"digest"_s, b}},
                                           {{u"tag"_s, u"1.2.0-rc.1"_s}, {u"digest"_s, c}}}));
        QJsonObject variant = src;
        variant.insert(u"variant"_s, u"alpine"_s);
        auto alpine = m_type.check(variant, {}, CancelToken(), sink());
        QVERIFY(alpine);
        QCOMPARE(*alpine, (QList<Version>{{{u"tag"_s, u"1.1.0-alpine"_s}, {u"digest"_s, d}}}));

        // semver_constraint: only the versions it allows; a pre-release only when it names one.
        QJsonObject constrained = src;
        constrained.insert(u"semver_constraint"_s, u"~1.0"_s);
        auto onOne = m_type.check(constrained, {}, CancelToken(), sink());
        QVERIFY2(onOne, qPrintable(onOne ? QString() : onOne.error().text()));
        QCOMPARE(*onOne, (QList<Version>{{{u"tag"_s, u"1.0.0"_s}, {u"digest"_s, a}}}));
        constrained.insert(u"pre_releases"_s, true);
        constrained.insert(u"semver_constraint"_s, u">= 1.1, < 1.2 || >= 1.2.0-rc.0"_s);
        auto rc = m_type.check(constrained, {{u"tag"_s, u"1.0.0"_s}, {u"digest"_s, a}}, CancelToken(), sink());
        QVERIFY(rc);
        QCOMPARE(*rc, (QList<Version>{{{u"tag"_s, u"1.1.0"_s}, {u"digest"_s, b}},
                                      {{u"tag"_s, u"1.2.0-rc.1"_s}, {u"digest"_s, c}}}));
        QStringList said;
        constrained.insert(u"semver_constraint"_s, u">= 2"_s);
        auto none = m_type.check(constrained, {}, CancelToken(), [&said](const QString &line) { said << line; });
        QVERIFY(none);
        QVERIFY(none->isEmpty());
        QVERIFY2(said.join(u'\n').contains(u"that semver_constraint allows"_s), qPrintable(said.join(u'\n')));
    }

    // HTTP Basic, and a bearer token from the realm the registry names, fetched once and reused.
    void logsInAsTheRegistryAsks()
    {
        for (ImageRegistry *registry : {&m_basic, &m_token}) {
            const QString repo = registry->host() + u"/team/private"_s;
            QJsonObject src{{u"repository"_s, repo}, {u"tag"_s, u"1"_s}};
            auto anonymous = m_type.check(src, {}, CancelToken(), sink());
            QVERIFY(!anonymous);
            QCOMPARE(anonymous.error().code, ErrorCode::Unauthorized);
            QVERIFY2(anonymous.error().hint.contains(u"source.username"_s), qPrintable(anonymous.error().hint));
            src.insert(u"username"_s, u"robot"_s);
            src.insert(u"password"_s, u"wrong"_s);
            auto wrong = m_type.check(src, {}, CancelToken(), sink());
            QVERIFY(!wrong);
            QCOMPARE(wrong.error().code, ErrorCode::Unauthorized);
            QVERIFY2(!wrong.error().text().contains(u"wrong"_s), qPrintable(wrong.error().text()));
            src.insert(u"password"_s, Password.toString());
            const int tokensBefore = registry == &m_token ? m_token.tokensIssued() : 0;
            auto pushed = push(src, {{file("a", "1"), file("b", "2")}, {file("c", "3")}});
            QVERIFY2(pushed, qPrintable(pushed ? QString() : pushed.error().text()));
            auto found = m_type.check(src, {}, CancelToken(), sink());
            QVERIFY2(found && found->size() == 1, qPrintable(found ? QString() : found.error().text()));
            QCOMPARE(found->first().value(u"digest"_s), pushed->version.value(u"digest"_s));
            QTemporaryDir out;
            auto got = m_type.in(src, found->first(), {}, out.path(), {}, CancelToken(), sink());
            QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
            QCOMPARE(readAll(out.filePath(u"rootfs/c"_s)), QByteArray("3"));
            // A get may log in with credentials of its own (made in the build), in its params.
            QJsonObject bare = src;
            bare.remove(u"username"_s);
            bare.remove(u"password"_s);
            QTemporaryDir own;
            auto byParams =
                m_type.in(bare, found->first(), {{u"username"_s, u"robot"_s}, {u"password"_s, Password.toString()}},
                          own.path(), {}, CancelToken(), sink());
            QVERIFY2(byParams, qPrintable(byParams ? QString() : byParams.error().text()));
            if (registry == &m_token) {
                // A put (pull, then push scope), a check, two gets of four blobs: a token each, not
                // one per request.
                const int issued = m_token.tokensIssued() - tokensBefore;
                QVERIFY2(issued >= 4 && issued <= 5, qPrintable(QString::number(issued)));
            }
            for (const QString &line : std::as_const(m_log))
                QVERIFY2(!line.contains(Password), qPrintable(line));
        }
    }

    // A blob served from elsewhere: the redirect is followed without the login, and what is
    // written is the blob alone (its digest checked), not the redirect's page.
    void aRedirectedBlobIsFetchedWithoutTheLogin()
    {
        const QByteArray blob = "layer bytes";
        RedirectingRegistry hub(blob);
        adapters::registrykit::RegistryClient client({u"127.0.0.1:%1"_s.arg(hub.port()), u"team/x"_s},
                                                     {u"robot"_s, u"secret"_s});
        QTemporaryDir dir;
        const QString file = dir.filePath(u"blob"_s);
        const Status fetched = client.blobToFile(sha256(blob), file, CancelToken());
        QVERIFY2(fetched, qPrintable(fetched ? QString() : fetched.error().text()));
        QCOMPARE(readAll(file), blob);
        QCOMPARE(hub.cdnRequests(), 1);
        QVERIFY(!hub.loginReachedTheCdn());
        auto wrong = client.blobToFile(sha256("other bytes"), file, CancelToken());
        QVERIFY(!wrong);
        QVERIFY2(wrong.error().message.contains(u"does not have the content its digest names"_s),
                 qPrintable(wrong.error().text()));
    }

    // Concourse's older docker-image type: a digest-only version, its get's files, rootfs.tar
    // and the saved image on request, and its put refused with the way to push instead.
    void dockerImageChecksAndGets()
    {
        const QJsonObject pushSource = source(u"team/legacy"_s, u"stable"_s);
        auto pushed = push(pushSource, {{file("bin/app", "binary"), softlink("bin/alias", "app")}});
        QVERIFY2(pushed, qPrintable(pushed ? QString() : pushed.error().text()));
        adapters::registryimage::DockerImageResourceType docker;
        const QJsonObject src{{u"repository"_s, QString(m_registry.host() + u"/team/legacy"_s)},
                              {u"tag"_s, u"stable"_s},
                              {u"insecure_registries"_s, QJsonArray{m_registry.host()}},
                              {u"max_concurrent_downloads"_s, 2}};
        auto versions = docker.check(src, {}, CancelToken(), sink());
        QVERIFY2(versions, qPrintable(versions ? QString() : versions.error().text()));
        QCOMPARE(*versions, (QList<Version>{{{u"digest"_s, pushed->version.value(u"digest"_s)}}}));
        auto none = docker.check(src, versions->first(), CancelToken(), sink());
        QVERIFY(none && none->isEmpty());

        QTemporaryDir plain;
        QVERIFY(docker.in(src, versions->first(), {}, plain.path(), {}, CancelToken(), sink()));
        QCOMPARE(readAll(plain.filePath(u"tag"_s)), QByteArray("stable"));
        QVERIFY(readAll(plain.filePath(u"image-id"_s)).startsWith("sha256:"));
        QVERIFY(!QFileInfo::exists(plain.filePath(u"rootfs.tar"_s)));

        QTemporaryDir full;
        auto got = docker.in(src, versions->first(), {{u"rootfs"_s, true}, {u"save"_s, true}}, full.path(), {},
                             CancelToken(), sink());
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        const auto rootfs = test::tarFiles(full.filePath(u"rootfs.tar"_s));
        QCOMPARE(rootfs.value(u"bin/app"_s), QByteArray("binary"));
        QVERIFY(QFileInfo::exists(full.filePath(u"metadata.json"_s)));
        QVERIFY(test::tarFiles(full.filePath(u"image"_s)).contains(u"manifest.json"_s));
        QCOMPARE(QDir(full.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 (QStringList{u"digest"_s, u"image"_s, u"image-id"_s, u"metadata.json"_s, u"repository"_s,
                              u"rootfs.tar"_s, u"tag"_s}));

        auto put = docker.out(src, {{u"build"_s, u"src"_s}}, m_inputs.path(), {}, CancelToken(), sink());
        QVERIFY(!put);
        QVERIFY2(put.error().hint.contains(u"registry-image"_s), qPrintable(put.error().hint));
        QJsonObject certs = src;
        certs.insert(u"client_certs"_s, QJsonArray{QJsonObject{{u"domain"_s, u"x"_s}}});
        auto refused = docker.check(certs, {}, CancelToken(), sink());
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"source.client_certs"_s);
    }

    void badInputIsNamed_data()
    {
        QTest::addColumn<QJsonObject>("source");
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("no repository") << QJsonObject{} << QJsonObject{} << u"source.repository"_s
                                       << u"no repository"_s;
        QTest::newRow("tag in repository") << QJsonObject{{u"repository"_s, u"busybox:1.36"_s}} << QJsonObject{}
                                           << u"source.repository"_s << u"source.tag"_s;
        QTest::newRow("uppercase") << QJsonObject{{u"repository"_s, u"ghcr.io/Acme/api"_s}} << QJsonObject{}
                                   << u"source.repository"_s << u"lowercase"_s;
        QTest::newRow("ecr") << QJsonObject{{u"repository"_s, u"api"_s}, {u"aws_region"_s, u"eu-west-1"_s}}
                             << QJsonObject{} << u"source.aws_region"_s << u"ECR"_s;
        QTest::newRow("semver_constraint")
            << QJsonObject{{u"repository"_s, u"api"_s}, {u"semver_constraint"_s, u">= 1.2 ~apple"_s}} << QJsonObject{}
            << u"source.semver_constraint"_s << u"cannot read \"~apple\""_s;
        QTest::newRow("tag_regex") << QJsonObject{{u"repository"_s, u"api"_s}, {u"tag_regex"_s, u"^v1"_s}}
                                   << QJsonObject{} << u"source.tag_regex"_s << u"not supported"_s;
        QTest::newRow("bump_aliases") << QJsonObject{{u"repository"_s, u"api"_s}}
                                      << QJsonObject{{u"bump_aliases"_s, true}} << u"params.bump_aliases"_s
                                      << u"additional_tags"_s;
        QTest::newRow("ca_certs") << QJsonObject{{u"repository"_s, u"api"_s}, {u"ca_certs"_s, u"pem"_s}}
                                  << QJsonObject{} << u"source.ca_certs"_s << u"PEM"_s;
        QTest::newRow("format") << QJsonObject{{u"repository"_s, u"api"_s}} << QJsonObject{{u"format"_s, u"tar"_s}}
                                << u"params.format"_s << u"rootfs or oci"_s;
    }
    void badInputIsNamed()
    {
        QFETCH(QJsonObject, source);
        QFETCH(QJsonObject, params);
        QFETCH(QString, where);
        QFETCH(QString, says);
        QTemporaryDir out;
        auto got = m_type.in(source, {{u"digest"_s, sha256("x")}}, params, out.path(), {}, CancelToken(), sink());
        QVERIFY(!got);
        QCOMPARE(got.error().where, where);
        QVERIFY2(got.error().text().contains(says) || got.error().hint.contains(says), qPrintable(got.error().text()));
    }

    void aPutNamesItsImage()
    {
        const QJsonObject src = source(u"team/app"_s, u"latest"_s);
        auto none = m_type.out(src, {}, m_inputs.path(), {}, CancelToken(), sink());
        QVERIFY(!none);
        QCOMPARE(none.error().where, u"params.image"_s);
        auto missing = m_type.out(src, {{u"image"_s, u"nowhere/*.tar"_s}}, m_inputs.path(), {}, CancelToken(), sink());
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.contains(u"no file matches"_s), qPrintable(missing.error().text()));
        QDir().mkpath(m_inputs.filePath(u"junk"_s));
        QFile junk(m_inputs.filePath(u"junk/image.tar"_s));
        QVERIFY(junk.open(QIODevice::WriteOnly) && junk.write("not a tarball") > 0);
        junk.close();
        auto notTar = m_type.out(src, {{u"image"_s, u"junk/image.tar"_s}}, m_inputs.path(), {}, CancelToken(), sink());
        QVERIFY(!notTar);
        QCOMPARE(notTar.error().where, u"params.image"_s);
        auto off = push(src, {{file("a", "1")}}, {{u"bump_aliases"_s, false}});
        QVERIFY2(off, qPrintable(off ? QString() : off.error().text()));
        auto badTag = push(src, {{file("a", "1")}}, {{u"version"_s, u"-nope"_s}});
        QVERIFY(!badTag);
        QVERIFY2(badTag.error().message.contains(u"is not a tag"_s), qPrintable(badTag.error().text()));
    }

    void tagVersionsOrderAsRegistryImageOrdersThem()
    {
        using adapters::registryimage::compareTagVersions;
        using adapters::registryimage::parseTagVersion;
        auto less = [](const QString &a, const QString &b) {
            return compareTagVersions(*parseTagVersion(a), *parseTagVersion(b)) < 0;
        };
        QVERIFY(less(u"1.2.9"_s, u"1.2.10"_s));
        QVERIFY(less(u"1.2"_s, u"1.2.0"_s)); // as specific as can be last
        QVERIFY(less(u"1.10.0-rc.2"_s, u"1.10.0-rc.10"_s));
        QVERIFY(less(u"1.10.0-beta.1"_s, u"1.10.0"_s));
        QVERIFY(less(u"v1.0.0"_s, u"1.0.1"_s));
        QCOMPARE(parseTagVersion(u"1.2.3-alpine"_s)->variant, u"alpine"_s);
        QCOMPARE(parseTagVersion(u"1.2.3-rc.1-alpine"_s)->preRelease, u"rc.1"_s);
        QCOMPARE(parseTagVersion(u"1.2.3-rc.1-alpine"_s)->variant, u"alpine"_s);
        QVERIFY(!parseTagVersion(u"latest"_s));
        QVERIFY(!parseTagVersion(u"alpine"_s));
        QVERIFY(!parseTagVersion(u"sha-1234"_s));
    }
};

QTEST_GUILESS_MAIN(TestRegistryImageResource)
#include "tst_registryimageresource.moc"
