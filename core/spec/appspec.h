#pragma once
// Package spec defines the AppSpec: the sole record of how an app runs. It is read from YAML
// through one parsing module with size (1 MiB) and depth (64) limits; every error names the
// path it was found at ("run.port") or the line and column of malformed YAML.

#include "adapters/api/error.h"
#include "adapters/api/routing.h"

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

namespace pando::core {

struct AppSpec {
    QString name; // a DNS label: [a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?

    struct Source {
        // Either a git repository to build, or an image to deploy as it is (source.image, as
        // docker pull names one; no build, ref, autodeploy or preview then).
        QString repo;  // file://, https://, http://, ssh://, or scp-like git@host:path
        QString image; // "nginx:1.27", "registry.example.com/team/app:1.4@sha256:…"
        // source.pull: when a deploy asks the registry for the image. Auto: always for a tag of
        // latest (or none), only when the engine lacks it for any other tag or a digest.
        enum class Pull { Auto, Always, Missing };
        Pull pull = Pull::Auto;
        QString ref = QStringLiteral("main"); // branch, tag or commit
        // The source connection to read it through (core/sourceconn): a forge's for a repository,
        // a registry's for an image; empty: the one covering it most closely that the spec's
        // writer may use, or none.
        QString connection;
        // source.autodeploy (core/spec/specautodeploy.h, docs/appspec.md): deploy what is pushed
        // to ref's branch (or tags matching `tags`), told by the forge's webhook (push) or found by
        // asking the repository every everyMs (poll).
        struct AutoDeploy {
            enum class Mode { Off, Push, Poll };
            Mode mode = Mode::Off;
            QString tags;        // a glob ("v*", "release-*"): follow tags that match instead of the branch
            int everyMs = 60000; // poll: how often the repository is asked
            bool operator==(const AutoDeploy &) const = default;
        } autodeploy;

        bool isImage() const { return !image.isEmpty(); }
        // Whether a deploy of the image asks its registry for it even when the engine has it.
        bool pullsAlways() const;
    } source;

    struct Build {
        QString context = QStringLiteral(".");             // relative to the repository root
        QString dockerfile = QStringLiteral("Dockerfile"); // relative to context
        QMap<QString, QString> args;
        // The image a generated Dockerfile starts from, for a repository without a Dockerfile
        // (core/detection, docs/detection.md); empty: the one detection picks for the stack.
        QString base;
    } build;

    struct Run {
        int port = 0;        // 1..65535; 0: the port the built image exposes, found at deploy
        QStringList command; // optional argv
        QMap<QString, QString> env;
        qint64 memoryBytes = 0; // resources.memory ("256Mi", "1Gi", "512M", bytes)
        double cpus = 0;        // resources.cpus
        // resources.disk: what the app may write in its container (not volumes); 0 = no limit.
        // resources.diskPolicy: what happens past it (core/disklimit, docs/appspec.md).
        enum class DiskPolicy { Stop, Warn };
        qint64 diskBytes = 0;
        DiskPolicy diskPolicy = DiskPolicy::Stop;
        // restart: what Pando does when the serving container exits or stops answering its
        // health probe (core/health): always (any exit, and unhealthy), on-failure (an exit with
        // a code other than 0, and unhealthy), never.
        enum class Restart { Always, OnFailure, Never };
        Restart restart = Restart::Always;
        // run.volumes (core/spec/specvolumes.h): named volumes that keep their files across
        // deploys, rollbacks and restarts, mounted at path; size is what capacity counts for it.
        struct Volume {
            QString name; // a DNS label, at most 32 characters
            QString path; // absolute, in the container
            qint64 sizeBytes = 0;
            bool operator==(const Volume &) const = default;
        };
        QList<Volume> volumes;
    } run;

    struct Health {
        QString path = QStringLiteral("/"); // must start with '/'
        int timeoutSeconds = 60;            // how long a new version may take to become healthy
        int intervalMs = 100;               // between probes
        // While the app serves: probed every everyMs; unhealthy after `failures` failed probes
        // in a row, healthy again at the first answer (core/health).
        int everyMs = 10000;
        int failures = 3;
    } health;

