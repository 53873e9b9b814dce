#pragma once
// LogSource: what a log view (LogLines.qml) reads a log through: a LogModel, and what the QML
// must not do itself: turning a line's colour spans and search hits into styled text for the
// light or dark palette, and putting copied rows on the clipboard. AppLogSource feeds it from an
// app's logs; RunOutputSource (Pando.Runs) from a pipeline run's step output.
//
// Threading: GUI-thread object.

#include "app/desktop/logs/logmodel.h"

#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class LogSource : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("a log view reads an AppLogSource or a RunOutputSource")
    Q_PROPERTY(pando::desktop::LogModel *model READ model CONSTANT)
    // One line about the stream: why it ended or failed; empty while all is well.
    Q_PROPERTY(QString status READ status NOTIFY stateChanged)
    // Which palette styledText maps colours 0-15 to.
    Q_PROPERTY(bool dark READ isDark WRITE setDark NOTIFY darkChanged)

public:
    explicit LogSource(QObject *parent = nullptr);
    ~LogSource() override;

    LogModel *model() const { return m_model; }
    QString status() const { return m_status; }
    bool isDark() const { return m_dark; }
    void setDark(bool dark);

    // The line as StyledText for a Text item: its spans' colours for the palette, and bold.
    Q_INVOKABLE QString styledText(const QString &text, const QVariantList &spans) const;
    // What is drawn behind a line's text: ANSI backgrounds and search hits, as
    // [{start, length, color}] in characters (the font is monospace).
    Q_INVOKABLE QVariantList highlights(const QVariantList &spans, const QVariantList &matchRanges) const;
    // Puts rows first..last (inclusive) on the clipboard; answers how many lines were copied.
    Q_INVOKABLE int copyRows(int first, int last) const;

    // ANSI palette colour 0-15 for the light or dark theme.
    static QString paletteColour(int index, bool dark);

Q_SIGNALS:
    void stateChanged();
    void darkChanged();

protected:
    void setStatus(const QString &status);

    LogModel *m_model;
    QString m_status;

private:
    bool m_dark = false;
};

} // namespace pando::desktop
