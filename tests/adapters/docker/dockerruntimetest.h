#pragma once
// What the tests of DockerRuntime against the real engine share: one runtime, this run's unique
// label value (every object a test creates carries dev.pando.test=<it>, and is removed by it at
// the end), names and labels made from it, and reading a container's whole log.
//
// Threading: the test's thread.

#include "adapters/runtime/docker/dockerruntime.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

namespace pando::test {

class DockerRuntimeTest : public QObject {
protected:
    static inline const QString TestLabel = QStringLiteral("dev.pando.test");

    adapters::docker::DockerRuntime m_runtime;
    QString m_run; // this run's unique label value; empty until beginRun()

    // initTestCase's: skips (fails in CI) without a Docker Engine, makes the base image and this
    // run's label value.
    void beginRun()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), why);
        auto base = DockerHarness::ensureBaseImage();
        QVERIFY2(base.has_value(), qPrintable(base ? QString() : base.error().text()));
        m_run = QStringLiteral("r%1-%2")
                    .arg(QCoreApplication::applicationPid())
                    .arg(QRandomGenerator::global()->generate() % 100000);
    }

    adapters::Labels labels(const QString &app = QStringLiteral("test")) const
    {
        return {{TestLabel, m_run}, {QString::fromLatin1(adapters::LabelApp), app}};
    }
    QString name(const QString &what) const { return QStringLiteral("pando-test-") + what + u'-' + m_run; }

    QList<adapters::LogLine> allLogs(const QString &id)
    {
        QList<adapters::LogLine> lines;
        auto status =
            m_runtime.logs(id, -1, false, CancelToken(), [&](const adapters::LogLine &l) { lines.append(l); });
        if (!status)
            qWarning() << status.error().text();
        return lines;
    }

    // A context of dockerfile, hello.txt, a symlink to it, a .git and a sub/.git, plus files.
    // leftovers, when given, gets what the build tells BuildRequest::leftover, in order.
    Result<QString> buildContext(const QByteArray &dockerfile, const QString &tag, QStringList *progress = nullptr,
                                 const CancelToken &cancel = CancelToken(), const QMap<QString, QByteArray> &files = {},
                                 QList<QPair<QString, qint64>> *leftovers = nullptr)
    {
        QTemporaryDir dir;
        if (!dir.isValid())
            return fail(ErrorCode::Internal, QStringLiteral("no temporary directory"));
        const QDir d(dir.path());
        writeContextFile(d.filePath(QStringLiteral("Dockerfile")), dockerfile);
        writeContextFile(d.filePath(QStringLiteral("hello.txt")), "hello from the context\n");
        QFile::link(QStringLiteral("hello.txt"), d.filePath(QStringLiteral("link")));
        d.mkpath(QStringLiteral(".git"));
        writeContextFile(d.filePath(QStringLiteral(".git/HEAD")), "ref: refs/heads/main\n");
        d.mkpath(QStringLiteral("sub/.git"));
        writeContextFile(d.filePath(QStringLiteral("sub/.git/keep")), "nested .git stays\n");
        for (auto it = files.cbegin(); it != files.cend(); ++it) {
            d.mkpath(QFileInfo(d.filePath(it.key())).path());
            writeContextFile(d.filePath(it.key()), it.value());
        }
        adapters::BuildRequest request;
        request.contextDir = dir.path();
        request.dockerfile = QStringLiteral("Dockerfile");
        request.tag = tag;
        request.labels = labels(QStringLiteral("ctx"));
        if (leftovers)
            request.leftover = [leftovers](const QString &id, qint64 bytes) {
                leftovers->append({id, bytes});
            };
        return m_runtime.build(request, cancel, [&](const QString &line) {
            if (progress)
                progress->append(line);
        });
    }

    static bool writeContextFile(const QString &path, const QByteArray &content)
    {
        QFile f(path);
        return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
    }

    // Removes every container and image of this run; fails the test when one stays.
    void removeRunObjects()
    {
        if (auto list = m_runtime.containers({{TestLabel, m_run}})) {
            for (const adapters::ContainerInfo &c : *list)
                QVERIFY(m_runtime.remove(c.id));
        }
        if (auto list = m_runtime.images({{TestLabel, m_run}})) {
            for (const adapters::ImageInfo &i : *list)
                QVERIFY(m_runtime.removeImage(i.id));
        }
        auto left = m_runtime.containers({{TestLabel, m_run}});
        QVERIFY(left && left->isEmpty());
    }
};

} // namespace pando::test
