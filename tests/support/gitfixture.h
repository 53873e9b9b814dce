#pragma once
// Real git repositories for tests: bare repositories in a temporary directory, filled with
// commits, branches and annotated tags through the git command line, reached by file:// URLs.
// The adapter under test uses libgit2; the fixture deliberately uses the git CLI instead, so
// what is tested is read back by a second, independent implementation.

#include <QMap>
#include <QStringList>
#include <QTemporaryDir>

#include <optional>

namespace pando::test {

struct GitFile {
    QByteArray content;      // file content, or the link target when symlink is set
    bool executable = false; // mode 100755
    bool symlink = false;    // mode 120000
};

// path (relative, '/'-separated) → file. A commit adds or replaces these paths on its branch.
using GitFiles = QMap<QString, GitFile>;

class GitFixture {
public:
    GitFixture();

    // False when git is not installed or the temporary directory could not be made.
    bool isValid() const;
    static bool gitAvailable();
    // The last failure of a git command, with its output.
    QString errorString() const { return m_error; }
    QString root() const { return m_dir.path(); }

    // Creates an empty bare repository (default branch "main"); returns its file:// URL, or
    // an empty string on failure.
    QString createRepository(const QString &name);
    // Commits files on top of branch (created from the current one when new); pushes it to
    // the bare repository and returns the commit id, or an empty string on failure.
    QString commit(const QString &repo, const QString &branch, const GitFiles &files,
                   const QString &message = QStringLiteral("change"));
    // An annotated tag at target (a commit id or branch); pushes it; returns the tag object id.
    QString tag(const QString &repo, const QString &name, const QString &target,
                const QString &message = QStringLiteral("release"));
    // Removes a branch from the bare repository.
    bool deleteBranch(const QString &repo, const QString &branch);

    QString url(const QString &repo) const;
    QString barePath(const QString &repo) const;
    QString workPath(const QString &repo) const;

    // Runs git with args in dir; returns trimmed stdout, or nullopt (and sets errorString()).
    std::optional<QString> git(const QStringList &args, const QString &dir = {});

private:
    QTemporaryDir m_dir;
    QString m_error;
};

} // namespace pando::test
