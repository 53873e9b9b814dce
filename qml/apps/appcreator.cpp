#include "qml/apps/appcreator.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlComponent>

using namespace Qt::StringLiterals;

namespace pando::desktop {

void AppCreator::setSessionObject(QObject *session)
{
    setSession(sessionOf(session, this));
}

void AppCreator::setSession(Session *session)
{
    if (m_session == session)
        return;
    m_session = session;
    Q_EMIT sessionChanged();
}

QString AppCreator::importProblem(QQmlEngine *engine, const QString &module)
{
    QQmlComponent probe(engine);
    probe.setData("import " + module.toUtf8() + "\nimport QtQml\nQtObject {}\n", QUrl());
    return probe.isError() ? probe.errorString().trimmed() : QString();
}

QString AppCreator::fileChooserProblem() const
{
    // Where the desktop offers no file dialog of its own, Qt shows one written in QML on top of
    // Qt.labs.folderlistmodel; Qt 6.4 crashes opening it when that module is missing.
    QQmlEngine *engine = qmlEngine(this);
    if (!engine || importProblem(engine, u"Qt.labs.folderlistmodel"_s).isEmpty())
        return {};
    return tr("Choosing a file needs the package qml6-module-qt-labs-folderlistmodel, which is not installed: "
              "type the file's path instead, or install it (sudo apt install qml6-module-qt-labs-folderlistmodel).");
}

void AppCreator::clearError()
{
    setFailure({}, {});
}

void AppCreator::loadBranches(const QString &connection, const QString &repo)
{
    const int generation = ++m_branchesGeneration;
    m_branches.clear();
    m_branchesError.clear();
    Q_EMIT branchesChanged();
    if (connection.isEmpty() || repo.isEmpty() || !m_session)
        return;
    QPointer<AppCreator> self(this);
    m_session->sourceConnectionBranches(connection, repo, [self, generation](const Result<QJsonArray> &answer) {
        if (!self || generation != self->m_branchesGeneration)
            return;
        if (!answer) {
            self->m_branchesError = answer.error().message;
        } else {
            for (const QJsonValue value : *answer)
                self->m_branches << value.toObject().value(u"name"_s).toString();
        }
        Q_EMIT self->branchesChanged();
    });
}

void AppCreator::setFailure(const QString &error, const QString &field)
{
    m_error = error;
    m_errorField = field;
    Q_EMIT stateChanged();
}

void AppCreator::createFromRepository(const QString &name, const QString &repo, const QString &ref, int port,
                                      bool deployNow)
{
    // What the form can tell at once; everything else (the name's form, the URL's scheme) is the
    // server's to judge, and its answer names the field.
    const QString trimmedName = name.trimmed();
    const QString trimmedRepo = repo.trimmed();
    if (trimmedName.isEmpty())
        return setFailure(tr("Give the app a name"), u"name"_s);
    if (trimmedRepo.isEmpty())
        return setFailure(tr("Say which git repository to deploy from"), u"source.repo"_s);
    if (port < 0 || port > 65535)
        return setFailure(tr("The port the app listens on is a number from 1 to 65535"), u"run.port"_s);
    QJsonObject source{{u"repo"_s, trimmedRepo}};
    if (!ref.trimmed().isEmpty())
        source.insert(u"ref"_s, ref.trimmed());
    QJsonObject spec{{u"name"_s, trimmedName}, {u"source"_s, source}};
    // 0: the port the built image exposes (its EXPOSE), found when it deploys.
    if (port > 0)
        spec.insert(u"run"_s, QJsonObject{{u"port"_s, port}});
    create(QJsonDocument(spec).toJson(QJsonDocument::Compact), {}, deployNow);
}

void AppCreator::createFromImage(const QString &name, const QString &image, int port, bool deployNow)
{
    const QString trimmedName = name.trimmed();
    const QString trimmedImage = image.trimmed();
    if (trimmedName.isEmpty())
        return setFailure(tr("Give the app a name"), u"name"_s);
    if (trimmedImage.isEmpty())
        return setFailure(tr("Say which image to deploy, as docker pull names it (nginx:1.27)"), u"source.image"_s);
    if (port < 0 || port > 65535)
        return setFailure(tr("The port the app listens on is a number from 1 to 65535"), u"run.port"_s);
    QJsonObject spec{{u"name"_s, trimmedName}, {u"source"_s, QJsonObject{{u"image"_s, trimmedImage}}}};
    // 0: the port the image exposes (its EXPOSE), found when it deploys.
    if (port > 0)
        spec.insert(u"run"_s, QJsonObject{{u"port"_s, port}});
    create(QJsonDocument(spec).toJson(QJsonDocument::Compact), {}, deployNow);
}

QString AppCreator::localPath(const QUrl &file) const
{
    return file.isLocalFile() ? file.toLocalFile() : file.toString();
}

void AppCreator::createFromFile(const QString &pathOrUrl, bool deployNow)
{
    const QString trimmed = pathOrUrl.trimmed();
    const QString path = trimmed.startsWith(u"file:"_s) ? localPath(QUrl(trimmed)) : trimmed;
    const QString shown = QFileInfo(path).fileName();
    if (path.isEmpty())
        return setFailure(tr("Choose a spec file"), u"file"_s);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return setFailure(tr("Cannot read %1: %2").arg(path, f.errorString()), shown);
    if (f.size() > MaxSpecBytes)
        return setFailure(tr("%1 is larger than 1 MiB; a spec is a short YAML or JSON file").arg(shown), shown);
    create(f.readAll(), shown, deployNow);
}

void AppCreator::create(const QByteArray &specText, const QString &origin, bool deployNow)
{
    if (!m_session || m_session->state() != Session::State::Connected)
        return setFailure(tr("Not connected: the app cannot be created now"), {});
    m_busy = true;
    setFailure({}, {});
    QPointer<AppCreator> self(this);
    QPointer<Session> session(m_session);
    m_session->createApp(specText, [self, session, origin, deployNow](const Result<QJsonObject> &app) {
        if (!self)
            return;
        if (!app) {
            const Error &e = app.error();
            self->m_busy = false;
            QString text = e.text();
            if (!e.hint.isEmpty())
                text = tr("%1 — %2").arg(text, e.hint);
            if (!origin.isEmpty())
                text = tr("%1: %2").arg(origin, text);
            return self->setFailure(text, e.where.isEmpty() ? origin : e.where);
        }
        const QString name = app->value(u"name"_s).toString();
        if (!deployNow || !session) {
            self->m_busy = false;
            Q_EMIT self->stateChanged();
            Q_EMIT self->created(name, false);
            return;
        }
        session->deploy(name, {}, [self, name](const Result<QJsonObject> &queued) {
            if (!self)
                return;
            self->m_busy = false;
            // The app exists either way; a refused deploy is said, and the app can be deployed later.
            if (!queued)
                self->setFailure(tr("%1 was created, but its deploy was refused: %2").arg(name, queued.error().text()),
                                 {});
            else
                Q_EMIT self->stateChanged();
            Q_EMIT self->created(name, queued.has_value());
        });
    });
}

} // namespace pando::desktop
