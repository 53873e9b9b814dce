#include "adapters/runtime/incus/imageconvert.h"

#include "adapters/api/archiveptr.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSysInfo>
#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace pando::adapters::incus {

namespace {

const QString Where = QStringLiteral("conversion to an Incus image");

const QByteArray DhcpScript = R"SH(#!/.pando/busybox sh
# udhcpc's hook: puts the lease on the interface (Pando's init starts udhcpc with it).
b=/.pando/busybox
case "$1" in
deconfig) $b ip -4 addr flush dev "$interface" ;;
bound)
    $b ip -4 addr flush dev "$interface"
    $b ip addr add "$ip/${mask:-24}" dev "$interface"
    [ -n "$router" ] && $b ip route replace default via "${router%% *}" dev "$interface"
    [ -n "$dns" ] && { for s in $dns; do echo "nameserver $s"; done >/etc/resolv.conf; } 2>/dev/null
    ;;
renew) $b ip addr replace "$ip/${mask:-24}" dev "$interface" ;;
esac
exit 0
)SH";

std::unexpected<Error> archiveError(archive *a, const QString &what)
{
    return fail(ErrorCode::Failed, QStringLiteral("%1: %2").arg(what, adapters::archiveError(a)), Where);
}

// The entry's name without a leading "./", or empty when it is absolute or climbs out.
QByteArray safeName(const char *raw)
{
    QByteArray name(raw ? raw : "");
    while (name.startsWith("./"))
        name.remove(0, 2);
    if (name.isEmpty() || name == "." || name.startsWith('/'))
        return {};
    for (const QByteArray &part : name.split('/'))
        if (part == "..")
            return {};
    return name;
}

Status addFile(archive *out, const QByteArray &path, const QByteArray &content, int mode)
{
    ArchiveEntry entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), path.constData());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), mode);
    archive_entry_set_size(entry.get(), content.size());
    archive_entry_set_mtime(entry.get(), QDateTime::currentSecsSinceEpoch(), 0);
    if (archive_write_header(out, entry.get()) != ARCHIVE_OK ||
        archive_write_data(out, content.constData(), size_t(content.size())) != content.size())
        return archiveError(out, QStringLiteral("cannot write %1").arg(QString::fromUtf8(path)));
    return {};
}

Status addDirectory(archive *out, const QByteArray &path)
{
    ArchiveEntry entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), path.constData());
    archive_entry_set_filetype(entry.get(), AE_IFDIR);
    archive_entry_set_perm(entry.get(), 0755);
    archive_entry_set_mtime(entry.get(), QDateTime::currentSecsSinceEpoch(), 0);
    if (archive_write_header(out, entry.get()) != ARCHIVE_OK)
        return archiveError(out, QStringLiteral("cannot write %1").arg(QString::fromUtf8(path)));
    return {};
}

QByteArray yamlString(const QString &value)
{
    // A JSON string is a YAML double-quoted scalar.
    const QByteArray array = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return array.mid(1, array.size() - 2);
}

QByteArray metadataYaml(const ConvertRequest &request)
{
    // Incus names architectures as the kernel does.
    QString arch = QSysInfo::currentCpuArchitecture();
    if (arch == QLatin1String("arm64"))
        arch = QStringLiteral("aarch64");
    QByteArray yaml = "architecture: " + yamlString(arch) +
                      "\ncreation_date: " + QByteArray::number(QDateTime::currentSecsSinceEpoch()) + "\nproperties:\n";
    yaml += "  description: " + yamlString(request.description) + '\n';
    for (auto it = request.properties.begin(); it != request.properties.end(); ++it)
        yaml += "  " + yamlString(it.key()) + ": " + yamlString(it.value()) + '\n';
    return yaml;
}

