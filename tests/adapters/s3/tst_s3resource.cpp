// The s3 resource type against a real S3-compatible server (s3rver: it checks the access key but
// not the signature, which tst_s3kit checks against AWS's examples), with the source and params
// Concourse's s3 resource documents.

#include "adapters/kit/s3kit/s3client.h"
#include "adapters/resource/s3/s3resourcetype.h"
#include "tests/support/component.h"
#include "tests/support/curlget.h"
#include "tests/support/s3server.h"
#include "tests/support/tarfiles.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using adapters::Version;
using adapters::s3::S3ResourceType;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeAll(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

QStringList paths(const QList<Version> &versions)
{
    QStringList out;
    for (const Version &v : versions)
        out.append(v.value(u"path"_s));
    return out;
}

} // namespace

class TestS3Resource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        m_available = test::S3Server::available(&why);
        m_why = why;
        if (m_available)
            QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    }

    void versionsOrderAsConcourseOrdersThem()
    {
        using adapters::s3::compareSemiVersions;
        using adapters::s3::parseSemiVersion;
        auto less = [](const QString &a, const QString &b) {
            return compareSemiVersions(*parseSemiVersion(a), *parseSemiVersion(b)) < 0;
        };
        QVERIFY(less(u"1.2.9"_s, u"1.2.10"_s));
        QVERIFY(less(u"1.9.9"_s, u"2"_s));
        QVERIFY(less(u"1.10.0-rc.1"_s, u"1.10.0"_s));
        QVERIFY(less(u"1.10.0-rc.2"_s, u"1.10.0-rc.10"_s));
        QVERIFY(less(u"1.0.0"_s, u"1.0.0+build.5"_s));
        QVERIFY(less(u"1.1"_s, u"1.a"_s)); // numbers before words
        QVERIFY(less(u"20240101"_s, u"20240102"_s));
        QVERIFY(!less(u"1.0"_s, u"1.0"_s));
        QVERIFY(!parseSemiVersion(u"latest"_s));
        QVERIFY(!parseSemiVersion(u"1..2"_s));
        QVERIFY(!parseSemiVersion(u""_s));
    }

    void listsUnderTheRegexpsLiteralDirectory()
    {
        using adapters::s3::regexpPrefix;
        QCOMPARE(regexpPrefix(u"tools/sensorctl-(.*)-linux-.*.tar.xz"_s), u"tools/"_s);
        QCOMPARE(regexpPrefix(u"a/b/c-(\\d+).dump"_s), u"a/b/"_s);
        QCOMPARE(regexpPrefix(u"portal-(.*).tar.gz"_s), QString());
        QCOMPARE(regexpPrefix(u"dir\\.x/f-(.*)"_s), QString());
    }

    void badSourcesSayWhatIsWrong_data()
    {
        QTest::addColumn<QJsonObject>("source");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        const QJsonObject base{{u"bucket"_s, u"b"_s}, {u"regexp"_s, u"r-(.*).tgz"_s}};
        auto with = [&base](const QString &key, const QJsonValue &value) {
            QJsonObject o = base;
            if (value.isUndefined())
                o.remove(key);
            else
                o.insert(key, value);
            return o;
        };
        QTest::newRow("no bucket") << with(u"bucket"_s, QJsonValue::Undefined) << u"source.bucket"_s << u"required"_s;
        QTest::newRow("both") << with(u"versioned_file"_s, u"f"_s) << u"source.versioned_file"_s << u"exactly one"_s;
        QTest::newRow("neither") << with(u"regexp"_s, QJsonValue::Undefined) << u"source"_s << u"exactly one"_s;
        QTest::newRow("no group") << with(u"regexp"_s, u"r-.*.tgz"_s) << u"source.regexp"_s << u"capture group"_s;
        QTest::newRow("bad regexp") << with(u"regexp"_s, u"r-(.*"_s) << u"source.regexp"_s << u"not a regular"_s;
        QTest::newRow("v2") << with(u"use_v2_signing"_s, true) << u"source.use_v2_signing"_s << u"Version 2"_s;
        QTest::newRow("role") << with(u"aws_role_arn"_s, u"arn:aws:iam::1:role/x"_s) << u"source.aws_role_arn"_s
                              << u"role"_s;
        QTest::newRow("half keys") << with(u"access_key_id"_s, u"AK"_s) << u"source.secret_access_key"_s
                                   << u"go together"_s;
        QTest::newRow("initial path") << with(u"initial_path"_s, u"other.tgz"_s) << u"source.initial_path"_s
                                      << u"does not match"_s;
        QTest::newRow("flag") << with(u"private"_s, u"yes"_s) << u"source.private"_s << u"true or false"_s;
    }

    void badSourcesSayWhatIsWrong()
    {
        QFETCH(QJsonObject, source);
        QFETCH(QString, where);
        QFETCH(QString, says);
        S3ResourceType type;
        auto checked = type.check(source, {}, {}, {});
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, where);
        QVERIFY2(checked.error().message.contains(says), qPrintable(checked.error().message));
    }

    void checkFindsVersionsInOrder()
    {
        requireServer();
        const QJsonObject source = sourceFor(u"check"_s, u"releases/app-(.*).tgz"_s);
        for (const QString &version : {u"1.2.9"_s, u"1.10.0"_s, u"1.2.10"_s, u"1.10.0-rc.1"_s, u"latest"_s})
            put(u"check"_s, u"releases/app-%1.tgz"_s.arg(version), version.toUtf8());
        put(u"check"_s, u"other/app-9.9.9.tgz"_s, "elsewhere");
        put(u"check"_s, u"releases/app-2.0.0.tgz.sig"_s, "not the whole key");
        S3ResourceType type;
        auto latest = type.check(source, {}, {}, {});
        QVERIFY2(latest, qPrintable(latest ? QString() : latest.error().text()));
        QCOMPARE(paths(*latest), QStringList{u"releases/app-1.10.0.tgz"_s});
        auto newer = type.check(source, Version{{u"path"_s, u"releases/app-1.2.9.tgz"_s}}, {}, {});
        QVERIFY(newer);
        QCOMPARE(paths(*newer), (QStringList{u"releases/app-1.2.10.tgz"_s, u"releases/app-1.10.0-rc.1.tgz"_s,
                                             u"releases/app-1.10.0.tgz"_s}));
        auto none = type.check(source, Version{{u"path"_s, u"releases/app-1.10.0.tgz"_s}}, {}, {});
        QVERIFY(none);
        QVERIFY(none->isEmpty());
    }

    void aNamedGroupIsTheVersion()
    {
        requireServer();
        put(u"named"_s, u"v/build-7-of-1.4.0.zip"_s, "a");
        put(u"named"_s, u"v/build-9-of-1.3.0.zip"_s, "b");
        S3ResourceType type;
        auto latest = type.check(sourceFor(u"named"_s, u"v/build-(\\d+)-of-(?P<version>[0-9.]+).zip"_s), {}, {}, {});
        QVERIFY(latest);
        QCOMPARE(paths(*latest), QStringList{u"v/build-7-of-1.4.0.zip"_s});
    }

    void inFetchesTheObjectItsVersionAndUrl()
    {
        requireServer();
        put(u"fetch"_s, u"dl/tool-2.1.0.tar.xz"_s, "the tool");
        S3ResourceType type;
        QTemporaryDir dir;
        auto got = type.in(sourceFor(u"fetch"_s, u"dl/tool-(.*).tar.xz"_s),
                           Version{{u"path"_s, u"dl/tool-2.1.0.tar.xz"_s}}, {}, dir.path(), {}, {}, {});
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(readAll(dir.filePath(u"tool-2.1.0.tar.xz"_s)), QByteArray("the tool"));
        QCOMPARE(readAll(dir.filePath(u"version"_s)), QByteArray("2.1.0"));
        const QString url = QString::fromUtf8(readAll(dir.filePath(u"url"_s)));
        QCOMPARE(url, m_server.endpoint() + u"/fetch/dl/tool-2.1.0.tar.xz"_s);
        QCOMPARE(got->metadata.value(0), (QPair<QString, QString>{u"filename"_s, u"tool-2.1.0.tar.xz"_s}));
        QCOMPARE(got->metadata.value(1), (QPair<QString, QString>{u"url"_s, url}));
    }

    void aPrivateBucketsUrlIsPresignedAndWorks()
    {
        requireServer();
        put(u"private"_s, u"secret-1.0.txt"_s, "only for those with the link");
        QJsonObject source = sourceFor(u"private"_s, u"secret-(.*).txt"_s);
        source.insert(u"private"_s, true);
        S3ResourceType type;
        QTemporaryDir dir;
        auto got = type.in(source, Version{{u"path"_s, u"secret-1.0.txt"_s}}, {}, dir.path(), {}, {}, {});
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        const QString url = QString::fromUtf8(readAll(dir.filePath(u"url"_s)));
        QVERIFY2(url.contains(u"X-Amz-Signature="_s), qPrintable(url));
        QVERIFY(!url.contains(QLatin1String(test::S3Server::SecretKey) + u"&"_s));
        // The presigned address fetches the object with nothing else: s3rver checks its signature.
        const test::CurlAnswer answer = test::curlGet(url);
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.body, QByteArray("only for those with the link"));
        // A private bucket's address is not shown to people in the version's metadata.
        for (const auto &[name, value] : std::as_const(got->metadata))
            QVERIFY(name != u"url"_s);
    }

    void skipDownloadWritesOnlyTheVersionAndUrl()
    {
        requireServer();
        put(u"skip"_s, u"big-3.tgz"_s, "large");
        S3ResourceType type;
        QTemporaryDir dir;
        auto got = type.in(sourceFor(u"skip"_s, u"big-(.*).tgz"_s), Version{{u"path"_s, u"big-3.tgz"_s}},
                           QJsonObject{{u"skip_download"_s, u"true"_s}}, dir.path(), {}, {}, {});
        QVERIFY(got);
        QVERIFY(!QFile::exists(dir.filePath(u"big-3.tgz"_s)));
        QCOMPARE(readAll(dir.filePath(u"version"_s)), QByteArray("3"));
        QVERIFY(QFile::exists(dir.filePath(u"url"_s)));
    }

    void unpackOpensAGzippedTarball()
    {
        requireServer();
        QTemporaryDir work;
        const QString tar = work.filePath(u"site.tar"_s);
        QVERIFY(test::writeTar(tar, {{"site/index.html", test::TarEntry::Type::File, "<h1>hi</h1>", {}},
                                     {"site/js/app.js", test::TarEntry::Type::File, "run()", {}}}));
        QCOMPARE(QProcess::execute(u"gzip"_s, {u"-n"_s, tar}), 0);
        put(u"unpack"_s, u"site-1.0.0.tgz"_s, readAll(tar + u".gz"_s));
        S3ResourceType type;
        QTemporaryDir dir;
        auto got = type.in(sourceFor(u"unpack"_s, u"site-(.*).tgz"_s), Version{{u"path"_s, u"site-1.0.0.tgz"_s}},
                           QJsonObject{{u"unpack"_s, true}}, dir.path(), {}, {}, {});
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(readAll(dir.filePath(u"site/index.html"_s)), QByteArray("<h1>hi</h1>"));
        QCOMPARE(readAll(dir.filePath(u"site/js/app.js"_s)), QByteArray("run()"));
        QVERIFY(!QFile::exists(dir.filePath(u"site-1.0.0.tgz"_s)));
        QCOMPARE(readAll(dir.filePath(u"version"_s)), QByteArray("1.0.0"));
    }

    void unpackRefusesWhatWouldLeaveTheDirectory()
    {
        requireServer();
        QTemporaryDir work;
        const QString tar = work.filePath(u"evil.tar"_s);
        QVERIFY(test::writeTar(tar, {{"ok.txt", test::TarEntry::Type::File, "fine", {}},
                                     {"../escaped.txt", test::TarEntry::Type::File, "gotcha", {}}}));
        put(u"unpack"_s, u"evil-1.tar"_s, readAll(tar));
        S3ResourceType type;
        QTemporaryDir parent;
        const QString dir = parent.filePath(u"in"_s);
        QVERIFY(QDir().mkpath(dir));
        auto got = type.in(sourceFor(u"unpack"_s, u"evil-(.*).tar"_s), Version{{u"path"_s, u"evil-1.tar"_s}},
                           QJsonObject{{u"unpack"_s, true}}, dir, {}, {}, {});
        QVERIFY(!got);
        QCOMPARE(got.error().where, u"archive entry ../escaped.txt"_s);
        QVERIFY(!QFile::exists(parent.filePath(u"escaped.txt"_s)));

        // A plain file is no archive: unpack says so instead of guessing.
        put(u"unpack"_s, u"notes-1.txt"_s, "just text");
        QTemporaryDir plain;
        auto text = type.in(sourceFor(u"unpack"_s, u"notes-(.*).txt"_s), Version{{u"path"_s, u"notes-1.txt"_s}},
                            QJsonObject{{u"unpack"_s, true}}, plain.path(), {}, {}, {});
        QVERIFY(!text);
        QVERIFY2(text.error().message.contains(u"not an archive"_s), qPrintable(text.error().text()));
    }

    void outUploadsIntoTheRegexpsDirectory()
    {
        requireServer();
        const QJsonObject source = sourceFor(u"out"_s, u"builds/web-(.*).tgz"_s);
        put(u"out"_s, u"builds/web-1.0.0.tgz"_s, "old");
        QTemporaryDir work;
        QVERIFY(writeAll(work.filePath(u"dist/web-1.1.0.tgz"_s), "new build"));
        S3ResourceType type;
        QStringList log;
        auto put =
            type.out(source, QJsonObject{{u"file"_s, u"dist/web-*.tgz"_s}, {u"content_type"_s, u"application/gzip"_s}},
                     work.path(), {}, {}, [&log](const QString &line) { log.append(line); });
        QVERIFY2(put, qPrintable(put ? QString() : put.error().text()));
        QCOMPARE(put->version, (Version{{u"path"_s, u"builds/web-1.1.0.tgz"_s}}));
        QVERIFY(!log.join(u'\n').contains(QLatin1String(test::S3Server::SecretKey)));
        // What was put is the newest version, and its content is the file's.
        auto latest = type.check(source, {}, {}, {});
        QVERIFY(latest);
        QCOMPARE(paths(*latest), QStringList{u"builds/web-1.1.0.tgz"_s});
        QTemporaryDir dir;
        QVERIFY(type.in(source, put->version, {}, dir.path(), {}, {}, {}));
        QCOMPARE(readAll(dir.filePath(u"web-1.1.0.tgz"_s)), QByteArray("new build"));
    }

    void outWantsExactlyOneFileInsideTheInputs()
    {
        requireServer();
        const QJsonObject source = sourceFor(u"out"_s, u"builds/web-(.*).tgz"_s);
        QTemporaryDir work;
        QVERIFY(writeAll(work.filePath(u"dist/web-1.tgz"_s), "a"));
        QVERIFY(writeAll(work.filePath(u"dist/web-2.tgz"_s), "b"));
        QVERIFY(QFile::link(u"/etc/hostname"_s, work.filePath(u"dist/link-9.tgz"_s)));
        S3ResourceType type;
        auto two = type.out(source, QJsonObject{{u"file"_s, u"dist/web-*.tgz"_s}}, work.path(), {}, {}, {});
        QVERIFY(!two);
        QCOMPARE(two.error().where, u"params.file"_s);
        QVERIFY2(two.error().message.contains(u"dist/web-1.tgz, dist/web-2.tgz"_s), qPrintable(two.error().message));
        auto none = type.out(source, QJsonObject{{u"file"_s, u"out/*.tgz"_s}}, work.path(), {}, {}, {});
        QVERIFY(!none);
        QVERIFY2(none.error().message.contains(u"no file matches"_s), qPrintable(none.error().message));
        auto escape = type.out(source, QJsonObject{{u"file"_s, u"dist/link-*.tgz"_s}}, work.path(), {}, {}, {});
        QVERIFY(!escape);
        QVERIFY2(escape.error().message.contains(u"outside"_s), qPrintable(escape.error().message));
        auto dots = type.out(source, QJsonObject{{u"file"_s, u"../x"_s}}, work.path(), {}, {}, {});
        QVERIFY(!dots);
        auto missing = type.out(source, {}, work.path(), {}, {}, {});
        QVERIFY(!missing);
        QCOMPARE(missing.error().where, u"params.file"_s);
    }

    void anEmptyBucketGivesTheInitialVersion()
    {
        requireServer();
        QJsonObject source = sourceFor(u"initial"_s, u"models/ranker-(.*).bin"_s);
        source.insert(u"initial_path"_s, u"models/ranker-0.0.0.bin"_s);
        source.insert(u"initial_content_text"_s, u"no model yet"_s);
        S3ResourceType type;
        auto first = type.check(source, {}, {}, {});
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QCOMPARE(paths(*first), QStringList{u"models/ranker-0.0.0.bin"_s});
        QTemporaryDir dir;
        QVERIFY(type.in(source, first->first(), {}, dir.path(), {}, {}, {}));
        QCOMPARE(readAll(dir.filePath(u"ranker-0.0.0.bin"_s)), QByteArray("no model yet"));
        QCOMPARE(readAll(dir.filePath(u"version"_s)), QByteArray("0.0.0"));
    }

    void wrongKeysAreRefusedWithoutShowingThem()
    {
        requireServer();
        // s3rver knows one access key (it does not check signatures: tst_s3kit checks those
        // against AWS's documented examples).
        QJsonObject source = sourceFor(u"check"_s, u"releases/app-(.*).tgz"_s);
        source.insert(u"access_key_id"_s, u"AKIAUNKNOWN"_s);
        source.insert(u"secret_access_key"_s, u"not-the-secret-9f2c"_s);
        S3ResourceType type;
        auto checked = type.check(source, {}, {}, {});
        QVERIFY(!checked);
        QCOMPARE(checked.error().code, ErrorCode::Forbidden);
        QVERIFY2(checked.error().message.contains(u"InvalidAccessKeyId"_s), qPrintable(checked.error().text()));
        QVERIFY(checked.error().hint.contains(u"secret_access_key"_s));
        const QString all = checked.error().text() + checked.error().hint;
        QVERIFY(!all.contains(u"not-the-secret-9f2c"_s));
    }

    void aMissingBucketIsNamed()
    {
        requireServer();
        S3ResourceType type;
        auto checked = type.check(sourceFor(u"no-such-bucket"_s, u"a-(.*)"_s, false), {}, {}, {});
        QVERIFY(!checked);
        QCOMPARE(checked.error().code, ErrorCode::NotFound);
        QVERIFY2(checked.error().message.contains(u"NoSuchBucket"_s), qPrintable(checked.error().text()));
        QVERIFY(checked.error().where.contains(u"bucket no-such-bucket"_s));
    }

    void aBucketWithoutVersionsCannotTakeAVersionedFile()
    {
        requireServer();
        QJsonObject source = sourceFor(u"versioned"_s, {});
        source.remove(u"regexp"_s);
        source.insert(u"versioned_file"_s, u"etl/settings.yml"_s);
        QTemporaryDir work;
        QVERIFY(writeAll(work.filePath(u"cfg/settings.yml"_s), "rows: 5"));
        S3ResourceType type;
        // s3rver keeps no versions: the upload lands, and the resource says why it has no version.
        auto put = type.out(source, QJsonObject{{u"file"_s, u"cfg/settings.yml"_s}}, work.path(), {}, {}, {});
        QVERIFY(!put);
        QCOMPARE(put.error().where, u"source.versioned_file"_s);
        QVERIFY2(put.error().message.contains(u"versioning is off"_s), qPrintable(put.error().message));
        auto checked = type.check(source, {}, {}, {});
        QVERIFY(!checked);
        QVERIFY2(checked.error().message.contains(u"MethodNotAllowed"_s), qPrintable(checked.error().text()));
        QVERIFY2(checked.error().hint.contains(u"versioning"_s), qPrintable(checked.error().hint));
    }

