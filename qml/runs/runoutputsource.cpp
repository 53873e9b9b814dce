#include "qml/runs/runoutputsource.h"

namespace pando::desktop {

RunOutputSource::RunOutputSource(QObject *parent) : LogSource(parent)
{}

RunOutputSource::~RunOutputSource() = default;

void RunOutputSource::setOutput(StepOutputModel *output)
{
    if (m_output == output)
        return;
    if (m_output)
        disconnect(m_output, nullptr, this, nullptr);
    m_output = output;
    if (m_output) {
        connect(m_output, &QAbstractItemModel::modelReset, this, &RunOutputSource::reload);
        connect(m_output, &QAbstractItemModel::rowsInserted, this,
                [this](const QModelIndex &, int first, int last) { append(first, last); });
    }
    reload();
    Q_EMIT outputChanged();
}

void RunOutputSource::reload()
{
    // Another step's or run's output: its lines are numbered from 1.
    m_model->reset();
    if (m_output && m_output->rowCount() > 0)
        append(0, m_output->rowCount() - 1);
}

void RunOutputSource::append(int first, int last)
{
    // One batch per stream run, so that a step's stderr stays marked as such.
    QList<QByteArray> batch;
    LogModel::Stream batchStream = LogModel::Stdout;
    const auto flush = [&] {
        if (!batch.isEmpty())
            m_model->appendLines(batch, batchStream);
        batch.clear();
    };
    for (int row = first; row <= last; ++row) {
        const QModelIndex i = m_output->index(row);
        const LogModel::Stream stream = i.data(StepOutputModel::StreamRole).toString() == QLatin1String("stderr")
                                            ? LogModel::Stderr
                                            : LogModel::Stdout;
        if (stream != batchStream)
            flush();
        batchStream = stream;
        // A row holds one line; should one hold several, each becomes a row of the log.
        QByteArray text = i.data(StepOutputModel::RawTextRole).toString().toUtf8();
        while (text.endsWith('\n') || text.endsWith('\r'))
            text.chop(1);
        batch.append(text.split('\n'));
    }
    flush();
}

} // namespace pando::desktop
