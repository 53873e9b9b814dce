// SealBox and its key file: round trips, every kind of tampering, wrong keys and contexts,
// truncated envelopes, key file creation and permission checks, and key rotation.
#include "core/pipelines/sealbox/sealbox.h"

#include <QDir>
#include <QFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace pando;
using namespace pando::core::pipelines;

Q_DECLARE_METATYPE(pando::ErrorCode)

namespace {

SealKey newKey()
{
    auto k = SealKey::generate();
    Q_ASSERT(k);
    return *k;
}

QByteArray ctx(const char *scope, const char *name)
{
    return SealBox::context({QString::fromUtf8(scope), QString::fromUtf8(name)});
}

// Re-encodes an envelope with one bit of its binary body flipped.
QString flipBit(const QString &envelope, int byteIndexFromStart, int bit = 0)
{
    const qsizetype cut = envelope.lastIndexOf(u':') + 1;
    QByteArray body = QByteArray::fromBase64(envelope.sliced(cut).toLatin1(),
                                             QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    const qsizetype i = byteIndexFromStart >= 0 ? byteIndexFromStart : body.size() + byteIndexFromStart;
    body[i] = char(body[i] ^ (1 << bit));
    return envelope.first(cut) +
           QString::fromLatin1(body.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

bool mentions(const Error &e, const QByteArray &plaintext)
{
    if (plaintext.size() < 4)
        return false;
    const QString all = e.message + e.where + e.hint;
    return all.contains(QString::fromUtf8(plaintext)) || all.toUtf8().contains(plaintext) ||
           all.contains(QString::fromLatin1(plaintext.toBase64()));
}

mode_t modeOf(const QString &path)
{
    struct stat st {};
    ::lstat(QFile::encodeName(path).constData(), &st);
    return st.st_mode & 07777;
}

} // namespace

class TestSealBox : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrip_data()
    {
        QTest::addColumn<QByteArray>("plaintext");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("one byte") << QByteArray("x");
        QTest::newRow("password") << QByteArray("hunter2-correct-horse");
        QTest::newRow("binary with NULs") << QByteArray("\0\1\2\xff\0", 5);
        QTest::newRow("utf-8") << QStringLiteral(u"pässwörd-密码").toUtf8();
        QTest::newRow("multi-line key") << QByteArray("-----BEGIN KEY-----\nabc\ndef\n-----END KEY-----\n");
        QTest::newRow("64 KiB") << QByteArray(64 * 1024, 'q');
    }
    void roundTrip()
    {
        QFETCH(QByteArray, plaintext);
        SealBox box({newKey()});
        const QByteArray where = ctx("pipeline/main", "db_password");
        auto sealed = box.seal(plaintext, where);
        QVERIFY2(sealed, qPrintable(sealed ? QString() : sealed.error().text()));
        QVERIFY(sealed->startsWith(QStringLiteral("pando-seal-v1:") + box.currentKeyId() + u':'));
        QVERIFY(SealBox::isSealed(*sealed));
        if (plaintext.size() >= 4)
            QVERIFY(!sealed->toUtf8().contains(plaintext));
        auto opened = box.open(*sealed, where);
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        QCOMPARE(*opened, plaintext);
        // Envelope size: header + base64url(12 + n + 16).
        const qsizetype body = sealed->size() - sealed->lastIndexOf(u':') - 1;
        QCOMPARE(body, (12 + plaintext.size() + 16) * 4 / 3 + (((12 + plaintext.size() + 16) % 3) ? 1 : 0));
    }

    void freshNoncePerSeal()
    {
        SealBox box({newKey()});
        QSet<QString> seen;
        for (int i = 0; i < 200; ++i) {
            auto s = box.seal("same value", ctx("a", "b"));
            QVERIFY(s);
            QVERIFY2(!seen.contains(*s), "two seals of one value must differ");
            seen.insert(*s);
        }
    }

    void tamper_data()
    {
        QTest::addColumn<int>("byte");
        QTest::addColumn<int>("bit");
        QTest::newRow("nonce first byte") << 0 << 0;
        QTest::newRow("nonce last byte") << 11 << 7;
        QTest::newRow("ciphertext first byte") << 12 << 0;
        QTest::newRow("ciphertext middle") << 20 << 3;
        QTest::newRow("ciphertext last byte") << -17 << 5;
        QTest::newRow("tag first byte") << -16 << 0;
        QTest::newRow("tag last byte") << -1 << 7;
    }
    void tamper()
    {
        QFETCH(int, byte);
        QFETCH(int, bit);
        SealBox box({newKey()});
        const QByteArray plaintext("s3cret-value-of-some-length");
        auto sealed = box.seal(plaintext, ctx("p", "n"));
        QVERIFY(sealed);
        auto opened = box.open(flipBit(*sealed, byte, bit), ctx("p", "n"));
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::Invalid);
        QVERIFY(opened.error().message.contains(QStringLiteral("does not authenticate")));
        QVERIFY(!mentions(opened.error(), plaintext));
    }

    void wrongContext_data()
    {
        QTest::addColumn<QByteArray>("sealedFor");
        QTest::addColumn<QByteArray>("openedFor");
        QTest::newRow("another secret's row")
            << ctx("pipeline/main", "db_password") << ctx("pipeline/main", "api_token");
        QTest::newRow("another scope") << ctx("team-a", "token") << ctx("team-b", "token");
        QTest::newRow("parts shifted") << ctx("a/b", "c") << ctx("a", "b/c");
        QTest::newRow("empty vs something") << QByteArray() << ctx("a", "b");
        QTest::newRow("one bit of aad") << QByteArray("row-1") << QByteArray("row-0");
    }
    void wrongContext()
    {
        QFETCH(QByteArray, sealedFor);
        QFETCH(QByteArray, openedFor);
        QVERIFY(sealedFor != openedFor);
        SealBox box({newKey()});
        auto sealed = box.seal("payload-123456", sealedFor);
        QVERIFY(sealed);
        auto opened = box.open(*sealed, openedFor);
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::Invalid);
        QVERIFY(box.open(*sealed, sealedFor));
    }

