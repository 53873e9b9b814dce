#pragma once
// Package incusapi is the part of the Incus REST API (https://linuxcontainers.org/incus/docs/main/rest-api/)
// the Incus runtime uses: its types, with Incus's own JSON names, and a client for them over the
// unix socket of a local incusd or HTTPS with a client certificate for a remote one. It never
// runs the incus CLI.
//
// Every answer comes in Incus's envelope: {"type": "sync"|"async"|"error", "status_code",
// "error", "error_code", "operation", "metadata"}. Long work (creating an instance, importing an
// image, exec) is a background operation: the client waits for it in slices so that a
// CancelToken or a deadline can stop the wait, and then cancels the operation on the server
// where Incus allows it.
//
// Threading: an IncusClient holds only its connection settings; every call uses its own curl
// handle, so calls may be made from any thread, concurrently.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

class QIODevice;

namespace pando::adapters::incusapi {

using StringMap = QMap<QString, QString>;

struct Connection {
    QString socket;                // unix socket of a local incusd; used when url is empty
    QString url;                   // "https://host:8443" of a remote Incus
    QString clientCert, clientKey; // PEM files: a client certificate the remote Incus trusts
    QString serverCert;            // PEM file: the remote's own certificate (pinned)

    // $INCUS_SOCKET, else /var/lib/incus/unix.socket.
    static QString defaultSocket();
};

// GET /1.0 (the parts used).
struct Server {
    QString serverVersion; // environment.server_version
    QStringList drivers;   // environment.driver split on " | ": "lxc", "qemu"
    QString auth;          // "trusted" or "untrusted"
    QStringList apiExtensions;
    QString kernelArchitecture; // environment.kernel_architecture
    static Server fromJson(const QJsonObject &metadata);
};

// /1.0/operations/{id}.
struct Operation {
    QString id;
    QString description;
    QString status; // "Running", "Success", "Failure", "Cancelled"
    int statusCode = 0;
    QString err;
    bool mayCancel = false;
    QJsonObject metadata;
    static Operation fromJson(const QJsonObject &object);
};

// POST /1.0/instances.
struct InstancesPost {
    QString name;
    QString type = QStringLiteral("container"); // or "virtual-machine"
    QString sourceFingerprint;                  // source: {"type": "image", "fingerprint": ...}
    StringMap config;
    QMap<QString, StringMap> devices;
    QStringList profiles{QStringLiteral("default")};
    bool start = false;
    QJsonObject toJson() const;
};

// /1.0/instances/{name} (the parts used).
struct Instance {
    QString name;
    QString type;
    QString status; // "Running", "Stopped", "Frozen", "Error"
    int statusCode = 0;
    StringMap config;
    QString createdAt;
    QString lastUsedAt;
    static Instance fromJson(const QJsonObject &object);
};

// /1.0/instances/{name}/state (the parts used).
struct InstanceState {
    QString status;
    qint64 pid = 0;
    qint64 memoryUsage = 0;
    QMap<QString, QStringList> inetAddresses; // network.<nic>.addresses with family "inet"
    static InstanceState fromJson(const QJsonObject &object);
};

// /1.0/images/{fingerprint} (the parts used).
struct Image {
    QString fingerprint;
    QString type; // "container" or "virtual-machine"
    qint64 size = 0;
    StringMap properties;
    QStringList aliases;
    static Image fromJson(const QJsonObject &object);
};

struct ExecResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

class IncusClient {
public:
    explicit IncusClient(Connection connection = {});

    const Connection &connection() const { return m_connection; }
    // "the Incus server at /var/lib/incus/unix.socket": how errors name it.
    const QString &description() const { return m_description; }

    // One request; the envelope's metadata of a sync answer, or the operation of an async one
    // (Operation::id set). Error envelopes and HTTP errors fail with Incus's own message:
    // NotFound on 404, Conflict on 409, Forbidden on 403, Failed otherwise; no answer
    // fails with Unavailable and says how to start incusd.
    struct Answer {
        QJsonValue metadata;
        std::optional<Operation> operation;
    };
    Result<Answer> call(const httpkit::Request &request) const;
    Result<QJsonValue> get(const QString &path, const QList<QPair<QString, QString>> &query = {}) const;

    // Waits for a background operation until it ends, timeoutMs passes or cancel is set; then
    // cancels it on the server (when Incus lets it), waits (up to a minute) for it to end, so
    // that what it made can be cleaned up, and fails with Timeout or Cancelled. An operation
    // that ends in Failure fails with its err.
    Result<Operation> wait(const Operation &operation, int timeoutMs, const CancelToken *cancel = nullptr) const;
    // call() then wait() for async answers.
    Result<Operation> run(const httpkit::Request &request, int timeoutMs, const CancelToken *cancel = nullptr) const;

    Result<Server> server() const;
    Result<QList<Instance>> instances() const;
    Result<Instance> instance(const QString &name) const;
    Result<InstanceState> state(const QString &name) const;
    Status createInstance(const InstancesPost &post, int timeoutMs, const CancelToken *cancel = nullptr) const;
    // PUT /1.0/instances/{name}/state: "start", "stop", "restart".
    Status changeState(const QString &name, const QString &action, int timeoutSeconds, bool force) const;
    Status deleteInstance(const QString &name, int timeoutMs) const;
    // GET /1.0/instances/{name}/console: what the instance wrote to its console (a ring buffer).
    Result<QByteArray> consoleLog(const QString &name) const;
    // POST /1.0/instances/{name}/files: writes one file in a running or stopped instance.
    Status pushFile(const QString &name, const QString &path, const QByteArray &content, int mode, int uid = 0,
                    int gid = 0) const;
    // The same for a directory; one that exists already is left as it is.
    Status makeDirectory(const QString &name, const QString &path, int mode) const;
    Result<QByteArray> pullFile(const QString &name, const QString &path) const;
    // POST /1.0/instances/{name}/exec with record-output; the recorded output is read and removed.
    Result<ExecResult> exec(const QString &name, const QStringList &argv, int timeoutMs,
                            const CancelToken *cancel = nullptr) const;

    // POST /1.0/images with a unified image tarball (metadata.yaml + rootfs/) streamed from body.
    Result<QString> importImage(QIODevice *body, int timeoutMs, const CancelToken *cancel = nullptr) const;
    Result<QList<Image>> images() const;
    Status deleteImage(const QString &fingerprint, int timeoutMs) const;
    // PATCH /1.0/images/{fingerprint}: replaces the image's properties.
    Status updateImageProperties(const QString &fingerprint, const StringMap &properties) const;

    // A GET whose answer is a file (a backup's export), written to out as it comes; the bytes
    // written. Given up when nothing comes for two minutes.
    Result<qint64> downloadTo(const QString &path, QIODevice &out, const CancelToken *cancel = nullptr) const;

private:
    // A GET whose answer is the body itself (console, files, logs), not an envelope.
    Result<QByteArray> download(const QString &path, const QList<QPair<QString, QString>> &query = {}) const;

    Connection m_connection;
    httpkit::Endpoint m_endpoint;
    QString m_description;
};

// Incus's rule for instance names: 1-63 letters, digits and hyphens, not starting with a digit or
// a hyphen, not ending with a hyphen. The error names the name and what is wrong with it.
Status checkInstanceName(const QString &name);

} // namespace pando::adapters::incusapi
