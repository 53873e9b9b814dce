#pragma once
// ResourcesModel: the selected pipeline's Resources tab. Rows are its resources (type, last
// check and its error, the pinned version); `versions` lists the selected resource's versions,
// newest first, with the one gets use marked. Pin a version, unpin, and Check now go through it;
// after Check now it reads the resource again until the check has answered.
//
// Threading: a GUI-thread model like its Session; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"

#include <QTimer>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The selected resource's versions, newest first.
class ResourceVersionsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("a resource's versions come from ResourcesModel.versions")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Role {
        VersionTextRole = Qt::UserRole + 1, // "ref: abc123"
        FoundTextRole,                      // when a check found it, local time
        PinnedRole,                         // the version gets use now (pinned)
        SeqRole,
    };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void reset(const QJsonArray &versions);
    QJsonObject version(int row) const;

Q_SIGNALS:
    void countChanged();

private:
    QList<QJsonObject> m_versions;
};

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class ResourcesModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    Q_PROPERTY(QString pipeline READ pipeline WRITE setPipeline NOTIFY pipelineChanged)
    Q_PROPERTY(pando::desktop::ResourceVersionsModel *versions READ versions CONSTANT)
    // The selected resource: a pin or check of it is on its way; why the last one was refused.
    Q_PROPERTY(bool busy READ isBusy NOTIFY actionChanged)
    Q_PROPERTY(QString actionError READ actionError NOTIFY actionChanged)
    // The selected resource's name, and whether it is pinned (and in the config, which the
    // desktop cannot change).
    Q_PROPERTY(QString selectedName READ selectedName NOTIFY selectedChanged)
    Q_PROPERTY(bool selectedPinned READ selectedPinned NOTIFY selectedChanged)
    Q_PROPERTY(bool selectedPinnedInConfig READ selectedPinnedInConfig NOTIFY selectedChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        TypeRole,
        CheckTextRole,      // "checked 12:04:31", "never checked", translated
        CheckErrorRole,     // why the last check failed
        PinnedRole,         // a version is pinned
        PinnedTextRole,     // "pinned to ref: abc (by admin)"; empty when not pinned
        PinnedInConfigRole, // the config pins it (version:)
    };
    Q_ENUM(Role)

    explicit ResourcesModel(QObject *parent = nullptr);
    ~ResourcesModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString pipeline() const { return m_pipeline; }
    void setPipeline(const QString &pipeline);
    ResourceVersionsModel *versions() { return &m_versions; }
    bool isBusy() const { return m_busy; }
    QString actionError() const { return m_actionError; }
    QString selectedName() const;
    bool selectedPinned() const;
    bool selectedPinnedInConfig() const;
    Q_INVOKABLE int rowOf(const QString &resource) const;

    Q_INVOKABLE void refresh() override;
    // Pins the selected resource to the version in this row of `versions`.
    Q_INVOKABLE void pin(int versionRow);
    Q_INVOKABLE void unpin();
    // Checks the selected resource now; versions follow once the check has answered.
    Q_INVOKABLE void checkNow();
    // Checks it from the version in this row of `versions` (fly check-resource --from), so that
    // what was found after it is found again.
    Q_INVOKABLE void checkFrom(int versionRow);

Q_SIGNALS:
    void pipelineChanged();
    void actionChanged();

private:
    void onEvent(const QJsonObject &) override {}
    void sessionReplaced() override;
    void check(const QJsonObject &from);
    void selectionMoved() override;
    void fetchVersions();
    void apply(const QJsonArray &resources);
    void setAction(bool busy, const QString &error);
    void pollCheck();

    QList<QJsonObject> m_rows; // the API's resources, in file order
    QString m_pipeline;
    ResourceVersionsModel m_versions;
    bool m_busy = false;
    QString m_actionError;
    // After Check now: the check time before it, and how many more reads to wait for a newer one.
    qint64 m_checkedBefore = 0;
    int m_pollsLeft = 0;
    QTimer m_poll;
};

} // namespace pando::desktop
