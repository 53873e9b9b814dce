// The desktop app's translations: the checked-in .ts files hold exactly the strings the sources
// under qml/ and app/desktop/ have (scripts/update-translations runs lupdate into copies of them, and the
// copies must not differ), every entry is translated, and pando-desktop speaks German when asked
// with --lang de or through the system's LANGUAGE.

#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace Qt::StringLiterals;

namespace {

const QString refreshHint = u"refresh them with scripts/update-translations (or the build target "
                            u"update_translations), translate the new entries in Qt Linguist or by hand, "
                            u"and commit the .ts files"_s;

struct Message {
    QString context;
    QString source;
    QString comment;
    bool numerus = false;
    bool unfinished = false;
    QStringList translations; // one per plural form, or the one translation

    QString key() const { return context + u'\x1f' + source + u'\x1f' + comment + (numerus ? u"\x1fn"_s : u""_s); }
    QString describe() const
    {
        QString text = u"[%1] \"%2\""_s.arg(context, source);
        if (!comment.isEmpty())
            text += u" (comment: %1)"_s.arg(comment);
        return text;
    }
};

// The messages of a .ts file; an empty list and `error` set when it cannot be read.
QList<Message> readTs(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = u"cannot open %1: %2"_s.arg(path, file.errorString());
        return {};
    }
    QList<Message> messages;
    QString context;
    QXmlStreamReader xml(&file);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement)
            continue;
        const auto name = xml.name();
        if (name == "name"_L1) {
            context = xml.readElementText();
        } else if (name == "message"_L1) {
            Message m;
            m.context = context;
            m.numerus = xml.attributes().value("numerus"_L1) == "yes"_L1;
            while (xml.readNextStartElement()) {
                if (xml.name() == "source"_L1) {
                    m.source = xml.readElementText();
                } else if (xml.name() == "comment"_L1) {
                    m.comment = xml.readElementText();
                } else if (xml.name() == "translation"_L1) {
                    const QString type = xml.attributes().value("type"_L1).toString();
                    m.unfinished = type == "unfinished"_L1 || type == "vanished"_L1 || type == "obsolete"_L1;
                    if (m.numerus) {
                        while (xml.readNextStartElement())
                            m.translations.append(xml.readElementText());
                    } else {
                        m.translations.append(xml.readElementText());
                    }
                    if (m.translations.isEmpty() || m.translations.contains(QString()))
                        m.unfinished = true;
                } else {
                    xml.skipCurrentElement();
                }
            }
            messages.append(m);
        }
    }
    if (xml.hasError()) {
        *error = u"%1:%2: %3"_s.arg(path).arg(xml.lineNumber()).arg(xml.errorString());
        return {};
    }
    return messages;
}

QStringList describeAll(const QList<Message> &messages, const QSet<QString> &keys)
{
    QStringList lines;
    for (const Message &m : messages) {
        if (keys.contains(m.key()))
            lines.append(u"    "_s + m.describe());
    }
    return lines;
}

} // namespace

