#pragma once
// Package set puts an install's runtimes (local Docker, Incus, ...) behind one adapters::Runtime,
// so core works with one runtime whatever the app runs on.
//
// Routing: build() goes to BuildRequest::runtime, or the default kind when it is empty (the
// first runtime added unless setDefaultKind says otherwise). Every id a runtime other than the
// first hands out (images, containers) comes back prefixed with its kind
// ("incus:pando-hello-d42"), so run() follows the image it is given and
// inspect/start/stop/remove/logs follow the container id. The first runtime's ids stay as they
// are, so what an install stored before it had a second runtime still works: add Docker first.
// containers() and images() list every runtime's; one that does not answer fails the listing
// (a reconciler that saw half the containers could act on the other half as orphans).
//
// Threading: add() before the set is shared; after that every call may come from any thread.

#include "adapters/api/runtime.h"

#include <QList>
#include <memory>

namespace pando::adapters {

class RuntimeSet : public Runtime {
public:
    // kind: "docker", "incus". The first one added keeps its ids unprefixed.
    void add(const QString &kind, std::shared_ptr<Runtime> runtime);
    // Where specs that name no runtime go; an unknown kind is refused.
    Status setDefaultKind(const QString &kind);
    QStringList kinds() const;
    QString defaultKind() const;
    std::shared_ptr<Runtime> find(const QString &kind) const;

    RuntimeCapabilities capabilities() override;
    Result<RuntimeCapabilities> capabilitiesOf(const QString &kind) override;
    Status ping() override;
    // One room per runtime, in the order they were added; one that does not answer has only
    // its kind and a note saying why.
    Result<QList<RuntimeRoom>> rooms() override;
    Result<qint64> diskUsage(const QString &id) override;
    Result<QList<VolumeInfo>> volumes(const Labels &filter) override;
    Status removeVolume(const QString &id) override;
    Result<qint64> exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel) override;
    Status checkVolumeArchive(const VolumeImport &what) override;
    Status importVolume(const VolumeImport &what, const CancelToken &cancel) override;
    Result<QString> build(const BuildRequest &request, const CancelToken &cancel,
                          const std::function<void(const QString &line)> &progress) override;
    Result<QString> run(const ContainerSpec &spec) override;
    Result<ContainerInfo> inspect(const QString &id) override;
    Result<QList<ContainerInfo>> containers(const Labels &filter) override;
    Status start(const QString &id) override;
    Status stop(const QString &id, int timeoutSeconds) override;
    Status remove(const QString &id) override;
    Result<QList<ImageInfo>> images(const Labels &filter) override;
    Status removeImage(const QString &idOrTag) override;
    // An id goes to the runtime that handed it out; a tag to every runtime, each checking owner.
    Result<bool> removeOwnImage(const QString &idOrTag, const Labels &owner) override;
    Status tagImage(const QString &id, const QString &tag) override;
    Result<QList<int>> exposedPorts(const QString &imageId) override;
    // The Docker runtime's, which builds for every runtime; else the default's.
    Result<BuilderCache> builderCache() override;
    // The default runtime's answer.
    Result<QString> checkRegistry(const QString &image, const RegistryCredential &credential,
                                  const CancelToken &cancel) override;
    Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                const std::function<void(const LogLine &)> &sink) override;
    Result<int> exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                     const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                     const std::function<void(int stream, QByteArrayView data)> &onOutput) override;

private:
    struct Member {
        QString kind;
        std::shared_ptr<Runtime> runtime;
    };
    // The member an id belongs to, and the id as that member knows it.
    std::pair<const Member *, QString> route(const QString &id) const;
    Result<const Member *> member(const QString &kind) const;
    QString prefixed(const Member &m, const QString &id) const;

    QList<Member> m_members;
    QString m_defaultKind;
};

} // namespace pando::adapters
