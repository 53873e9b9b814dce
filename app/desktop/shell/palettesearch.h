#pragma once
// The Ctrl+K palette's matches (DESKTOP.md: "jump to any app or pipeline"): the views, the apps,
// the pipelines and a few actions whose name matches what was typed, best first. A prefix beats
// a word inside the name, which beats the letters in order ("hwd" finds "hello-world").
// PaletteSearch.qml shows them and Main.qml carries out the chosen one.
//
// Threading: GUI thread, reading the desktop's models.

#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class AppsModel;
class PipelinesModel;

class PaletteSearch : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.palette is the one")

public:
    PaletteSearch(AppsModel *apps, PipelinesModel *pipelines, QObject *parent = nullptr);

    // Each match as {kind: "view"|"app"|"pipeline"|"action", key, label, hint, state}: key is the
    // view's index, the app's or pipeline's name or the action's id ("new-app", "deploy",
    // "refresh"); state a DisplayState value, or -1. At most MaxEntries.
    Q_INVOKABLE QVariantList entries(const QString &query) const;

    // How well query matches text: -1 not at all, else lower is better (0: a prefix).
    static int score(const QString &query, const QString &text);

    static constexpr int MaxEntries = 50;

private:
    AppsModel *m_apps;
    PipelinesModel *m_pipelines;
};

} // namespace pando::desktop
