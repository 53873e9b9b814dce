#pragma once
// Package workspace materializes the per-step filesystem views a run's steps work in: each
// step gets its own directory with its declared inputs copied in (copy-on-write where the
// filesystem offers it) and its declared outputs as empty directories; a run's artifacts are
// the named trees steps hand to each other (a get's fetched tree, a task's outputs), mapped
// to a task's own names through input_mapping/output_mapping as in Concourse.
//
// Layout under the root: <run>/artifacts/<name>/ and <run>/steps/<step>/. Copies never follow
// a symlink: links are copied as links, whatever they point at.
//
// Threading: a Workspace holds only its root; calls for different runs or steps may run on
// any threads at once. Two calls on the same step or artifact must not overlap.

#include "adapters/api/error.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace pando::core {

struct WorkspaceInput {
    QString name;
    QString path; // relative to the step's dir; empty: the name
    bool optional = false;
};

struct WorkspaceOutput {
    QString name;
    QString path; // relative to the step's dir; empty: the name
};

struct StepLayout {
    QList<WorkspaceInput> inputs;
    QList<WorkspaceOutput> outputs;
    // A container task may run as a user other than the one Pando runs as (run.user, or its
    // image's USER), and Pando makes what it makes private (umask 077). With this set, the step's
    // directory, its input copies and its output directories are open to every user (directories
    // 0777, files readable and writable by all), so that user can read its inputs and write its
    // outputs, as Concourse users ask for (concourse/concourse#403). Only the container the step
    // directory is mounted into sees them: the workspace around it stays 0700.
    bool openToTaskUser = false;
    QMap<QString, QString> inputMapping;  // the task's input name -> the run's artifact name
    QMap<QString, QString> outputMapping; // the task's output name -> the run's artifact name
};

struct StepDirs {
    QString dir;                    // the step's working directory
    QMap<QString, QString> inputs;  // input name -> absolute path (missing optional inputs absent)
    QMap<QString, QString> outputs; // output name -> absolute path
};

struct CopyStats {
    qint64 files = 0;
    qint64 bytes = 0;
    qint64 cloned = 0; // files that share their blocks with the source (FICLONE)
    qint64 ranged = 0; // files copied in the kernel (copy_file_range)
    qint64 plain = 0;  // files copied through user space
};

// Copies the tree at from into to (which must not exist), keeping permission bits and copying
// symlinks as symlinks. A device, fifo or socket is an error naming it.
// With openToAll, modes are widened as StepLayout::openToTaskUser says instead.
Result<CopyStats> copyTree(const QString &from, const QString &to, bool openToAll = false);

// The directory root/relative, made where missing, reached without following a symbolic link
// at any component below root (openat with O_NOFOLLOW, one component at a time): a step that
// left a link where a directory should be (its cache, say) cannot point a later mount or
// read at a path outside root. A link found there is removed (the link, never what it points
// at) and reported as an error naming it, so the next run starts clean. relative must not
// hold "..". Returns root/relative.
// openToAll: the directory itself (not its parents) is made 0777, for a task's cache when the task
// may run as another user.
Result<QString> makeDirBeneath(const QString &root, const QString &relative, bool openToAll = false);
// The same check for a directory that must already exist (a step's output), making nothing.
Status checkDirBeneath(const QString &root, const QString &relative);

class Workspace {
public:
    explicit Workspace(QString root);

    const QString &root() const { return m_root; }
    QString runDir(const QString &runId) const;
    QString artifactDir(const QString &runId, const QString &name) const;
    QString stepDir(const QString &runId, const QString &stepId) const;

    // A fresh empty directory for artifact name (a get step fetches into it); an older artifact
    // of that name is replaced.
    Result<QString> createArtifact(const QString &runId, const QString &name) const;
    // Moves dir into the run as artifact name, replacing an older one of that name.
    Status publishArtifact(const QString &runId, const QString &name, const QString &dir) const;
    bool hasArtifact(const QString &runId, const QString &name) const;

    // Creates the step's directory: inputs copied from the run's artifacts (through
    // inputMapping), outputs as empty directories. An output at the same path as an input
    // starts as that input's copy (Concourse's in-place outputs). A missing non-optional input,
    // a bad name or overlapping paths is an error naming the input; nothing is left behind.
    Result<StepDirs> createStep(const QString &runId, const QString &stepId, const StepLayout &layout,
                                CopyStats *stats = nullptr) const;
    // Each of the step's outputs is still a directory of its own below the step's directory,
    // reached through no symbolic link (a step may have swapped one for a link to a host path);
    // call before reading an output.
    Status checkOutputs(const StepDirs &dirs) const;
    // Publishes each of the step's outputs as the run's artifact (through outputMapping).
    Status collectOutputs(const QString &runId, const StepDirs &dirs, const StepLayout &layout) const;

    Status removeStep(const QString &runId, const QString &stepId) const;
    Status removeRun(const QString &runId) const;
    QStringList runs() const;

private:
    QString m_root;
};

} // namespace pando::core
