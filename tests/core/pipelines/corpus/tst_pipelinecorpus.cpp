// The pipeline corpus (tests/corpus/pipelines): real-world-shaped Concourse pipelines, each read
// as `pando pipelines set` reads it (no vars file, every ((var)) left for run time). What each
// file gets is listed in the corpus's expected.txt: a file that starts to be accepted, or one
// that is refused elsewhere or for another reason, fails here until the list says so, so the
// share accepted only moves on purpose. The test prints the share and why each refused file was.

#include "core/pipelines/config/pipelineconfig.h"

#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core::pipelines;

class TestPipelineCorpus : public QObject {
    Q_OBJECT

    QString m_dir = pando::test::sourceDir() + u"/tests/corpus/pipelines"_s;

    // file → "accepted" or the `where` of the refusal.
    QMap<QString, QString> expected()
    {
        QMap<QString, QString> out;
        QFile file(m_dir + u"/expected.txt"_s);
        if (!file.open(QIODevice::ReadOnly))
            return out;
        for (const QString &line : QString::fromUtf8(file.readAll()).split(u'\n')) {
            const QString trimmed = line.trimmed();
            if (trimmed.isEmpty() || trimmed.startsWith(u'#'))
                continue;
            out.insert(trimmed.section(u' ', 0, 0), trimmed.section(u' ', 1).trimmed());
        }
        return out;
    }

private Q_SLOTS:
    void eachFileGetsWhatTheListSays()
    {
        const QStringList files = QDir(m_dir).entryList({u"*.yml"_s}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 20, "the corpus is missing");
        const QMap<QString, QString> want = expected();
        int accepted = 0;
        QStringList report, mismatches;
        for (const QString &name : files) {
            QFile file(m_dir + u'/' + name);
            QVERIFY(file.open(QIODevice::ReadOnly));
            InterpolationSources sources;
            sources.allowUndefined = true; // as `set` reads it: vars get their values at run time
            sources.secretMode = InterpolationSources::SecretMode::Placeholder;
            const auto parsed = parsePipeline(file.readAll(), sources);
            const QString got = parsed ? u"accepted"_s : u"refused "_s + parsed.error().where;
            if (parsed)
                ++accepted;
            else
                report << u"  %1: %2"_s.arg(name, parsed.error().text());
            if (got != want.value(name))
                mismatches << u"%1 %2 (expected: %3)"_s.arg(name, got, want.value(name));
        }
        qInfo("pipeline corpus: %d of %d accepted (%d%%)", accepted, int(files.size()),
              int(100 * accepted / files.size()));
        for (const QString &line : std::as_const(report))
            qInfo("%s", qPrintable(line));
        for (const QString &listed : want.keys())
            if (!files.contains(listed))
                mismatches << u"%1 is listed but not in the corpus"_s.arg(listed);
        // Every file that moved, in expected.txt's form, so that the list is mended at once.
        QVERIFY2(mismatches.isEmpty(), qPrintable(u"\n"_s + mismatches.join(u'\n')));
    }
};

QTEST_GUILESS_MAIN(TestPipelineCorpus)
#include "tst_pipelinecorpus.moc"
