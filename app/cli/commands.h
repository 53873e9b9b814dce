#pragma once
// The commands of `pando` as tables: each command's words (`apps create`), arguments, flags, a
// one-line summary, what it needs (a server, a token) and its handler, in ONE entry beside the
// handler in its area's file (appcommands.cpp, pipelinecommands.cpp, …). The parser, the usage
// texts, per-command --help and the shell completion scripts are all read off these tables, so
// a command cannot be parsed one way and documented or completed another. An entry that lacks
// a part is refused at compile time by the static_assert each area runs on its table.

#include "adapters/api/error.h"

#include <QString>
#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace pando::cli {

class Cli;
struct Args;

// One long option of the catalogue below: its meaning is the same in every command that takes
// it, and so is whether it takes a value.
struct Flag {
    std::string_view name;  // "file" for --file
    std::string_view value; // "SPEC.yaml": takes a value named so; empty: a switch
    std::string_view help;
    bool number = false;     // the value must be a whole number ≥ 0
    bool repeatable = false; // may be given more than once: Args::values has each
};

namespace flags {
inline constexpr Flag Server{"server", "URL", "the Pando API (default: $PANDO_SERVER), e.g. http://127.0.0.1:7420"};
inline constexpr Flag Token{"token", "TOKEN",
                            "deprecated: every user of the machine sees argv; use $PANDO_TOKEN or --token-file"};
inline constexpr Flag TokenFile{"token-file", "FILE",
                                "a file holding the API token (default: $PANDO_TOKEN, else the saved login session)"};
inline constexpr Flag Json{"json", "", "print the API's JSON instead of text"};
inline constexpr Flag Help{"help", "", "print the usage (of a command: pando COMMAND --help)"};
inline constexpr Flag Version{"version", "", "print the client's version"};

inline constexpr Flag File{"file", "SPEC.yaml",
                           "the app's spec (- reads standard input; a .json file is sent as JSON)"};
inline constexpr Flag Ref{"ref", "REF", "the git ref to deploy (default: the spec's)"};
inline constexpr Flag Wait{"wait", "", "follow the deploy's steps and what they print to its end"};
inline constexpr Flag Quiet{"quiet", "", "with --wait: only the steps, not what they print"};
inline constexpr Flag Tty{"tty", "", "give the command a terminal (an interactive shell)"};
inline constexpr Flag To{"to", "DEPLOY", "the deploy whose version to go back to (default: the one before)"};
inline constexpr Flag NoWait{"no-wait", "", "return once the removal is queued"};
inline constexpr Flag KeepData{"keep-data", "", "keep the services' volumes and credentials"};
inline constexpr Flag DeleteData{"delete-data", "", "delete the services' volumes and credentials too"};
inline constexpr Flag Follow{"follow", "", "follow new lines until interrupted"};
inline constexpr Flag Tail{"tail", "N", "how many of the last lines (default 100)", true};
inline constexpr Flag Limit{"limit", "N", "at most N rows", true};
inline constexpr Flag Step{"step", "NAME", "only this step's output (build, health, …)"};
inline constexpr Flag Config{"config", "PIPELINE.yml", "the pipeline's config (- reads standard input)"};
inline constexpr Flag Vars{"vars", "VARS.yml", "values for the config's ((vars))"};
inline constexpr Flag Var{"var", "NAME=VALUE",
                          "a var's value as text, over the vars file (repeat it; NAME may be a.field)", false, true};
inline constexpr Flag YamlVar{"yaml-var", "NAME=YAML",
                              "a var's value as YAML, any list or mapping (repeat it; fly's -y)", false, true};
inline constexpr Flag InstanceVar{"instance-var", "NAME=VALUE",
                                  "sets the instance of NAME with this var (repeat it; fly's -i)", false, true};
inline constexpr Flag Yes{"yes", "", "go ahead without asking"};
inline constexpr Flag Unpaused{"unpaused", "", "a new pipeline starts running (default: paused, as fly)"};
inline constexpr Flag Strict{"strict", "", "fail on what is otherwise a note: unread keys, vars left for run time"};
inline constexpr Flag Async{"async", "", "return once the check is asked for, without waiting for its answer"};
inline constexpr Flag Write{"write", "", "write the result back into the file instead of printing it"};
inline constexpr Flag Watch{"watch", "", "follow the run to its end"};
inline constexpr Flag Pipeline{"pipeline", "P", "the pipeline whose secret it is"};
inline constexpr Flag Install{"install", "", "the secret is the whole install's (with NAME alone, this or --pipeline)"};
inline constexpr Flag AllPipelines{"all-pipelines", "", "every pipeline may read the install-wide secret"};
inline constexpr Flag FromFile{"from-file", "F", "the value is this file's bytes (default: standard input)"};
inline constexpr Flag Actor{"actor", "A", "only lines of this actor"};
inline constexpr Flag Action{"action", "X", "only lines of this action (app.create, deploy.start, …)"};
inline constexpr Flag Object{"object", "O", "only lines about this object (app/hello, …)"};
inline constexpr Flag Since{"since", "T", "from this time (ISO 8601 or epoch ms)"};
inline constexpr Flag Until{"until", "T", "up to this time (ISO 8601 or epoch ms)"};
inline constexpr Flag Status{"status", "S", "pending, approved, rejected, expired or used (default: pending)"};
inline constexpr Flag All{"all", "", "every status"};
inline constexpr Flag Reason{"reason", "TEXT", "why, for the record"};
inline constexpr Flag Username{"username", "U", "who logs in (asked on a terminal)"};
inline constexpr Flag Role{"role", "R", "admin, operator, member or viewer"};
inline constexpr Flag Scope{"scope", "S", "a scope the token carries (repeat for several)"};
inline constexpr Flag Expires{"expires", "30d", "when the token stops working (default: never)"};
inline constexpr Flag Out{"out", "FILE", "where the dump goes"};
inline constexpr Flag Force{"force", "", "replace an existing FILE"};
// The same name for `jobs trigger`, where it says something else.
inline constexpr Flag ForceRun{"force", "", "run every step, also those unchanged since a run that succeeded"};
inline constexpr Flag From{"from", "FILE", "the archive to restore, as pando volumes backup wrote it"};
inline constexpr Flag Diff{"diff", "", "show what the last change to it changed, as a diff"};
inline constexpr Flag IncludeArchived{"include-archived", "", "archived pipelines too"};
// The same name for pipelines pause, unpause and archive, where it says something else.
inline constexpr Flag AllPipelinesOrInstances{
    "all", "", "every pipeline, or with NAME every instance of the instance group NAME (fly's --all)"};
inline constexpr Flag Port{"port", "N", "the local port to listen on (default: a free one)", true};
inline constexpr Flag Url{"url", "URL", "the forge's address: https://github.com, https://git.example.com/gitlab"};
inline constexpr Flag Kind{"kind", "K", "github, gitlab, gitea, bitbucket, azure-devops or generic (the default)"};
inline constexpr Flag Owner{"owner", "O", "only repositories of this user, organisation or group"};
inline constexpr Flag TokenUser{"token-user", "U", "the forge account the token is sent with"};
inline constexpr Flag SshKey{"ssh-key", "FILE", "a deploy key: the private key file, without a passphrase"};
inline constexpr Flag Given{"given", "",
                            "set a secret you choose (asked on a terminal, else standard input, or --from-file)"};
inline constexpr Flag PublicUrl{"public-url", "URL",
                                "the address the forge reaches this server at (default: the one pando talks to)"};
inline constexpr Flag KnownHosts{"known-hosts", "FILE", "the server's host keys, as ssh-keyscan prints them"};
inline constexpr Flag GitHubApp{"github-app", "ID", "a GitHub App: its App ID (with --installation and --app-key)"};
inline constexpr Flag Installation{"installation", "ID",
                                   "the GitHub App's installation on the account or organisation"};
inline constexpr Flag AppKey{"app-key", "FILE", "the GitHub App's private key file (.pem) GitHub generated"};
inline constexpr Flag OAuthClient{"oauth-client", "ID",
                                  "an OAuth application: its client id (the secret as a token is read)"};
inline constexpr Flag CallbackPort{"callback-port", "N",
                                   "where the forge sends the browser back: 127.0.0.1:N (default: a free port)", true};
inline constexpr Flag NoBrowser{"no-browser", "", "print the forge's address instead of opening a browser"};

// Every flag any command takes, the global ones first: what the parser knows by name.
inline constexpr const Flag *Catalogue[] = {
    &Server,
    &Token,
    &TokenFile,
    &Json,
    &Help,
    &Version,
    &File,
    &Ref,
    &Wait,
    &Quiet,
    &Tty,
    &NoWait,
    &KeepData,
    &DeleteData,
    &Follow,
    &Tail,
    &Limit,
    &Config,
    &Vars,
    &Var,
    &YamlVar,
    &InstanceVar,
    &Yes,
    &Watch,
    &Pipeline,
    &Install,
    &FromFile,
    &Actor,
    &Action,
    &Object,
    &Since,
    &Until,
    &Status,
    &All,
    &Reason,
    &Username,
    &Role,
    &Scope,
    &Expires,
    &Out,
    &Force,
    &AllPipelines,
    &Step,
    &Diff,
    &Port,
    &To,
    &Url,
    &Kind,
    &Owner,
    &TokenUser,
    &SshKey,
    &KnownHosts,
    &Given,
    &PublicUrl,
    &GitHubApp,
    &Installation,
    &AppKey,
    &OAuthClient,
    &CallbackPort,
    &NoBrowser,
    &From,
    &ForceRun,
    &Unpaused,
    &Async,
    &Strict,
    &Write,
    &IncludeArchived,
    &AllPipelinesOrInstances,
};
inline constexpr const Flag *Global[] = {&Server, &Token, &TokenFile, &Json, &Help, &Version};
} // namespace flags