    void wrongKey()
    {
        SealBox a({newKey()});
        SealBox b({newKey()});
        auto sealed = a.seal("payload-123456", ctx("p", "n"));
        QVERIFY(sealed);
        auto opened = b.open(*sealed, ctx("p", "n"));
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::NotFound);
        QVERIFY(opened.error().message.contains(a.currentKeyId()));
        QVERIFY(!opened.error().hint.isEmpty());
    }

    void keyIdSwappedInHeader()
    {
        // Claim another key in the header: that key must not open it, even when loaded, since
        // the key id is authenticated and the ciphertext belongs to the other key.
        const SealKey k1 = newKey();
        const SealKey k2 = newKey();
        SealBox box({k1, k2});
        auto sealed = box.seal("payload-123456", ctx("p", "n"));
        QVERIFY(sealed);
        QString forged = *sealed;
        forged.replace(k2.id(), k1.id());
        auto opened = box.open(forged, ctx("p", "n"));
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::Invalid);
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("envelope");
        QTest::addColumn<QString>("says");
        const QString good = SealBox({newKey()}).seal("payload-123456", "c").value();
        const qsizetype body = good.lastIndexOf(u':') + 1;
        QTest::newRow("empty") << QString() << QStringLiteral("not a sealed value");
        QTest::newRow("plain text") << QStringLiteral("hunter2") << QStringLiteral("not a sealed value");
        QTest::newRow("future version") << QString(good).replace(QStringLiteral("-v1:"), QStringLiteral("-v9:"))
                                        << QStringLiteral("version");
        QTest::newRow("prefix only") << QStringLiteral("pando-seal-v1") << QStringLiteral("version");
        QTest::newRow("no key id") << QStringLiteral("pando-seal-v1:abc") << QStringLiteral("truncated");
        QTest::newRow("short key id") << QStringLiteral("pando-seal-v1:abc:AAAA") << QStringLiteral("key id");
        QTest::newRow("upper-case key id")
            << good.first(14) + good.sliced(14, 16).toUpper() + good.sliced(30) << QStringLiteral("key id");
        QTest::newRow("empty body") << good.first(body) << QStringLiteral("truncated");
        QTest::newRow("body cut to 27 bytes") << good.first(body + 36) << QStringLiteral("truncated");
        QTest::newRow("one char dropped") << good.chopped(1) << QStringLiteral("authenticate");
        QTest::newRow("tag dropped") << good.first(good.size() - 21) << QStringLiteral("truncated");
        QTest::newRow("non-base64 char") << good.first(body + 4) + u'!' + good.sliced(body + 5)
                                         << QStringLiteral("base64url");
        QTest::newRow("standard base64 char")
            << good.first(body + 4) + u'+' + good.sliced(body + 5) << QStringLiteral("base64url");
        QTest::newRow("padding") << good + u'=' << QStringLiteral("base64url");
        QTest::newRow("trailing newline") << good + u'\n' << QStringLiteral("base64url");
    }
    void malformed()
    {
        QFETCH(QString, envelope);
        QFETCH(QString, says);
        SealBox box({newKey()});
        // Whatever key: the tests for "authenticate" rows need the key that sealed `good`,
        // which this box lacks, so those come back NotFound; check them with keyIdOf instead.
        auto opened = box.open(envelope, "c");
        QVERIFY(!opened);
        if (says == QStringLiteral("authenticate")) {
            QVERIFY(SealBox::keyIdOf(envelope));
            return;
        }
        QCOMPARE(opened.error().code, ErrorCode::Invalid);
        QVERIFY2(opened.error().message.contains(says), qPrintable(opened.error().text()));
        QVERIFY(!SealBox::keyIdOf(envelope));
    }
    void truncatedWithTheRightKey_data()
    {
        QTest::addColumn<int>("chop");
        for (int chop : {1, 2, 3, 4, 8, 20, 22})
            QTest::addRow("chop %d", chop) << chop;
    }
    void truncatedWithTheRightKey()
    {
        QFETCH(int, chop);
        SealBox box({newKey()});
        auto sealed = box.seal("payload-123456", "c");
        QVERIFY(sealed);
        auto opened = box.open(sealed->chopped(chop), "c");
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::Invalid);
    }

    void emptyRing()
    {
        SealBox box({});
        QVERIFY(!box.seal("x", "c"));
        QVERIFY(box.currentKeyId().isEmpty());
    }
    void tooLarge()
    {
        SealBox box({newKey()});
        auto s = box.seal(QByteArray(SealBox::kMaxPlaintext + 1, 'a'), "c");
        QVERIFY(!s);
        QCOMPARE(s.error().code, ErrorCode::TooLarge);
    }

    void rotation()
    {
        const SealKey oldKey = newKey();
        const SealKey newer = newKey();
        SealBox before({oldKey});
        auto old = before.seal("rotate-me-please", ctx("p", "n"));
        QVERIFY(old);

        SealBox after({oldKey, newer});
        QCOMPARE(after.currentKeyId(), newer.id());
        QCOMPARE(after.keyIds(), (QStringList{oldKey.id(), newer.id()}));
        QCOMPARE(after.open(*old, ctx("p", "n")).value(), QByteArray("rotate-me-please"));
        QVERIFY(after.needsReseal(*old));
        auto fresh = after.seal("new-value-1234", ctx("p", "n"));
        QVERIFY(fresh);
        QCOMPARE(SealBox::keyIdOf(*fresh).value(), newer.id());
        QVERIFY(!after.needsReseal(*fresh));

        auto resealed = after.reseal(*old, ctx("p", "n"));
        QVERIFY(resealed);
        QCOMPARE(SealBox::keyIdOf(*resealed).value(), newer.id());
        QVERIFY(!after.needsReseal(*resealed));
        // Once the old key is retired, the resealed value still opens; the old one does not.
        SealBox retired({newer});
        QCOMPARE(retired.open(*resealed, ctx("p", "n")).value(), QByteArray("rotate-me-please"));
        QCOMPARE(retired.open(*old, ctx("p", "n")).error().code, ErrorCode::NotFound);
        // Reseal keeps the binding to the row.
        QVERIFY(!retired.open(*resealed, ctx("p", "other")));
    }

    void keyIdentity()
    {
        const QByteArray material(32, '\x42');
        auto a = SealKey::fromBytes(material);
        auto b = SealKey::fromBytes(material);
        QVERIFY(a && b);
        QCOMPARE(a->id(), b->id());
        QCOMPARE(a->id().size(), 16);
        QVERIFY(!a->id().contains(QString::fromLatin1(material.toHex().left(8))));
        QVERIFY(newKey().id() != newKey().id());
    }
    void keyWrongSize_data()
    {
        QTest::addColumn<int>("size");
        QTest::newRow("empty") << 0;
        QTest::newRow("16 (AES-128)") << 16;
        QTest::newRow("31") << 31;
        QTest::newRow("33") << 33;
        QTest::newRow("64") << 64;
    }
    void keyWrongSize()
    {
        QFETCH(int, size);
        auto k = SealKey::fromBytes(QByteArray(size, 'k'));
        QVERIFY(!k);
        QCOMPARE(k.error().code, ErrorCode::Invalid);
        QVERIFY(k.error().message.contains(QString::number(size)));
    }

    void keyFileCreate()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("seal.key"));
        auto created = keyfile::create(path);
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        QCOMPARE(modeOf(path), mode_t(0600));
        QCOMPARE(QFileInfo(path).size(), qint64(32));
        auto loaded = keyfile::load(path);
        QVERIFY2(loaded, qPrintable(loaded ? QString() : loaded.error().text()));
        QCOMPARE(loaded->id(), created->id());
        // Never overwritten.
        auto again = keyfile::create(path);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Conflict);
        QCOMPARE(again.error().where, path);
        QCOMPARE(keyfile::load(path)->id(), created->id());
        // loadOrCreate finds it.
        QCOMPARE(keyfile::loadOrCreate(path)->id(), created->id());
        // And seals made with it open with the reloaded key.
        auto sealed = SealBox({*created}).seal("abc-1234", "c");
        QCOMPARE(SealBox({*loaded}).open(*sealed, "c").value(), QByteArray("abc-1234"));
    }
    void keyFileCreateIgnoresUmask()
    {
        QTemporaryDir dir;
        const mode_t old = ::umask(0);
        auto created = keyfile::create(dir.filePath(QStringLiteral("k")));
        ::umask(old);
        QVERIFY(created);
        QCOMPARE(modeOf(dir.filePath(QStringLiteral("k"))), mode_t(0600));
    }
    void keyFileLoadOrCreateMakesOne()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("new.key"));
        auto k = keyfile::loadOrCreate(path);
        QVERIFY(k);
        QVERIFY(QFile::exists(path));
        QCOMPARE(keyfile::load(path)->id(), k->id());
    }
    void keyFileCreateRefusesSymlink()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("target"));
        const QString link = dir.filePath(QStringLiteral("link.key"));
        QVERIFY(QFile::link(target, link)); // dangling: O_EXCL|O_NOFOLLOW must not create target
        auto created = keyfile::create(link);
        QVERIFY(!created);
        QVERIFY(!QFile::exists(target));
    }
    void keyFileCreateInMissingDir()
    {
        QTemporaryDir dir;
        auto created = keyfile::create(dir.filePath(QStringLiteral("nope/seal.key")));
        QVERIFY(!created);
        QCOMPARE(created.error().code, ErrorCode::Unavailable);
        QVERIFY(created.error().where.endsWith(QStringLiteral("nope/seal.key")));
    }

    void keyFileLoadRefuses_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("size");
        QTest::addColumn<ErrorCode>("code");
        QTest::addColumn<QString>("says");
        QTest::newRow("group-readable") << QStringLiteral("file") << 0640 << 32 << ErrorCode::Forbidden
                                        << QStringLiteral("group or others");
        QTest::newRow("world-readable") << QStringLiteral("file") << 0644 << 32 << ErrorCode::Forbidden
                                        << QStringLiteral("group or others");
        QTest::newRow("group-writable") << QStringLiteral("file") << 0620 << 32 << ErrorCode::Forbidden
                                        << QStringLiteral("group or others");
        QTest::newRow("others-executable")
            << QStringLiteral("file") << 0601 << 32 << ErrorCode::Forbidden << QStringLiteral("group or others");
        QTest::newRow("too short") << QStringLiteral("file") << 0600 << 31 << ErrorCode::Invalid
                                   << QStringLiteral("31 bytes");
        QTest::newRow("too long") << QStringLiteral("file") << 0600 << 33 << ErrorCode::Invalid
                                  << QStringLiteral("33 bytes");
        QTest::newRow("empty") << QStringLiteral("file") << 0600 << 0 << ErrorCode::Invalid
                               << QStringLiteral("0 bytes");
        QTest::newRow("hex text instead of bytes")
            << QStringLiteral("file") << 0600 << 65 << ErrorCode::Invalid << QStringLiteral("65 bytes");
        QTest::newRow("symlink to a good key")
            << QStringLiteral("symlink") << 0600 << 32 << ErrorCode::Forbidden << QStringLiteral("symlink");
        QTest::newRow("directory") << QStringLiteral("dir") << 0700 << 0 << ErrorCode::Invalid
                                   << QStringLiteral("not a regular file");
        QTest::newRow("missing") << QStringLiteral("missing") << 0 << 0 << ErrorCode::NotFound
                                 << QStringLiteral("cannot open");
    }
    void keyFileLoadRefuses()
    {
        QFETCH(QString, kind);
        QFETCH(int, mode);
        QFETCH(int, size);
        QFETCH(ErrorCode, code);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("seal.key"));
        const QByteArray content(size, 'K');
        if (kind == QStringLiteral("file") || kind == QStringLiteral("symlink")) {
            const QString real = kind == QStringLiteral("file") ? path : dir.filePath(QStringLiteral("real.key"));
            QFile f(real);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
            f.close();
            QVERIFY(::chmod(QFile::encodeName(real).constData(), mode_t(mode)) == 0);
            if (kind == QStringLiteral("symlink"))
                QVERIFY(QFile::link(real, path));
        } else if (kind == QStringLiteral("dir")) {
            QVERIFY(QDir().mkdir(path));
        }
        auto loaded = keyfile::load(path);
        QVERIFY(!loaded);
        QCOMPARE(loaded.error().code, code);
        QVERIFY2(loaded.error().message.contains(says), qPrintable(loaded.error().text()));
        QCOMPARE(loaded.error().where, path);
        QVERIFY(!loaded.error().text().contains(QStringLiteral("KKKK")));
        // loadOrCreate never replaces a key it refused.
        if (code != ErrorCode::NotFound)
            QVERIFY(!keyfile::loadOrCreate(path));
    }

    void errorsNeverHoldPlaintext()
    {
        const QByteArray plaintext("TOP-SECRET-PLAINTEXT-9000");
        SealBox box({newKey()});
        const QString sealed = box.seal(plaintext, "c").value();
        const QList<Result<QByteArray>> failures = {
            box.open(sealed, "other"),
            box.open(flipBit(sealed, 14), "c"),
            box.open(sealed.chopped(3), "c"),
            SealBox({newKey()}).open(sealed, "c"),
        };
        for (const auto &f : failures) {
            QVERIFY(!f);
            QVERIFY(!mentions(f.error(), plaintext));
        }
    }

    void wipe()
    {
        QByteArray secret("wipe-me");
        secret.detach();
        SealBox::wipe(secret);
        QVERIFY(secret.isEmpty());
    }

    void concurrentUse()
    {
        SealBox box({newKey(), newKey()});
        std::atomic_int bad = 0;
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&box, &bad, t] {
                for (int i = 0; i < 300; ++i) {
                    const QByteArray value = QByteArray::number(t) + '-' + QByteArray::number(i);
                    const QByteArray where = SealBox::context({QString::number(t), QString::number(i)});
                    auto s = box.seal(value, where);
                    if (!s || box.open(*s, where).value_or(QByteArray()) != value)
                        ++bad;
                }
            });
        }
        for (auto &th : threads)
            th.join();
        QCOMPARE(bad.load(), 0);
    }
};

QTEST_GUILESS_MAIN(TestSealBox)
#include "tst_sealbox.moc"
