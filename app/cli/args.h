#pragma once
// The command line of `pando`: subcommands, their arguments and options, and the usage text.
// Parsed by hand because options differ per command (-f is a file for `apps create`, follow for
// `logs`; -c and -l are the config and vars files of `pipelines set`).

#include "adapters/api/error.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

namespace pando::cli {

enum class Command {
    AppsCreate,
    AppsUpdate,
    AppsList,
    AppsShow,
    AppsRemove,
    Deploy,
    DeploysList,
    DeploysShow,
    Logs,
    PipelinesSet,
    PipelinesList,
    PipelinesShow,
    PipelinesPause,
    PipelinesUnpause,
    PipelinesRemove,
    JobsTrigger,
    RunsList,
    RunsShow,
    RunsWatch,
    RunsAbort,
    SecretsSet,
    SecretsList,
    SecretsRemove,
    AuditList,
    AuditVerify,
    AuditSinks,
    GrantsList,
    GrantsAdd,
    GrantsRemove,
    ApprovalsList,
    ApprovalsShow,
    ApprovalsApprove,
    ApprovalsReject,
    Login,
    UsersCreate,
    UsersList,
    UsersDisable,
    TokensCreate,
    TokensList,
    TokensRevoke,
    ServicesList,
    ServicesBackup,
    ServicesRemove,
    AppsStart,
    Capacity,
};

struct Args {
    Command command = Command::AppsList;
    QStringList arguments;          // positional arguments after the command words
    QMap<QString, QString> options; // long option name → value ("" for flags); --scope repeats, comma-joined
    bool json = false;
    bool help = false;
    bool version = false;

    bool has(const QString &option) const { return options.contains(option); }
    QString value(const QString &option) const { return options.value(option); }
};

// argv without the program name. Usage errors are ErrorCode::Invalid with where naming the word.
Result<Args> parseArgs(const QStringList &argv);
QString usageText();
// `secrets set|rm APP NAME` and `secrets list APP`: an app's secrets, not a pipeline's.
bool isAppSecretCommand(const Args &args);
// A grants command's OBJECT: "hello" and "app/hello" are the app hello, "pipeline/ci" the
// pipeline ci; nullopt for anything else.
struct GrantObject {
    QString collection; // "apps", "pipelines": the API path's segment
    QString kind;       // "app", "pipeline"
    QString name;
};
std::optional<GrantObject> parseGrantObject(const QString &object);

} // namespace pando::cli