inline constexpr bool Required = true;

// A flag as one command takes it: with a one-letter alias there (-f is --file for `apps create`
// and --follow for `logs`), and whether the command refuses to run without it.
struct Opt {
    const Flag *flag = nullptr;
    char letter = 0;
    bool required = false;
};

// What a command needs before it can run.
enum class Needs {
    Nothing, // runs without an install (completion)
    Server,  // a server but no token (login)
    Token,   // a server and a token
};

using Handler = void (*)(Cli &cli);
// A check of the arguments beyond their number and flags, e.g. that PIPELINE/JOB has both parts;
// it runs after the generic checks and its error is a usage error (exit 2).
using Check = pando::Status (*)(const Args &args);

inline constexpr std::size_t MaxOpts = 13;

struct CommandDef {
    std::string_view group; // "apps" for `pando apps create`; empty for `pando deploy`
    std::string_view name;
    std::string_view args; // "NAME", "[APP] NAME": the usage's arguments, and what "missing …" names
    int minArgs = 0;
    int maxArgs = 0;
    std::array<Opt, MaxOpts> opts{};
    std::string_view summary; // one line, for the overview, --help and completion
    Handler handler = nullptr;
    Needs needs = Needs::Token;
    Check check = nullptr;
    std::string_view details = {}; // more lines for --help
};

