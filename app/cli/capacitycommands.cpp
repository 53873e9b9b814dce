// `pando capacity`, `pando edge status` and `pando apps start`.
#include "cli.h"
#include "commands.h"
#include "output.h"

#include "core/vocab/vocab.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::cli {

namespace {

// "512Mi", "7.6Gi": binary units, one decimal where it matters.
QString bytes(double value)
{
    static const char *const units[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    int unit = 0;
    while (value >= 1024 && unit < 5) {
        value /= 1024;
        ++unit;
    }
    const QString number = unit == 0 || value >= 100 || value == double(qint64(value))
                               ? QString::number(qRound64(value))
                               : QString::number(value, 'f', 1);
    return number + QLatin1String(units[unit]);
}

// "committed / total (free)"; "?" for what the runtime does not say.
QString figure(const QJsonObject &o, bool isBytes)
{
    const auto show = [isBytes](double v) {
        return isBytes ? bytes(v) : QString::number(v, 'g', 6);
    };
    const double total = o.value(QStringLiteral("total")).toDouble();
    QString text = show(o.value(QStringLiteral("committed")).toDouble()) + QStringLiteral(" / ") +
                   (total > 0 ? show(total) : QStringLiteral("?"));
    const QJsonValue available = o.value(QStringLiteral("available"));
    if (available.isDouble())
        text += QStringLiteral(" (%1 free)").arg(show(available.toDouble()));
    return text;
}

void showCapacity(Cli &cli)
{
    cli.api().capacity(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        QStringList notes;
        for (const QJsonValue value : r.json.value(QStringLiteral("runtimes")).toArray()) {
            const QJsonObject rt = value.toObject();
            const QString kind =
                str(rt, "kind") +
                (rt.value(QStringLiteral("default")).toBool() ? QStringLiteral(" (default)") : QString()) +
                (rt.value(QStringLiteral("reachable")).toBool(true) ? QString() : QStringLiteral(" (unreachable)"));
            const QJsonObject disk = rt.value(QStringLiteral("disk")).toObject();
            rows << QStringList{kind,
                                figure(rt.value(QStringLiteral("cpus")).toObject(), false),
                                figure(rt.value(QStringLiteral("memory")).toObject(), true),
                                figure(disk, true),
                                QString::number(num(rt, "apps")),
                                QString::number(num(rt, "services"))};
            if (const QString of = str(disk, "of"); of != QLatin1String("-"))
                notes << QStringLiteral("%1 disk: %2").arg(str(rt, "kind"), of);
            const QJsonObject cache = disk.value(QStringLiteral("build_cache")).toObject();
            if (const qint64 images = num(cache, "images"); images > 0)
                notes << QStringLiteral("%1 build cache: %2 in %3 image(s) builds left, the latest build's of each app")
                             .arg(str(rt, "kind"), bytes(double(num(cache, "bytes"))))
                             .arg(images);
            if (const QJsonObject builder = cache.value(QStringLiteral("builder")).toObject(); !builder.isEmpty())
                notes << QStringLiteral("%1 builder cache (BuildKit's, every build's on the engine): %2, %3 of it "
                                        "reclaimable; docker builder prune trims it")
                             .arg(str(rt, "kind"), bytes(double(num(builder, "bytes"))),
                                  bytes(double(num(builder, "reclaimable"))));
            if (const QString note = str(rt, "note"); note != QLatin1String("-"))
                notes << QStringLiteral("%1: %2").arg(str(rt, "kind"), note);
        }
        printOut(table({QStringLiteral("RUNTIME"), QStringLiteral("CPUS"), QStringLiteral("MEMORY"),
                        QStringLiteral("DISK"), QStringLiteral("APPS"), QStringLiteral("SERVICES")},
                       rows));
        printOut(QStringLiteral("(committed / total, with what the runtime reports free)"));
        for (const QString &note : std::as_const(notes))
            printOut(note);
        cli.finish(ExitOk);
    }));
}

// HOST, ISSUER, EXPIRES, PROBLEM: one row per certificate the edge holds or tried to get.
QString certificateTable(const QJsonArray &certificates)
{
    QList<QStringList> rows;
    for (const QJsonValue value : certificates) {
        const QJsonObject c = value.toObject();
        const qint64 notAfter = num(c, "not_after_ms");
        rows.append({str(c, "host"), str(c, "issuer"), timestamp(notAfter), str(c, "error")});
    }
    return table(
        {QStringLiteral("HOST"), QStringLiteral("ISSUER"), QStringLiteral("EXPIRES"), QStringLiteral("PROBLEM")}, rows);
}