private:
    void requireServer() { PANDO_REQUIRE_COMPONENT(m_available, u"s3rver: "_s + m_why); }

    adapters::s3kit::Config clientConfig(const QString &bucket) const
    {
        adapters::s3kit::Config config;
        config.bucket = bucket;
        config.endpoint = m_server.endpoint();
        config.credentials = {QLatin1String(test::S3Server::AccessKey), QLatin1String(test::S3Server::SecretKey), {}};
        return config;
    }

    QJsonObject sourceFor(const QString &bucket, const QString &regexp, bool make = true)
    {
        if (make && !m_buckets.contains(bucket)) {
            m_buckets.insert(bucket);
            auto made = adapters::s3kit::S3Client(clientConfig(bucket)).createBucket();
            if (!made)
                qWarning("making bucket %s: %s", qPrintable(bucket), qPrintable(made.error().text()));
        }
        QJsonObject o{{u"bucket"_s, bucket},
                      {u"endpoint"_s, m_server.endpoint()},
                      {u"access_key_id"_s, QLatin1String(test::S3Server::AccessKey)},
                      {u"secret_access_key"_s, QLatin1String(test::S3Server::SecretKey)}};
        if (!regexp.isEmpty())
            o.insert(u"regexp"_s, regexp);
        return o;
    }

    void put(const QString &bucket, const QString &key, const QByteArray &content)
    {
        sourceFor(bucket, {});
        const adapters::s3kit::S3Client client(clientConfig(bucket));
        QBuffer buffer;
        buffer.setData(content);
        QVERIFY(buffer.open(QIODevice::ReadOnly));
        auto uploaded = client.upload(key, buffer, {});
        QVERIFY2(uploaded, qPrintable(uploaded ? QString() : uploaded.error().text()));
    }

    test::S3Server m_server;
    QSet<QString> m_buckets;
    bool m_available = false;
    QString m_why;
};

QTEST_GUILESS_MAIN(TestS3Resource)
#include "tst_s3resource.moc"