// Copies every entry of the exported file system below rootfs/.
Status copyRootfs(const QString &exportPath, archive *out)
{
    ArchiveReader in(archive_read_new());
    archive_read_support_format_tar(in.get());
    if (archive_read_open_filename(in.get(), QFile::encodeName(exportPath).constData(), 1 << 16) != ARCHIVE_OK)
        return archiveError(in.get(), QStringLiteral("cannot read the exported file system"));
    archive_entry *entry = nullptr;
    int r;
    while ((r = archive_read_next_header(in.get(), &entry)) == ARCHIVE_OK) {
        const QByteArray name = safeName(archive_entry_pathname(entry));
        const mode_t type = archive_entry_filetype(entry);
        if (name.isEmpty() || name == ".dockerenv" || name == ".pando" || name.startsWith(".pando/"))
            continue;
        if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
            continue; // devices, FIFOs, sockets: Incus makes /dev itself
        archive_entry_set_pathname(entry, QByteArray("rootfs/" + name).constData());
        if (const char *link = archive_entry_hardlink(entry)) {
            const QByteArray target = safeName(link);
            if (target.isEmpty())
                continue;
            archive_entry_set_hardlink(entry, QByteArray("rootfs/" + target).constData());
        }
        if (archive_write_header(out, entry) != ARCHIVE_OK)
            return archiveError(out, QStringLiteral("cannot write %1").arg(QString::fromUtf8(name)));
        const void *block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        while ((r = archive_read_data_block(in.get(), &block, &size, &offset)) == ARCHIVE_OK)
            if (archive_write_data(out, block, size) < 0)
                return archiveError(out, QStringLiteral("cannot write %1").arg(QString::fromUtf8(name)));
        if (r != ARCHIVE_EOF)
            return archiveError(in.get(), QStringLiteral("cannot read %1").arg(QString::fromUtf8(name)));
    }
    if (r != ARCHIVE_EOF)
        return archiveError(in.get(), QStringLiteral("cannot read the exported file system"));
    return {};
}

// An export's container lives for the export only; one a killed pandod of this install left
// behind (older than any export takes) is removed by the next conversion. Another install's are
// its own to clean up: one of them may be exporting now, however long it takes.
void removeStaleExports(const dockerapi::DockerClient &docker, const QString &installId, qint64 staleSeconds)
{
    if (installId.isEmpty())
        return; // whose they are cannot be told: leave them all
    const QString filters = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("label"),
                                   QJsonArray{QStringLiteral("dev.pando.export=true"),
                                              QString(QString::fromLatin1(LabelInstall) + u'=' + installId)}}})
            .toJson(QJsonDocument::Compact));
    auto listed = docker.get(QStringLiteral("/containers/json"),
                             {{QStringLiteral("all"), QStringLiteral("1")}, {QStringLiteral("filters"), filters}});
    if (!listed)
        return;
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    for (const QJsonValue v : listed->json().array()) {
        const QJsonObject c = v.toObject();
        if (now - c.value(QLatin1String("Created")).toInteger() < staleSeconds)
            continue;
        dockerapi::Request remove;
        remove.method = "DELETE";
        remove.path = QStringLiteral("/containers/") + c.value(QLatin1String("Id")).toString();
        remove.addQuery(QStringLiteral("force"), QStringLiteral("1"));
        remove.timeoutMs = 30000;
        discardResult(docker.call(remove), "one that stays is tried again at the next export");
    }
}