void showEdge(Cli &cli)
{
    cli.api().edge(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        const bool running = r.json.value(QStringLiteral("running")).toBool();
        if (!cli.args().json) {
            QList<std::pair<QString, QString>> lines{
                {QStringLiteral("edge"), str(r.json, "kind")},
                {QStringLiteral("status"), running ? QStringLiteral("serving") : QStringLiteral("not answering")},
                {QStringLiteral("process"), num(r.json, "pid") > 0 ? QString::number(num(r.json, "pid")) : u"-"_s},
                {QStringLiteral("routes"), QString::number(num(r.json, "routes"))},
                {QStringLiteral("while Pando is stopped"), r.json.value(QStringLiteral("outlives_pando")).toBool()
                                                               ? QStringLiteral("apps keep answering")
                                                               : QStringLiteral("apps stop answering")}};
            if (const int https = int(num(r.json, "https_port")); https > 0)
                lines.append({QStringLiteral("domains served on"),
                              QStringLiteral("HTTP port %1, HTTPS port %2").arg(num(r.json, "http_port")).arg(https)});
            if (const QString problem = str(r.json, "problem"); problem != QLatin1String("-"))
                lines.append({QStringLiteral("problem"), problem});
            printOut(keyValues(lines));
            const QJsonArray certificates = r.json.value(QStringLiteral("certificates")).toArray();
            if (!certificates.isEmpty()) {
                printOut(QString());
                printOut(certificateTable(certificates));
            }
        }
        // A status that says the edge is down is a failure the caller can test for.
        if (!running)
            return cli.failWith(Error{ErrorCode::Unavailable, QStringLiteral("the edge does not answer"),
                                      QStringLiteral("edge status"), str(r.json, "problem")});
        cli.finish(ExitOk);
    }));
}

// The keys apps verify identity assertions with: kid and algorithm per key, or the document.
void showAssertionKeys(Cli &cli)
{
    cli.api().assertionKeys(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("keys")).toArray()) {
            const QJsonObject key = value.toObject();
            rows << QStringList{str(key, "kid"), str(key, "alg"), str(key, "crv")};
        }
        printOut(table({QStringLiteral("KID"), QStringLiteral("ALG"), QStringLiteral("CURVE")}, rows));
        printOut(QStringLiteral("(newest first; apps fetch them from /.well-known/jwks.json on this server)"));
        cli.finish(ExitOk);
    }));
}

void rotateAssertionKey(Cli &cli)
{
    cli.api().rotateAssertionKey(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("new assertion signing key %1; the old one stays published until what it "
                                    "signed has expired")
                         .arg(str(r.json, "kid")));
        cli.finish(ExitOk);
    }));
}

void showEdgeCa(Cli &cli)
{
    cli.api().edgeCa(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(r.json.value(QStringLiteral("pem")).toString().trimmed());
        cli.finish(ExitOk);
    }));
}

// `apps start|restart|stop`: the answer's status is what the app is now. A start or restart
// succeeded only when it runs, whatever the request said (an older pandod answers 200 for a
// container that exited at once); a stop when it is stopped.
void changeApp(Cli &cli, client::AppAction action)
{
    const QString name = cli.args().arguments.value(0);
    const bool stop = action == client::AppAction::Stop;
    cli.api().appAction(name, action, cli.handle([&cli, name, action, stop](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        const QString status = str(r.json, "status");
        const core::AppStatus wanted = stop ? core::AppStatus::Stopped : core::AppStatus::Running;
        if (core::parseAppStatus(status) != wanted) {
            const QString reason = str(r.json, "status_reason");
            const QString verb = action == client::AppAction::Start ? QStringLiteral("start")
                                 : stop                             ? QStringLiteral("stop")
                                                                    : QStringLiteral("restart");
            return cli.failWith(Error{ErrorCode::Failed,
                                      QStringLiteral("app %1 did not %2: it is %3%4")
                                          .arg(name, stop ? verb : QStringLiteral("start"), orDash(status),
                                               reason.isEmpty() ? QString() : QStringLiteral(" (") + reason + u')'),
                                      QStringLiteral("apps %1 %2").arg(verb, name),
                                      QStringLiteral("see why in its log: pando logs %1").arg(name)});
        }
        if (!cli.args().json)
            printOut(stop ? QStringLiteral("app %1 is stopped; `pando apps start %1` runs it again").arg(name)
                          : QStringLiteral("app %1 is running").arg(name));
        cli.finish(ExitOk);
    }));
}

void startApp(Cli &cli)
{
    changeApp(cli, client::AppAction::Start);
}

void stopApp(Cli &cli)
{
    changeApp(cli, client::AppAction::Stop);
}

void restartApp(Cli &cli)
{
    changeApp(cli, client::AppAction::Restart);
}

constexpr CommandDef CapacityTable[] = {
    {"apps",
     "start",
     "NAME",
     1,
     1,
     {},
     "start an app's serving version again (after a stop, or its disk limit stopped it)",
     &startApp},
    {"apps", "stop", "NAME", 1, 1, {}, "stop an app and keep it stopped until it is started or deployed", &stopApp},
    {"apps", "restart", "NAME", 1, 1, {}, "restart an app's serving container", &restartApp},
    {"", "capacity", "", 0, 0, {}, "each runtime's CPUs, memory and disk beside what is committed", &showCapacity},
    {"edge", "status", "", 0, 0, {}, "what serves the apps, whether it does, and its certificates", &showEdge},
    {"edge",
     "ca",
     "",
     0,
     0,
     {},
     "print the install CA's root (PEM), to trust apps served with tls: internal",
     &showEdgeCa},
    {"edge", "jwks", "", 0, 0, {}, "the keys that verify the identity assertions apps are given", &showAssertionKeys},
    {"edge", "rotate-key", "", 0, 0, {}, "sign identity assertions with a new key from now on", &rotateAssertionKey},
};
static_assert(isComplete(CapacityTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> capacityCommands()
{
    return CapacityTable;
}

} // namespace pando::cli