    struct Route {
        int port = 0; // the stable loopback port; 0 = pick one
        // Where the edge serves the app besides (core/spec/specroute.h, docs/edge.md): host names
        // in ASCII lower case ("*.example.com" for a wildcard), path prefixes ("/api"; none: the
        // whole host), how they are served (unset: by the name) and what an address the app
        // stops using does.
        QStringList domains;
        QStringList paths;
        std::optional<adapters::TlsMode> tls;
        enum class Moved { Redirect, Drop };
        Moved moved = Moved::Redirect;
        // route.auth: who the edge lets through. Pando: only people signed in to Pando who may
        // read the app, each request with a signed X-Pando-Assertion naming them (docs/edge.md).
        enum class Auth { None, Pando };
        Auth auth = Auth::None;
    } route;

    enum class Egress { All, None };
    struct Network {
        // network.egress: "all" lets the app open connections anywhere; "none" cuts it off from
        // other containers and from everything off the host (see docs/appspec.md for the limit).
        Egress egress = Egress::All;
    } network;

    QMap<QString, QString> labels; // free-form labels (environment: prod, ...)
    QString runtime;               // "docker" or "incus"; empty: the install's default runtime

    // services: slots the app's backing services fill (docs/services.md), by slot name (a
    // lowercase identifier: its upper case prefixes the variables the app gets, DB_URL, ...).
    struct Service {
        QString kind;    // "postgres", "mysql" (served by MariaDB), "mariadb", "redis"
        QString version; // one the install has an image for; defaults per kind
        // What the service is made with, for apps that expect their own (docs/services.md):
        // empty is Pando's default (user "app", the slot's name, a generated password).
        QString user;
        QString database;
        QString password;
        // What the app's variables are called: url, host, port, user, password, name → a
        // variable name; a part not named keeps SLOT_URL, SLOT_HOST, ...
        QMap<QString, QString> env;
        // A file of the repository loaded into the service when its volume is made (SQL; not
        // for redis); empty: it starts empty.
        QString seed;
        bool operator==(const Service &) const = default;
    };
    QMap<QString, Service> services;

    // secrets: the app's secrets that reach it as files (docs/appspec.md), by secret name. A
    // secret not listed here is an environment variable of its own name.
    struct SecretFile {
        QString path;    // absolute, in the container
        int mode = 0400; // read-only for its owner
        int uid = 0;
        int gid = 0;
        bool operator==(const SecretFile &) const = default;
    };
    QMap<QString, SecretFile> secrets;

    // preview (core/spec/specpreview.h, docs/autodeploy.md): an app of its own for each pull
    // request to the app's branch, built from its head, with these changes to this spec.
    struct Preview {
        bool enabled = false;
        qint64 ttlMs = 7LL * 24 * 60 * 60 * 1000; // removed once nothing was pushed for this long
        QMap<QString, QString> env;               // over run.env
        qint64 memoryBytes = 0;                   // 0: run.resources.memory
        double cpus = 0;                          // 0: run.resources.cpus
        bool copySecrets = true;                  // the app's secrets reach the preview (never a fork's)
        QMap<QString, QString> seeds;             // slot → a seed file for previews, over services.SLOT.seed
        bool operator==(const Preview &) const = default;
    } preview;

    QJsonObject toJson() const;
};

inline constexpr qsizetype MaxSpecBytes = 1024 * 1024;
inline constexpr int MaxSpecDepth = 64;

// Parses and validates. Errors: ErrorCode::Invalid with `where` set (a field path, or
// "line L, column C"), ErrorCode::TooLarge for input over MaxSpecBytes.
Result<AppSpec> parseAppSpec(const QByteArray &yaml);
// The same rules for a spec that came as JSON (the API accepts both).
Result<AppSpec> parseAppSpecJson(const QByteArray &json);
// Field rules alone, for a spec built in code.
Status validateAppSpec(const AppSpec &spec);
bool isValidAppName(const QString &name);

// Docker refuses memory limits below 6 MiB.
inline constexpr qint64 MinMemoryBytes = 6LL * 1024 * 1024;
// "256Mi", "1Gi", "512M", "1G", "1024Ki", "0.5Gi" or plain bytes; nullopt when unreadable.
std::optional<qint64> parseMemory(const QString &text);
// For people: "256Mi", "1.5Gi", "700" (bytes); exact when a binary unit divides the amount.
QString formatMemory(qint64 bytes);
// The service kinds a slot may name, the versions each has an image for (the first is the
// default), and what else a version is written as ("15.0" is "15").
QStringList serviceKinds();
QStringList serviceVersions(const QString &kind);
inline constexpr int MaxServiceSlots = 8;
// "all" or "none", as network.egress is written.
QString egressName(AppSpec::Egress egress);
// "always", "on-failure" or "never".
QString restartName(AppSpec::Run::Restart restart);

} // namespace pando::core
