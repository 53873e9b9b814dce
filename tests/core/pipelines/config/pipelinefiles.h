#pragma once
// Pipeline files for the config tests: the ones kept beside them, and small ones made up.

#include "tests/support/component.h"

#include <QByteArray>
#include <QFile>
#include <QString>

namespace pando::test {

// A file kept next to the config tests (example-pipeline.yml, anchored-pipeline.yml, ...).
inline QByteArray corpusFile(const QString &name)
{
    QFile file(sourceDir() + QStringLiteral("/tests/core/pipelines/config/") + name);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// A pipeline of these jobs over these resources (by default one git resource, "repo").
inline QByteArray pipelineWith(const QByteArray &jobs, const QByteArray &resources = "- name: repo\n  type: git\n")
{
    return "resources:\n" + resources + "jobs:\n" + jobs;
}

} // namespace pando::test