// Exports the image's file system into file, through a created container that never starts.
Status exportImage(const dockerapi::DockerClient &docker, const ConvertRequest &request, QFile &file,
                   const CancelToken &cancel)
{
    const QString installId = request.properties.value(QString::fromLatin1(LabelInstall));
    removeStaleExports(docker, installId, request.staleExportSeconds);
    QJsonObject labels{{QStringLiteral("dev.pando.export"), QStringLiteral("true")}};
    if (!installId.isEmpty())
        labels.insert(QString::fromLatin1(LabelInstall), installId);
    const QJsonObject create{{QStringLiteral("Image"), request.dockerImage},
                             {QStringLiteral("Cmd"), QJsonArray{QStringLiteral("/.pando-export")}},
                             {QStringLiteral("Labels"), labels}};
    auto created =
        docker.post(QStringLiteral("/containers/create"), {}, QJsonDocument(create).toJson(QJsonDocument::Compact));
    if (!created)
        return std::unexpected(created.error());
    const QString id = created->json().object().value(QLatin1String("Id")).toString();
    dockerapi::Request r;
    r.path = QStringLiteral("/containers/") + id + QStringLiteral("/export");
    bool writeFailed = false;
    auto streamed = docker.stream(r, cancel, [&](QByteArrayView chunk) {
        writeFailed = file.write(chunk.data(), chunk.size()) != chunk.size();
        return !writeFailed;
    });
    dockerapi::Request remove;
    remove.method = "DELETE";
    remove.path = QStringLiteral("/containers/") + id;
    remove.addQuery(QStringLiteral("force"), QStringLiteral("1"));
    remove.timeoutMs = 30000;
    discardResult(docker.call(remove), "its label marks it: a later export removes it once it is stale");
    if (!streamed)
        return std::unexpected(streamed.error());
    if (writeFailed || !file.flush())
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot write the exported file system: %1").arg(file.errorString()),
                    file.fileName());
    return {};
}

} // namespace

ImageConfig ImageConfig::fromDockerInspect(const QJsonObject &inspected)
{
    const QJsonObject config = inspected.value(QLatin1String("Config")).toObject();
    auto strings = [](const QJsonValue &v) {
        QStringList out;
        for (const QJsonValue s : v.toArray())
            out << s.toString();
        return out;
    };
    return ImageConfig{strings(config.value(QLatin1String("Entrypoint"))), strings(config.value(QLatin1String("Cmd"))),
                       strings(config.value(QLatin1String("Env"))),
                       config.value(QLatin1String("WorkingDir")).toString()};
}

QString shellQuote(const QStringList &argv)
{
    QStringList words;
    for (const QString &arg : argv) {
        QString w = arg;
        w.replace(QLatin1Char('\''), QLatin1String("'\\''"));
        words << QLatin1Char('\'') + w + QLatin1Char('\'');
    }
    return words.join(QLatin1Char(' '));
}

QByteArray initScript(const ImageConfig &config)
{
    static const QRegularExpression envName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    QByteArray imageEnv;
    for (const QString &pair : config.env) {
        const qsizetype eq = pair.indexOf(QLatin1Char('='));
        const QString name = pair.left(eq);
        if (eq <= 0 || !envName.match(name).hasMatch())
            continue;
        // The instance's own environment (the app spec's) wins over the image's.
        imageEnv +=
            QStringLiteral("[ -n \"${%1+x}\" ] || export %1=%2\n").arg(name, shellQuote({pair.mid(eq + 1)})).toUtf8();
    }
    const QString workdir = config.workingDir.isEmpty() ? QStringLiteral("/") : config.workingDir;
    QByteArray script = R"SH(#!/.pando/busybox sh
# Pando's init for an app instance: network, the image's environment, then the app as a child
# that gets TERM/INT/HUP passed on; its exit code is kept in /.pando/exit.
b=/.pando/busybox
$b rm -f /.pando/exit
$b ip link set lo up 2>/dev/null
if [ -e /sys/class/net/eth0 ]; then
    $b ip link set eth0 up
    $b udhcpc -i eth0 -s /.pando/dhcp -t 30 -T 1 -A 1 -b >/dev/null 2>&1
fi
)SH";
    script += imageEnv;
    script += "[ -n \"${PATH+x}\" ] || export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n";
    script += R"(if [ -n "${PANDO_ARGV+x}" ]; then eval "set -- $PANDO_ARGV"; else set -- )" +
              shellQuote(config.entrypoint + config.cmd).toUtf8() + "; fi\n";
    script += "unset PANDO_ARGV\n";
    script += "cd " + shellQuote({workdir}).toUtf8() + " 2>/dev/null || cd /\n";
    script += R"SH(if [ $# -eq 0 ]; then
    echo "pando: the image names no command and the app spec gives none (run.command)" >&2
    echo 127 >/.pando/exit
    exit 127
