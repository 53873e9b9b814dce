// `pando settings show|set`: the install's settings, which administrators change.

#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QJsonArray>

namespace pando::cli {

std::optional<bool> onOff(Cli &cli, const QString &word, const QString &yes, const QString &no)
{
    if (word == yes)
        return true;
    if (word == no)
        return false;
    cli.failWith(Error{ErrorCode::Invalid,
                       QStringLiteral("expected %1 or %2, got \"%3\"").arg(yes, no, word),
                       QStringLiteral("arguments"),
                       {}});
    return std::nullopt;
}

namespace {

QString orNone(const QString &value)
{
    return value.isEmpty() ? QStringLiteral("none") : value;
}

// "any" when the install serves any name.
QString allowedDomains(const QJsonObject &settings)
{
    QStringList names;
    for (const QJsonValue name : settings.value(QStringLiteral("allowed_domains")).toArray())
        names << name.toString();
    return names.isEmpty() ? QStringLiteral("any") : names.join(QStringLiteral(","));
}

// "90 days" or "forever": how long a deploy's output is kept after it ended.
QString deployLogDays(const QJsonObject &settings)
{
    const int days = settings.value(QStringLiteral("deploy_log_days")).toInt();
    return days == 0 ? QStringLiteral("forever") : QStringLiteral("%1 days").arg(days);
}

void showSettings(Cli &cli)
{
    cli.api().settings(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const auto onOff = [&r](const QString &key, const QString &on) {
            return r.json.value(key).toBool() ? on : QStringLiteral("off");
        };
        const QString members = QStringLiteral("on (for apps whose spec a member writes)");
        printOut(keyValues(
            {{QStringLiteral("host-execution"),
              onOff(QStringLiteral("host_execution"), QStringLiteral("on (for pipelines an administrator allowed)"))},
             {QStringLiteral("local-repositories"), onOff(QStringLiteral("local_repositories"), members)},
             {QStringLiteral("ssh-agent"), onOff(QStringLiteral("ssh_agent"), members)},
             {QStringLiteral("internal-hosts"), onOff(QStringLiteral("internal_hosts"), members)},
             {QStringLiteral("member-ports"), r.json.value(QStringLiteral("member_ports")).toString()},
             {QStringLiteral("preview-forks"),
              onOff(QStringLiteral("preview_forks"), QStringLiteral("on (pull requests from forks get previews)"))},
             {QStringLiteral("deploy-log-days"), deployLogDays(r.json)},
             {QStringLiteral("base-domain"), orNone(r.json.value(QStringLiteral("base_domain")).toString())},
             {QStringLiteral("allowed-domains"), allowedDomains(r.json)},
             {QStringLiteral("wildcard-domains"), onOff(QStringLiteral("wildcard_domains"), QStringLiteral("on"))}}));
        cli.finish(ExitOk);
    }));
}

// The settings `pando settings set` knows: the CLI's name, the API's, and whether it is on|off.
struct SettingName {
    const char *cli;
    const char *api;
    bool onOff;
};
constexpr SettingName settingNames[] = {
    {"host-execution", "host_execution", true},
    {"local-repositories", "local_repositories", true},
    {"ssh-agent", "ssh_agent", true},
    {"internal-hosts", "internal_hosts", true},
    {"member-ports", "member_ports", false},
    {"preview-forks", "preview_forks", true},
    {"deploy-log-days", "deploy_log_days", false},
    {"base-domain", "base_domain", false},
    {"allowed-domains", "allowed_domains", false},
    {"wildcard-domains", "wildcard_domains", true},
};

void setSetting(Cli &cli)
{
    const QString key = cli.args().arguments.value(0);
    const QString word = cli.args().arguments.value(1);
    const SettingName *setting = nullptr;
    QStringList known;
    for (const SettingName &name : settingNames) {
        known.append(QLatin1String(name.cli));
        if (key == QLatin1String(name.cli))
            setting = &name;
    }
    if (!setting)
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("unknown setting \"%1\"").arg(key),
                                  QStringLiteral("arguments"),
                                  QStringLiteral("settings: ") + known.join(QStringLiteral(", "))});
    // member-ports, base-domain, allowed-domains: the server checks them; "none" and "any" clear.
    QJsonValue value =
        (word == QLatin1String("none") && key != QLatin1String("member-ports")) || word == QLatin1String("any")
            ? QString()
            : word;
    if (setting->onOff) {
        const auto enabled = onOff(cli, word, QStringLiteral("on"), QStringLiteral("off"));
        if (!enabled)
            return;
        value = *enabled;
    }
    const QString api = QLatin1String(setting->api);
    cli.api().updateSettings(QJsonObject{{api, value}}, cli.handle([&cli, key, api](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonValue now = r.json.value(api);
        if (api == QLatin1String("host_execution")) {
            printOut(now.toBool() ? QStringLiteral("host execution is on for pipelines an administrator allows "
                                                   "(pando pipelines host-execution NAME allow)")
                                  : QStringLiteral("host execution is off: tasks need an image_resource"));
            return cli.finish(ExitOk);
        }
        if (api == QLatin1String("allowed_domains"))
            printOut(QStringLiteral("%1 is %2").arg(key, allowedDomains(r.json)));
        else if (api == QLatin1String("deploy_log_days"))
            printOut(QStringLiteral("%1 is %2").arg(key, deployLogDays(r.json)));
        else
            printOut(QStringLiteral("%1 is %2")
                         .arg(key, now.isBool() ? (now.toBool() ? QStringLiteral("on") : QStringLiteral("off"))
                                                : orNone(now.toString())));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef SettingsTable[] = {
    {"settings", "show", "", 0, 0, {}, "show the install's settings", &showSettings},
    {"settings",
     "set",
     "KEY VALUE",
     2,
     2,
     {},
     "change an install setting (administrators): host-execution, local-repositories, ssh-agent, "
     "internal-hosts, preview-forks, wildcard-domains on|off; member-ports FIRST-LAST|none; base-domain NAME|none; "
     "allowed-domains NAME,NAME|any; deploy-log-days DAYS|forever",
     &setSetting},
};
static_assert(isComplete(SettingsTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> settingsCommands()
{
    return SettingsTable;
}

} // namespace pando::cli