// A table is complete when every entry has its words, a summary and a handler, argument counts
// that agree with its usage, and known flags: a forgotten part does not compile.
// Whether the parser knows flag by name (flags::Catalogue): one it does not is "unknown option".
constexpr bool inCatalogue(const Flag *flag)
{
    for (const Flag *known : flags::Catalogue)
        if (known == flag)
            return true;
    return false;
}

constexpr bool isComplete(std::span<const CommandDef> table)
{
    for (const CommandDef &c : table) {
        if (c.name.empty() || c.summary.empty() || c.handler == nullptr || c.minArgs < 0 || c.maxArgs < c.minArgs)
            return false;
        if ((c.maxArgs > 0) != !c.args.empty())
            return false;
        bool gap = false;
        for (const Opt &opt : c.opts) {
            if (opt.flag == nullptr) {
                gap = true;
                continue;
            }
            // Flags come first, with no hole, and a required one is one that takes a value.
            if (gap || opt.flag->name.empty() || (opt.required && opt.flag->value.empty()) || !inCatalogue(opt.flag))
                return false;
        }
    }
    return true;
}

// Each area's table, in the order the overview lists them.
std::span<const CommandDef> appCommands();
std::span<const CommandDef> envCommands();
std::span<const CommandDef> capacityCommands();
std::span<const CommandDef> serviceCommands();
std::span<const CommandDef> pipelineFileCommands();
std::span<const CommandDef> pipelineCommands();
std::span<const CommandDef> settingsCommands();
std::span<const CommandDef> runCommands();
std::span<const CommandDef> resourceCommands();
std::span<const CommandDef> secretCommands();
std::span<const CommandDef> auditCommands();
std::span<const CommandDef> accountCommands();
std::span<const CommandDef> grantCommands();
std::span<const CommandDef> connectionCommands();
std::span<const CommandDef> hookCommands();
std::span<const CommandDef> approvalCommands();
std::span<const CommandDef> toolCommands(); // completion

// "on"/"allow" or "off"/"deny" as the yes and the no; anything else fails the command with the
// words that work, and gives none.
std::optional<bool> onOff(Cli &cli, const QString &word, const QString &yes, const QString &no);

// Every command, in the overview's order.
std::span<const CommandDef *const> allCommands();
// "apps create", "deploy".
QString commandName(const CommandDef &command);
QString toQString(std::string_view text);

} // namespace pando::cli