class TestTranslations : public QObject {
    Q_OBJECT

private:
    QString m_tsDir;
    QStringList m_tsFiles; // file names, e.g. pando_de.ts
    QTemporaryDir m_refreshed;
    QString m_lupdateOutput;

private Q_SLOTS:
    void initTestCase()
    {
        m_tsDir = pando::test::sourceDir() + u"/translations"_s;
        m_tsFiles = QDir(m_tsDir).entryList({u"pando_*.ts"_s}, QDir::Files, QDir::Name);
        QVERIFY2(
            m_tsFiles.contains(u"pando_en.ts"_s) && m_tsFiles.contains(u"pando_de.ts"_s),
            qPrintable(u"%1 must hold pando_en.ts and pando_de.ts, has: %2"_s.arg(m_tsDir, m_tsFiles.join(u", "))));
        QVERIFY(m_refreshed.isValid());

        // The same command a developer runs, into copies: what the files would be if refreshed now.
        QProcess lupdate;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"LUPDATE"_s, QStringLiteral(PANDO_LUPDATE));
        lupdate.setProcessEnvironment(env);
        lupdate.setProcessChannelMode(QProcess::MergedChannels);
        const QString script = pando::test::sourceDir() + u"/scripts/update-translations"_s;
        lupdate.start(u"bash"_s, {script, u"--output-dir"_s, m_refreshed.path()});
        QVERIFY2(lupdate.waitForFinished(180'000), qPrintable(u"%1 did not finish"_s.arg(script)));
        m_lupdateOutput = QString::fromLocal8Bit(lupdate.readAll());
        QVERIFY2(
            lupdate.exitStatus() == QProcess::NormalExit && lupdate.exitCode() == 0,
            qPrintable(
                u"%1 --output-dir failed (exit %2):\n%3"_s.arg(script).arg(lupdate.exitCode()).arg(m_lupdateOutput)));
    }

    // lupdate warns "file:line: Qualifying with unknown namespace/class ::X" when it cannot see a
    // class's header: the string then lands in a context tr() never looks up, and stays English.
    void lupdateUnderstandsEverySource()
    {
        static const QRegularExpression warning(u"^\\S+:\\d+: .*$"_s, QRegularExpression::MultilineOption);
        QStringList warnings;
        for (auto it = warning.globalMatch(m_lupdateOutput); it.hasNext();)
            warnings.append(u"    "_s + it.next().captured(0));
        QVERIFY2(warnings.isEmpty(),
                 qPrintable(u"lupdate could not place %1 string(s) in their class's context (include the header "
                            u"as \"app/desktop/...\" and declare the class in it):\n%2"_s.arg(warnings.size())
                                .arg(warnings.join(u'\n'))));
    }

    void upToDate_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &f : std::as_const(m_tsFiles))
            QTest::newRow(qPrintable(f)) << f;
    }

    void upToDate()
    {
        QFETCH(QString, file);
        QString error;
        const QList<Message> checkedIn = readTs(m_tsDir + u'/' + file, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QList<Message> fresh = readTs(m_refreshed.filePath(file), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));

        QSet<QString> have, want;
        for (const Message &m : checkedIn)
            have.insert(m.key());
        for (const Message &m : fresh)
            want.insert(m.key());
        const QSet<QString> missing = want - have;
        const QSet<QString> stale = have - want;
        QStringList problems;
        if (!missing.isEmpty())
            problems << u"  %1 string(s) in the sources but not in the file:"_s.arg(missing.size())
                     << describeAll(fresh, missing);
        if (!stale.isEmpty())
            problems << u"  %1 string(s) in the file but no longer in the sources:"_s.arg(stale.size())
                     << describeAll(checkedIn, stale);
        // QTest cuts long messages: the whole list goes to the log first.
        const QString report =
            u"translations/%1 is out of date:\n%2\n%3"_s.arg(file, problems.join(u'\n'), refreshHint);
        if (!problems.isEmpty())
            qWarning().noquote() << report;
        QVERIFY2(problems.isEmpty(),
                 qPrintable(u"%1 is out of date: %2 missing, %3 stale (listed above); %4"_s.arg(file)
                                .arg(missing.size())
                                .arg(stale.size())
                                .arg(refreshHint)));
    }

    // pando_en.ts holds the English plural forms only; every other language every string.
    void everyEntryTranslated_data() { upToDate_data(); }

    void everyEntryTranslated()
    {
        QFETCH(QString, file);
        QString error;
        const QList<Message> messages = readTs(m_tsDir + u'/' + file, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(!messages.isEmpty(), qPrintable(u"%1 has no entries"_s.arg(file)));
        QStringList unfinished;
        for (const Message &m : messages) {
            if (m.unfinished)
                unfinished.append(u"    "_s + m.describe());
        }
        if (!unfinished.isEmpty())
            qWarning().noquote() << u"translations/%1: untranslated entries:\n%2"_s.arg(file, unfinished.join(u'\n'));
        QVERIFY2(unfinished.isEmpty(),
                 qPrintable(u"%1 has %2 untranslated entr(y/ies) (type=\"unfinished\" or an empty form; listed "
                            u"above); %3"_s.arg(file)
                                .arg(unfinished.size())
                                .arg(refreshHint)));
    }

    // The translation is built into pando-desktop and chosen at start: --help needs no display and
    // shows the program's description, a real translated string.
    void commandLineLanguage_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("languageEnv");
        QTest::addColumn<bool>("german");
        QTest::newRow("--lang de") << QStringList{u"--lang"_s, u"de"_s} << QString() << true;
        QTest::newRow("--lang=de_DE") << QStringList{u"--lang=de_DE"_s} << QString() << true;
        QTest::newRow("LANGUAGE=de") << QStringList{} << u"de"_s << true;
        QTest::newRow("--lang en over LANGUAGE=de") << QStringList{u"--lang"_s, u"en"_s} << u"de"_s << false;
        QTest::newRow("no language") << QStringList{} << QString() << false;
    }

    void commandLineLanguage()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, languageEnv);
        QFETCH(bool, german);

        const QString english = u"Pando Desktop: your apps, deploys, pipelines and approvals."_s;
        QString error;
        const QList<Message> de = readTs(m_tsDir + u"/pando_de.ts"_s, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QString translated;
        for (const Message &m : de) {
            if (m.context == u"main"_s && m.source == english && !m.unfinished)
                translated = m.translations.value(0);
        }
        QVERIFY2(!translated.isEmpty() && translated != english,
                 qPrintable(u"pando_de.ts has no German for [main] \"%1\""_s.arg(english)));

        QProcess program;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const QString &name : {u"LANGUAGE"_s, u"LC_ALL"_s, u"LC_MESSAGES"_s, u"LANG"_s})
            env.remove(name);
        env.insert(u"LC_ALL"_s, u"C.UTF-8"_s);
        if (!languageEnv.isEmpty())
            env.insert(u"LANGUAGE"_s, languageEnv);
        program.setProcessEnvironment(env);
        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), arguments + QStringList{u"--help"_s});
        QVERIFY2(program.waitForFinished(30'000), "pando-desktop --help did not finish");
        const QString out = QString::fromUtf8(program.readAllStandardOutput());
        const QString err = QString::fromUtf8(program.readAllStandardError());
        QVERIFY2(
            program.exitStatus() == QProcess::NormalExit && program.exitCode() == 0,
            qPrintable(
                u"pando-desktop %1 --help: exit %2\n%3"_s.arg(arguments.join(u' ')).arg(program.exitCode()).arg(err)));
        QVERIFY2(out.contains(u"--lang <language>"_s), qPrintable(u"--help does not list --lang:\n"_s + out));
        const QString want = german ? translated : english;
        const QString notWant = german ? english : translated;
        QVERIFY2(out.contains(want) && !out.contains(notWant),
                 qPrintable(u"pando-desktop %1 --help (LANGUAGE=%2) should say \"%3\", printed:\n%4"_s.arg(
                     arguments.join(u' '), languageEnv, want, out)));
    }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "tst_translations.moc"