fi
"$@" &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT
trap 'kill -HUP $child 2>/dev/null' HUP
while :; do
    wait $child
    code=$?
    kill -0 $child 2>/dev/null || break
done
echo $code >/.pando/exit
exit $code
)SH";
    return script;
}

Status checkStaticBusybox(const QByteArray &bytes, const QString &path)
{
    if (!bytes.startsWith("\x7f"
                          "ELF"))
        return fail(ErrorCode::Invalid, QStringLiteral("%1 is not an executable").arg(path),
                    QStringLiteral("Incus runtime"), QStringLiteral("install Debian's busybox-static"));
    // A dynamically linked program names its loader; a static one has no interpreter.
    if (bytes.contains("/ld-linux") || bytes.contains("/ld-musl"))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("%1 is dynamically linked; the init Pando puts in Incus images needs a static "
                                   "busybox")
                        .arg(path),
                    QStringLiteral("Incus runtime"), QStringLiteral("install Debian's busybox-static"));
    return {};
}

Result<std::unique_ptr<QTemporaryFile>> convertDockerImage(const dockerapi::DockerClient &docker,
                                                           const ConvertRequest &request, const CancelToken &cancel)
{
    auto inspected = docker.get(QStringLiteral("/images/") + request.dockerImage + QStringLiteral("/json"));
    if (!inspected)
        return std::unexpected(inspected.error());
    const ImageConfig config = ImageConfig::fromDockerInspect(inspected->json().object());

    QFile busybox(request.busybox);
    if (!busybox.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("cannot read %1: %2").arg(request.busybox, busybox.errorString()), Where,
                    QStringLiteral("install Debian's busybox-static"));
    const QByteArray busyboxBytes = busybox.readAll();
    if (auto ok = checkStaticBusybox(busyboxBytes, request.busybox); !ok)
        return std::unexpected(ok.error());

    QTemporaryFile exported;
    if (!exported.open())
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot create a temporary file: %1").arg(exported.errorString()), Where);
    if (auto status = exportImage(docker, request, exported, cancel); !status)
        return std::unexpected(status.error());

    auto tarball = std::make_unique<QTemporaryFile>();
    if (!tarball->open())
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot create a temporary file: %1").arg(tarball->errorString()), Where);
    {
        ArchiveWriter out(archive_write_new());
        archive_write_set_format_pax_restricted(out.get());
        if (archive_write_open_fd(out.get(), tarball->handle()) != ARCHIVE_OK)
            return archiveError(out.get(), QStringLiteral("cannot write the image tarball"));
        for (const Status &s :
             {addFile(out.get(), "metadata.yaml", metadataYaml(request), 0644), addDirectory(out.get(), "rootfs")})
            if (!s)
                return std::unexpected(s.error());
        if (auto s = copyRootfs(exported.fileName(), out.get()); !s)
            return std::unexpected(s.error());
        for (const Status &s :
             {addDirectory(out.get(), "rootfs/.pando"), addFile(out.get(), "rootfs/.pando/busybox", busyboxBytes, 0755),
              addFile(out.get(), "rootfs/.pando/init", initScript(config), 0755),
              addFile(out.get(), "rootfs/.pando/dhcp", DhcpScript, 0755)})
            if (!s)
                return std::unexpected(s.error());
        if (archive_write_close(out.get()) != ARCHIVE_OK)
            return archiveError(out.get(), QStringLiteral("cannot finish the image tarball"));
    }
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"), Where);
    if (!tarball->seek(0))
        return fail(ErrorCode::Internal, QStringLiteral("cannot rewind the image tarball"), tarball->fileName());
    return tarball;
}

} // namespace pando::adapters::incus
