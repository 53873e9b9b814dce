#pragma once
// RunOutputSource: a run's step output (RunTreeModel.output, the selected step's lines or the
// whole run's) as a LogSource, so that it shows in the desktop's log view with its ANSI colours
// rendered, line numbers and search, like an app's logs. It mirrors the output model: a reset
// (another step or run selected) starts the log again, appended lines are appended.
//
// Threading: GUI thread, like the models it reads.

#include "qml/logs/logsource.h"
#include "qml/runs/runtreemodel.h"

#include <QPointer>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class RunOutputSource : public pando::desktop::LogSource {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(pando::desktop::StepOutputModel *output READ output WRITE setOutput NOTIFY outputChanged)

public:
    explicit RunOutputSource(QObject *parent = nullptr);
    ~RunOutputSource() override;

    StepOutputModel *output() const { return m_output; }
    void setOutput(StepOutputModel *output);

Q_SIGNALS:
    void outputChanged();

private:
    void reload();
    void append(int first, int last);

    QPointer<StepOutputModel> m_output;
};

} // namespace pando::desktop
