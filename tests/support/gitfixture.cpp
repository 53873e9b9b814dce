#include "gitfixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QUrl>

#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::test {

GitFixture::GitFixture() = default;

bool GitFixture::gitAvailable()
{
    return !QStandardPaths::findExecutable(u"git"_s).isEmpty();
}

bool GitFixture::isValid() const
{
    return m_dir.isValid() && gitAvailable();
}

QString GitFixture::barePath(const QString &repo) const
{
    return m_dir.filePath(repo + u".git"_s);
}

QString GitFixture::workPath(const QString &repo) const
{
    return m_dir.filePath(u"work/"_s + repo);
}

QString GitFixture::url(const QString &repo) const
{
    return QUrl::fromLocalFile(barePath(repo)).toString();
}

std::optional<QString> GitFixture::git(const QStringList &args, const QString &dir)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // A fixed identity and no user or system configuration: the same commands give the same
    // repositories on every machine.
    env.insert(u"HOME"_s, m_dir.path());
    env.insert(u"GIT_CONFIG_NOSYSTEM"_s, u"1"_s);
    env.insert(u"GIT_CONFIG_GLOBAL"_s, u"/dev/null"_s);
    env.insert(u"GIT_TERMINAL_PROMPT"_s, u"0"_s);
    env.insert(u"GIT_AUTHOR_NAME"_s, u"Pando Test"_s);
    env.insert(u"GIT_AUTHOR_EMAIL"_s, u"test@pando.invalid"_s);
    env.insert(u"GIT_COMMITTER_NAME"_s, u"Pando Test"_s);
    env.insert(u"GIT_COMMITTER_EMAIL"_s, u"test@pando.invalid"_s);
    process.setProcessEnvironment(env);
    if (!dir.isEmpty())
        process.setWorkingDirectory(dir);
    QStringList argv{u"-c"_s, u"init.defaultBranch=main"_s, u"-c"_s, u"core.symlinks=true"_s,
                     u"-c"_s, u"core.fileMode=true"_s,      u"-c"_s, u"protocol.file.allow=always"_s};
    argv += args;
    process.start(u"git"_s, argv);
    if (!process.waitForFinished(60'000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        m_error = u"git %1 failed: %2%3"_s.arg(args.join(u' '), QString::fromUtf8(process.readAllStandardError()),
                                               process.errorString());
        return std::nullopt;
    }
    return QString::fromUtf8(process.readAllStandardOutput()).trimmed();
}

QString GitFixture::createRepository(const QString &name)
{
    QDir().mkpath(m_dir.filePath(u"work"_s));
    if (!git({u"init"_s, u"-q"_s, u"--bare"_s, barePath(name)}))
        return {};
    if (!git({u"init"_s, u"-q"_s, workPath(name)}))
        return {};
    if (!git({u"remote"_s, u"add"_s, u"origin"_s, barePath(name)}, workPath(name)))
        return {};
    return url(name);
}

QString GitFixture::commit(const QString &repo, const QString &branch, const GitFiles &files, const QString &message)
{
    const QString work = workPath(repo);
    const bool hasCommits = git({u"rev-parse"_s, u"-q"_s, u"--verify"_s, u"HEAD"_s}, work).has_value();
    const bool branchExists =
        git({u"rev-parse"_s, u"-q"_s, u"--verify"_s, u"refs/heads/"_s + branch}, work).has_value();
    std::optional<QString> switched;
    if (branchExists)
        switched = git({u"checkout"_s, u"-q"_s, branch}, work);
    else if (hasCommits)
        switched = git({u"checkout"_s, u"-q"_s, u"-b"_s, branch}, work);
    else
        switched = git({u"checkout"_s, u"-q"_s, u"--orphan"_s, branch}, work);
    if (!switched)
        return {};
    for (auto it = files.constBegin(); it != files.constEnd(); ++it) {
        const QString path = QDir(work).filePath(it.key());
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile::remove(path);
        if (it->symlink) {
            if (::symlink(it->content.constData(), QFile::encodeName(path).constData()) != 0) {
                m_error = u"cannot create symlink "_s + path;
                return {};
            }
            continue;
        }
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(it->content) != it->content.size()) {
            m_error = u"cannot write "_s + path;
            return {};
        }
        file.close();
        QFileDevice::Permissions mode =
            QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther;
        if (it->executable)
            mode |= QFileDevice::ExeOwner | QFileDevice::ExeGroup | QFileDevice::ExeOther;
        file.setPermissions(mode);
    }
    if (!git({u"add"_s, u"-A"_s}, work))
        return {};
    if (!git({u"commit"_s, u"-q"_s, u"--allow-empty"_s, u"-m"_s, message}, work))
        return {};
    if (!git({u"push"_s, u"-q"_s, u"--force"_s, u"origin"_s, u"refs/heads/"_s + branch}, work))
        return {};
    return git({u"rev-parse"_s, u"HEAD"_s}, work).value_or(QString());
}

QString GitFixture::tag(const QString &repo, const QString &name, const QString &target, const QString &message)
{
    const QString work = workPath(repo);
    if (!git({u"tag"_s, u"-a"_s, u"-m"_s, message, name, target}, work))
        return {};
    if (!git({u"push"_s, u"-q"_s, u"origin"_s, u"refs/tags/"_s + name}, work))
        return {};
    return git({u"rev-parse"_s, u"refs/tags/"_s + name}, work).value_or(QString());
}

bool GitFixture::deleteBranch(const QString &repo, const QString &branch)
{
    return git({u"push"_s, u"-q"_s, u"origin"_s, u"--delete"_s, branch}, workPath(repo)).has_value();
}

} // namespace pando::test
