// The redactor: every encoded form of a secret is masked, base64 at every alignment inside a
// longer encoding, streams split anywhere give what one-shot redaction gives, short secrets are
// left alone with a warning, shared use from threads, and the throughput on 100 MB of log.
#include "core/pipelines/redact/patterns.h"
#include "core/pipelines/redact/redactor.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTest>
#include <QUrl>
#include <thread>
#include <vector>

using namespace pando::core::pipelines;

namespace {

const QByteArray kMask(kRedactedMask);

QByteArray streamed(const Redactor &r, const QByteArray &text, const QList<qsizetype> &cuts, qsizetype *maxHeld)
{
    RedactingStream s(r);
    QByteArray out;
    qsizetype from = 0;
    for (qsizetype cut : cuts) {
        out += s.write(QByteArrayView(text).sliced(from, cut - from));
        if (maxHeld)
            *maxHeld = std::max(*maxHeld, s.pendingBytes());
        from = cut;
    }
    out += s.write(QByteArrayView(text).sliced(from));
    if (maxHeld)
        *maxHeld = std::max(*maxHeld, s.pendingBytes());
    out += s.flush();
    return out;
}

// The obvious, slow definition: every occurrence of every pattern, overlapping or touching
// ones joined, each joined range one mask.
QByteArray bruteForce(const QList<QByteArray> &secrets, const QByteArray &text)
{
    QList<std::pair<qsizetype, qsizetype>> spans;
    for (const QByteArray &secret : secrets) {
        for (const QByteArray &p : redactionPatterns(secret, Redactor::kMinimumSecretLength)) {
            for (qsizetype at = text.indexOf(p); at >= 0; at = text.indexOf(p, at + 1))
                spans.append({at, at + p.size()});
        }
    }
    std::sort(spans.begin(), spans.end());
    QByteArray out;
    qsizetype done = 0;
    for (qsizetype i = 0; i < spans.size();) {
        qsizetype start = spans[i].first;
        qsizetype end = spans[i].second;
        for (++i; i < spans.size() && spans[i].first <= end; ++i)
            end = std::max(end, spans[i].second);
        out += text.mid(done, start - done);
        out += kMask;
        done = end;
    }
    out += text.mid(done);
    return out;
}

} // namespace

class TestRedactor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void forms_data()
    {
        QTest::addColumn<QByteArray>("secret");
        QTest::addColumn<QByteArray>("shown"); // how the secret appears in the output
        const QByteArray pw("p@ss w/rd+\"q\"\\x?=&");
        const QByteArray plain("s3cretTokenValue");
        QTest::newRow("raw") << plain << plain;
        QTest::newRow("raw with punctuation") << pw << pw;
        QTest::newRow("base64") << pw << pw.toBase64();
        QTest::newRow("base64 unpadded") << pw << pw.toBase64(QByteArray::OmitTrailingEquals);
        QTest::newRow("base64url") << QByteArray("\xfb\xff\xfe-secret")
                                   << QByteArray("\xfb\xff\xfe-secret").toBase64(QByteArray::Base64UrlEncoding);
        QTest::newRow("base64url unpadded")
            << QByteArray("\xfb\xff\xfe-secret")
            << QByteArray("\xfb\xff\xfe-secret")
                   .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
        QTest::newRow("percent %20") << pw << QUrl::toPercentEncoding(QString::fromLatin1(pw));
        QTest::newRow("percent +") << pw << QUrl::toPercentEncoding(QString::fromLatin1(pw), " ").replace(' ', '+');
        QTest::newRow("percent lower-case hex") << pw << QUrl::toPercentEncoding(QString::fromLatin1(pw)).toLower();
        QTest::newRow("encodeURI form") << QByteArray("a b/c?d=e&f") << QByteArray("a%20b/c?d=e&f");
        QTest::newRow("percent of UTF-8") << QStringLiteral(u"pässwort").toUtf8() << QByteArray("p%C3%A4sswort");
        QTest::newRow("json quotes and backslashes") << pw << QByteArray("p@ss w/rd+\\\"q\\\"\\\\x?=&");
        QTest::newRow("json escaped slash") << pw << QByteArray("p@ss w\\/rd+\\\"q\\\"\\\\x?=&");
        QTest::newRow("json newline and tab") << QByteArray("line1\nline2\tend") << QByteArray("line1\\nline2\\tend");
        QTest::newRow("json control char") << QByteArray("ab\x01"
                                                         "cd")
                                           << QByteArray("ab\\u0001cd");
        QTest::newRow("json ascii-only (python)")
            << QStringLiteral(u"pässwört").toUtf8() << QByteArray("p\\u00e4ssw\\u00f6rt");
        QTest::newRow("json ascii-only astral")
            << QStringLiteral(u"key\U0001F511x").toUtf8() << QByteArray("key\\ud83d\\udd11x");
        QTest::newRow("trailing newline trimmed") << QByteArray("file-secret\n") << QByteArray("file-secret");
        QTest::newRow("line of a multi-line key")
            << QByteArray(
                   "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\nAQEFAASCBKcwggSjAgEAAoIB\n-----END KEY-----\n")
            << QByteArray("AQEFAASCBKcwggSjAgEAAoIB");
        QTest::newRow("multi-line key with CRLF")
            << QByteArray("-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END KEY-----")
            << QByteArray("-----BEGIN KEY-----\r\nMIIEvQIBADANBgkqhkiG9w0B\r\n-----END KEY-----");
        QTest::newRow("three bytes") << QByteArray("abc") << QByteArray("abc");
        QTest::newRow("binary with NUL") << QByteArray("se\0cr\0et", 8) << QByteArray("se\0cr\0et", 8);
    }
    void forms()
    {
        QFETCH(QByteArray, secret);
        QFETCH(QByteArray, shown);
        const Redactor r(QList<QByteArray>{secret});
        const QByteArray text = "before [" + shown + "] after\n";
        const QByteArray out = r.redact(text);
        QVERIFY2(!out.contains(shown), out.constData());
        QVERIFY2(out.contains(kMask), out.constData());
        QVERIFY2(out.startsWith("before ["), out.constData());
        QVERIFY2(out.endsWith("] after\n"), out.constData());
        // Raw never survives in any form's output either.
        const QByteArray trimmed = secret.trimmed();
        if (trimmed.size() >= 8)
            QVERIFY(!out.contains(trimmed));
    }

    // base64 of secret inside a longer encoded string, at every offset: every character whose
    // bits all come from the secret is under the mask.
    void base64Alignments_data()
    {
        QTest::addColumn<QByteArray>("secret");
        QTest::addColumn<int>("before");
        QTest::addColumn<int>("after");
        QTest::addColumn<bool>("url");
        const QList<QByteArray> secrets = {QByteArray("abc"), QByteArray("hunter22"), QByteArray("Tr0ub4dor&3-xyz!"),
                                           QByteArray("\xff\xfe\xfd\xfc\xfb\xfa\xf9", 7)};
        for (const QByteArray &s : secrets)
            for (int before = 0; before < 6; ++before)
                for (int after : {0, 1, 2, 5})
                    for (bool url : {false, true})
                        QTest::addRow("%d bytes, %d before, %d after%s", int(s.size()), before, after,
                                      url ? ", url" : "")
                            << s << before << after << url;
    }
    void base64Alignments()
    {
        QFETCH(QByteArray, secret);
        QFETCH(int, before);
        QFETCH(int, after);
        QFETCH(bool, url);
        const QByteArray prefix = QByteArray("user:xyz").left(before);
        const QByteArray suffix = QByteArray(":tail").left(after);
        const auto opts = url ? QByteArray::Base64UrlEncoding : QByteArray::Base64Encoding;
        const QByteArray encoded = QByteArray(prefix + secret + suffix).toBase64(opts);
        const QByteArray out =
            Redactor(QList<QByteArray>{secret}).redact(QByteArray("Authorization: Basic " + encoded + "\n"));
        const qsizetype at = out.indexOf(kMask);
        QVERIFY2(at >= 0, out.constData());
        const QByteArray head("Authorization: Basic ");
        const qsizetype maskFrom = at - head.size();
        const qsizetype maskTo = maskFrom + (encoded.size() - (out.size() - head.size() - 1 - kMask.size()));
        // The first character carrying secret bits is index floor(8*before/6); at most that one
        // (shared with the prefix) may stay visible: the mask starts by the next character.
        const qsizetype firstPure = (8 * before + 5) / 6;
        const qsizetype endPure = (8 * (before + secret.size())) / 6;
        QVERIFY2(maskFrom <= firstPure, out.constData());
        QVERIFY2(maskTo >= endPure, out.constData());
        // What is left either side is the encoding's own text.
        QCOMPARE(out.left(at), head + encoded.left(maskFrom));
        QVERIFY(out.endsWith(QByteArray(encoded.mid(maskTo) + "\n")));
    }

    void stableMiddle_data()
    {
        QTest::addColumn<int>("alignment");
        QTest::newRow("0") << 0;
        QTest::newRow("1") << 1;
        QTest::newRow("2") << 2;
    }
    void stableMiddle()
    {
        QFETCH(int, alignment);
        // The middle must not depend on the bytes around the secret.
        const QByteArray secret("Zq9-secret-value");
        const QByteArray middle = detail::base64StableMiddle(secret, alignment, QByteArray::Base64Encoding);
        QVERIFY(!middle.isEmpty());
        for (int b = 0; b < 256; b += 17) {
            const QByteArray around = QByteArray(3 + alignment, char(b)) + secret + QByteArray(2, char(255 - b));
            QVERIFY(around.toBase64().contains(middle));
        }
    }

    void shortSecrets_data()
    {
        QTest::addColumn<QByteArray>("secret");
        QTest::addColumn<bool>("masked");
        QTest::addColumn<int>("ignored");
        QTest::newRow("empty: not a secret, no warning") << QByteArray() << false << 0;
        QTest::newRow("one byte") << QByteArray("x") << false << 1;
        QTest::newRow("two bytes") << QByteArray("ab") << false << 1;
        QTest::newRow("three bytes: the minimum") << QByteArray("abc") << true << 0;
        QTest::newRow("four bytes") << QByteArray("abcd") << true << 0;
    }
    void shortSecrets()
    {
        QFETCH(QByteArray, secret);
        QFETCH(bool, masked);
        QFETCH(int, ignored);
        const Redactor r(QList<QByteArray>{secret});
        QCOMPARE(r.ignoredShortSecrets(), ignored);
        QCOMPARE(r.warnings().isEmpty(), ignored == 0);
        // The warning never quotes the value (a one-byte value is in every sentence anyway).
        for (const QString &w : r.warnings())
            QVERIFY(secret.size() < 2 || !w.contains(QString::fromLatin1(secret)));
        const QByteArray text = "x ab abc abcd";
        QCOMPARE(r.redact(text) != text, masked);
        QCOMPARE(r.isEmpty(), !masked);
    }

    void overlapsAndNeighbours_data()
    {
        QTest::addColumn<QList<QByteArray>>("secrets");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("expected");
        const QByteArray M = kMask;
        QTest::newRow("none") << QList<QByteArray>{"secret"} << QByteArray("nothing here")
                              << QByteArray("nothing here");
        QTest::newRow("twice") << QList<QByteArray>{"secret"} << QByteArray("secret and secret") << M + " and " + M;
        QTest::newRow("overlapping secrets: one mask")
            << QList<QByteArray>{"abcdef", "defghi"} << QByteArray("<abcdefghi>") << "<" + M + ">";
        QTest::newRow("touching: one mask")
            << QList<QByteArray>{"abcdef", "ghijkl"} << QByteArray("<abcdefghijkl>") << "<" + M + ">";
        QTest::newRow("one inside another")
            << QList<QByteArray>{"abcdefgh", "cde"} << QByteArray("<abcdefgh|cde>") << "<" + M + "|" + M + ">";
        QTest::newRow("prefix of another")
            << QList<QByteArray>{"token", "token-long"} << QByteArray("token-long token-") << M + " " + M + "-";
        QTest::newRow("repeated overlap") << QList<QByteArray>{"aaaa"} << QByteArray("aaaaaaaaa!") << M + "!";
        QTest::newRow("at the edges") << QList<QByteArray>{"edge"} << QByteArray("edge") << M;
        QTest::newRow("mask in the text stays") << QList<QByteArray>{"secret"} << M + " secret" << M + " " + M;
        QTest::newRow("binary around") << QList<QByteArray>{"secret"} << QByteArray("\0\xffsecret\0", 9)
                                       << QByteArray("\0\xff", 2) + M + QByteArray("\0", 1);
    }
    void overlapsAndNeighbours()
    {
        QFETCH(QList<QByteArray>, secrets);
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, expected);
        const Redactor r(secrets);
        QCOMPARE(r.redact(text), expected);
        // Every split of the text gives the same.
        for (qsizetype cut = 0; cut <= text.size(); ++cut)
            QCOMPARE(streamed(r, text, {cut}, nullptr), expected);
        // One byte at a time.
        QList<qsizetype> bytes;
        for (qsizetype i = 1; i < text.size(); ++i)
            bytes << i;
        QCOMPARE(streamed(r, text, bytes, nullptr), expected);
    }

    void streamMatchesOneShot_data()
    {
        QTest::addColumn<quint32>("seed");
        for (quint32 seed = 1; seed <= 40; ++seed)
            QTest::addRow("seed %u", seed) << seed;
    }
    void streamMatchesOneShot()
    {
        QFETCH(quint32, seed);
        QRandomGenerator rng(seed);
        const QList<QByteArray> secrets = {"correct-horse", "battery", "st@ple 99", "tok_ABCDEF123456"};
        const Redactor r(secrets);
        // Text built from fragments of secrets, their encodings and noise.
        QByteArray text;
        const QList<QByteArray> parts = {"correct-horse",
                                         "battery",
                                         "st%40ple%2099",
                                         "st@ple+99",
                                         QByteArray("tok_ABCDEF123456").toBase64(),
                                         "corr",
                                         "ect-",
                                         "horse",
                                         "bat",
                                         "tery",
                                         " ",
                                         "\n",
                                         "x",
                                         "=="};
        while (text.size() < 600)
            text += parts[rng.bounded(int(parts.size()))];
        const QByteArray expected = r.redact(text);
        for (const QByteArray &s : secrets)
            QVERIFY(!expected.contains(s));
        QList<qsizetype> cuts;
        qsizetype at = 0;
        while (true) {
            at += 1 + rng.bounded(int(r.maxPatternLength()) + 3);
            if (at >= text.size())
                break;
            cuts << at;
        }
        qsizetype held = 0;
        QCOMPARE(streamed(r, text, cuts, &held), expected);
        QVERIFY2(held <= r.maxPatternLength() - 1, qPrintable(QString::number(held)));
    }

    void matchesBruteForce_data()
    {
        QTest::addColumn<quint32>("seed");
        for (quint32 seed = 100; seed < 160; ++seed)
            QTest::addRow("seed %u", seed) << seed;
    }
    void matchesBruteForce()
    {
        QFETCH(quint32, seed);
        QRandomGenerator rng(seed);
        // Small alphabets make secrets overlap, repeat and share prefixes with the noise.
        const QByteArray alphabet = seed % 2 ? QByteArray("ab") : QByteArray("abc/+= %\"\\");
        QList<QByteArray> secrets;
        for (int i = 0; i < 1 + int(rng.bounded(5)); ++i) {
            QByteArray s;
            for (int j = 0, len = 3 + int(rng.bounded(6)); j < len; ++j)
                s += alphabet[rng.bounded(int(alphabet.size()))];
            secrets << s;
        }
        QByteArray text;
        while (text.size() < 400) {
            switch (rng.bounded(4)) {
            case 0:
                text += secrets[rng.bounded(int(secrets.size()))];
                break;
            case 1:
                text += secrets[rng.bounded(int(secrets.size()))].toBase64();
                break;
            default:
                text += alphabet[rng.bounded(int(alphabet.size()))];
            }
        }
        const Redactor r(secrets);
        const QByteArray expected = bruteForce(secrets, text);
        QCOMPARE(r.redact(text), expected);
        QList<qsizetype> cuts;
        for (qsizetype at = 1 + rng.bounded(7); at < text.size(); at += 1 + rng.bounded(7))
            cuts << at;
        QCOMPARE(streamed(r, text, cuts, nullptr), expected);
    }

    void splitAcrossChunks()
    {
        const Redactor r({QByteArray("splitsecret")});
        RedactingStream s(r);
        QByteArray out = s.write("log: spli");
        QVERIFY(!out.contains("spli")); // held back: it may be the start of a secret
        QVERIFY(s.pendingBytes() <= r.maxPatternLength() - 1);
        out += s.write("tsec");
        out += s.write("ret done\nnext line\n");
        out += s.flush();
        QCOMPARE(out, "log: " + kMask + " done\nnext line\n");
        QCOMPARE(s.pendingBytes(), 0);
        // A flush ends an output: a secret cannot span it.
        RedactingStream t(r);
        QByteArray two = t.write("splits");
        two += t.flush();
        two += t.write("ecret");
        two += t.flush();
        QCOMPARE(two, QByteArray("splitsecret"));
    }

    void noSecretsPassesThrough()
    {
        const Redactor r;
        QVERIFY(r.isEmpty());
        RedactingStream s(r);
        QCOMPARE(s.write("abc"), QByteArray("abc"));
        QCOMPARE(s.pendingBytes(), 0);
        QCOMPARE(s.flush(), QByteArray());
        QCOMPARE(r.redactString(QStringLiteral(u"ünïcode")), QStringLiteral(u"ünïcode"));
    }

    void qstringOverload()
    {
        const Redactor r = Redactor::fromStrings(QStringList{QStringLiteral(u"пароль-секрет")});
        QCOMPARE(r.redactString(QStringLiteral(u"ключ: пароль-секрет!")), QStringLiteral(u"ключ: ((redacted))!"));
    }

    void patternCatalogue()
    {
        const QList<QByteArray> p = redactionPatterns("hunter22", Redactor::kMinimumSecretLength);
        QVERIFY(p.contains("hunter22"));
        QVERIFY(p.contains(QByteArray("hunter22").toBase64()));
        QCOMPARE(p.size(), QSet<QByteArray>(p.cbegin(), p.cend()).size()); // no duplicates
        for (const QByteArray &x : p)
            QVERIFY(x.size() >= Redactor::kMinimumSecretLength);
        QVERIFY(redactionPatterns("ab", Redactor::kMinimumSecretLength).isEmpty());
    }

    void concurrentSharedRedactor()
    {
        QList<QByteArray> secrets;
        for (int i = 0; i < 20; ++i)
            secrets << "shared-secret-" + QByteArray::number(i * 7919);
        const Redactor r(secrets);
        QByteArray text;
        for (int i = 0; i < 2000; ++i)
            text += "line " + QByteArray::number(i) + " " + secrets[i % secrets.size()] + " end\n";
        const QByteArray expected = r.redact(text);
        std::atomic_int bad = 0;
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                const Redactor copy = r; // copies share the automaton
                RedactingStream s(copy);
                QByteArray out;
                for (qsizetype i = 0; i < text.size(); i += 37 + t)
                    out += s.write(QByteArrayView(text).sliced(i, std::min<qsizetype>(37 + t, text.size() - i)));
                out += s.flush();
                if (out != expected)
                    ++bad;
            });
        }
        for (auto &th : threads)
            th.join();
        QCOMPARE(bad.load(), 0);
        for (const QByteArray &s : secrets)
            QVERIFY(!expected.contains(s));
    }

    // 100 MB of log with 50 secrets in it, in 64 KiB chunks. PANDO_REDACT_BENCH_MB changes the size.
    void throughput()
    {
        const int mb = qEnvironmentVariableIsSet("PANDO_REDACT_BENCH_MB")
                           ? qEnvironmentVariableIntValue("PANDO_REDACT_BENCH_MB")
                           : 100;
        QRandomGenerator rng(42);
        QList<QByteArray> secrets;
        for (int i = 0; i < 50; ++i) {
            QByteArray s;
            const int len = 16 + int(rng.bounded(25));
            for (int j = 0; j < len; ++j)
                s += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_!@#%+/= \""[rng.bounded(73)];
            secrets << s;
        }
        QElapsedTimer build;
        build.start();
        const Redactor r(secrets);
        const qint64 buildMs = build.elapsed();
        // A 1 MiB block of realistic lines, one in 50 carrying a secret in some form.
        QByteArray block;
        int line = 0;
        while (block.size() < 1024 * 1024) {
            block += "2026-11-29T12:00:00.000Z INFO step=build pid=" + QByteArray::number(line) +
                     " compiling src/module_" + QByteArray::number(line % 97) + ".cpp [" +
                     QByteArray::number(line * 31 % 1000) + "/1000] ok";
            if (line % 50 == 0) {
                const QByteArray &s = secrets[line / 50 % secrets.size()];
                block += (line / 50) % 2 ? QByteArray(" token=" + s)
                                         : QByteArray(" auth=Basic " + QByteArray("ci:" + s).toBase64());
            }
            block += '\n';
            ++line;
        }
        const qint64 total = qint64(mb) * 1024 * 1024;
        RedactingStream stream(r);
        qint64 outBytes = 0;
        qint64 masks = 0;
        QElapsedTimer t;
        t.start();
        for (qint64 done = 0; done < total; done += block.size()) {
            for (qsizetype i = 0; i < block.size(); i += 64 * 1024) {
                const QByteArray out =
                    stream.write(QByteArrayView(block).sliced(i, std::min<qsizetype>(64 * 1024, block.size() - i)));
                outBytes += out.size();
                if (done == 0)
                    masks += out.count(kMask);
            }
        }
        outBytes += stream.flush().size();
        const qint64 ms = std::max<qint64>(t.elapsed(), 1);
        const double mbps = double(total) / (1024.0 * 1024.0) / (double(ms) / 1000.0);
        qInfo("redact throughput: %d MiB, %d secrets, %lld patterns, automaton built in %lld ms, scanned in %lld ms: "
              "%.0f MiB/s",
              mb, int(secrets.size()), qlonglong(r.patternCount()), qlonglong(buildMs), qlonglong(ms), mbps);
        QVERIFY(masks > 0);
        QVERIFY(outBytes > 0);

        // The unfriendly case: random text from the secrets' own alphabet, where many byte pairs
        // begin a pattern and the skip helps least.
        QByteArray noise(1024 * 1024, Qt::Uninitialized);
        const QByteArray alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_!@#%+/= \"");
        for (char &c : noise)
            c = alphabet[rng.bounded(int(alphabet.size()))];
        const qint64 noiseTotal = total / 4;
        RedactingStream noisy(r);
        t.restart();
        for (qint64 done = 0; done < noiseTotal; done += noise.size()) {
            for (qsizetype i = 0; i < noise.size(); i += 64 * 1024)
                outBytes += noisy.write(QByteArrayView(noise).sliced(i, 64 * 1024)).size();
        }
        outBytes += noisy.flush().size();
        const qint64 noiseMs = std::max<qint64>(t.elapsed(), 1);
        qInfo("redact throughput, random text over the secrets' alphabet: %lld MiB in %lld ms: %.0f MiB/s",
              qlonglong(noiseTotal / (1024 * 1024)), qlonglong(noiseMs),
              double(noiseTotal) / (1024.0 * 1024.0) / (double(noiseMs) / 1000.0));
        // Nothing of any secret got through in the first block.
        const QByteArray once = r.redact(block);
        for (const QByteArray &s : secrets)
            QVERIFY(!once.contains(s));
    }
};

QTEST_GUILESS_MAIN(TestRedactor)
#include "tst_redactor.moc"
