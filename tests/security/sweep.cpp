#include "sweep.h"

#include "adapters/kit/dockerapi/dockerclient.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QDateTime>
#include <QDebug>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QTest>
#include <QUrl>
#include <QWebSocket>
#include <algorithm>
#include <optional>

namespace pando::test::attacks {

namespace {

// Below this a form could be ordinary text (a few base64 characters are in any token).
constexpr qsizetype MinimumSecretBytes = 12;

QByteArray lowerHex(QByteArray percent)
{
    for (qsizetype i = 0; i + 2 < percent.size(); ++i)
        if (percent[i] == '%') {
            percent[i + 1] = char(QChar::toLower(uint(uchar(percent[i + 1]))));
            percent[i + 2] = char(QChar::toLower(uint(uchar(percent[i + 2]))));
        }
    return percent;
}

QByteArray jsonEscaped(const QByteArray &raw, bool escapeSlash)
{
    QByteArray out;
    for (const char c : raw) {
        if (c == '"' || c == '\\')
            out += '\\' + QByteArray(1, c);
        else if (c == '/' && escapeSlash)
            out += "\\/";
        else if (uchar(c) < 0x20)
            out += "\\u" + QByteArray::number(uchar(c), 16).rightJustified(4, '0');
        else
            out += c;
    }
    return out;
}

// Where a form of a secret occurs in a text.
struct Occurrence {
    qsizetype start = 0;
    qsizetype end = 0;
    QString secret;
};

// Every occurrence of every form of every secret, by where it starts.
QList<Occurrence> occurrences(const QMap<QString, QList<SecretForm>> &secrets, const QByteArray &text)
{
    QList<Occurrence> all;
    for (auto secret = secrets.cbegin(); secret != secrets.cend(); ++secret)
        for (const SecretForm &form : secret.value())
            for (qsizetype at = text.indexOf(form.bytes); at >= 0; at = text.indexOf(form.bytes, at + 1))
                all.append({at, at + form.bytes.size(), secret.key()});
    std::sort(all.begin(), all.end(), [](const Occurrence &a, const Occurrence &b) { return a.start < b.start; });
    return all;
}

// The text around one occurrence, with every occurrence of any secret in it shown as «name» and
// unprintable bytes as \xNN: where it sat, without a secret's value.
QString excerpt(const QByteArray &text, const Occurrence &hit, const QList<Occurrence> &all)
{
    const auto shown = [&text](qsizetype from, qsizetype to) {
        QString out;
        for (const char c : QByteArrayView(text).sliced(from, to - from))
            out += uchar(c) >= 0x20 && uchar(c) < 0x7f ? QString(QLatin1Char(c))
                                                       : QStringLiteral("\\x%1").arg(uchar(c), 2, 16, QLatin1Char('0'));
        return out;
    };
    const qsizetype from = std::max<qsizetype>(0, hit.start - 40);
    const qsizetype to = std::min(text.size(), hit.end + 40);
    QString out;
    qsizetype at = from;
    for (const Occurrence &other : all) {
        if (other.end <= at || other.start >= to)
            continue;
        if (other.start > at)
            out += shown(at, other.start);
        out += QStringLiteral("«%1»").arg(other.secret);
        at = other.end;
    }
    if (at < to)
        out += shown(at, to);
    return out;
}

// "{secret:NAME}" and "{secret-url:NAME}" in every string of value.
QJsonValue withValues(const QJsonValue &value, const QMap<QString, QByteArray> &secrets)
{
    if (value.isString()) {
        QString text = value.toString();
        for (auto it = secrets.cbegin(); it != secrets.cend(); ++it) {
            text.replace(QStringLiteral("{secret:%1}").arg(it.key()), QString::fromUtf8(it.value()));
            text.replace(QStringLiteral("{secret-url:%1}").arg(it.key()),
                         QString::fromLatin1(QUrl::toPercentEncoding(QString::fromUtf8(it.value()))));
        }
        return text;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &item : value.toArray())
            out.append(withValues(item, secrets));
        return out;
    }
    if (value.isObject()) {
        QJsonObject out = value.toObject();
        for (auto it = out.begin(); it != out.end(); ++it)
            it.value() = withValues(it.value(), secrets);
        return out;
    }
    return value;
}

// The values of field in the objects of the list under key ("apps" → each app's "name").
QStringList fieldsOf(const QJsonObject &answer, const QString &key, const QString &field)
{
    QStringList out;
    for (const QJsonValue &item : answer.value(key).toArray())
        if (const QString value = item.toObject().value(field).toString(); !value.isEmpty() && !out.contains(value))
            out.append(value);
    return out;
}

} // namespace

QList<SecretForm> secretForms(const QByteArray &secret)
{
    QList<SecretForm> forms{{QStringLiteral("raw"), secret}};
    const qsizetype n = secret.size();
    for (int offset = 0; offset < 3; ++offset) {
        // Character i of the encoding carries bits [6i, 6i + 6); the secret's bits are
        // [8 * offset, 8 * (offset + n)). Only characters wholly inside are the secret's own.
        const qsizetype first = (8 * offset + 5) / 6;
        const qsizetype end = (8 * (offset + n)) / 6;
        for (const bool url : {false, true}) {
            const QByteArray encoded =
                QByteArray(QByteArray(offset, '\0') + secret)
                    .toBase64(url ? QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals
                                  : QByteArray::Base64Encoding | QByteArray::OmitTrailingEquals);
            forms.append({QStringLiteral("%1, offset %2")
                              .arg(url ? QStringLiteral("base64url") : QStringLiteral("base64"))
                              .arg(offset),
                          encoded.mid(first, end - first)});
        }
    }
    const QByteArray percent = QUrl::toPercentEncoding(QString::fromUtf8(secret));
    forms.append({QStringLiteral("percent-encoded"), percent});
    forms.append({QStringLiteral("percent-encoded, lower-case hex"), lowerHex(percent)});
    forms.append({QStringLiteral("form-encoded (+ for a space)"), QByteArray(percent).replace("%20", "+")});
    forms.append({QStringLiteral("percent-encoded as by encodeURI"),
                  QUrl::toPercentEncoding(QString::fromUtf8(secret), "#$&'()*+,/:;=?@!~")});
    forms.append({QStringLiteral("JSON-escaped"), jsonEscaped(secret, false)});
    forms.append({QStringLiteral("JSON-escaped with \\/"), jsonEscaped(secret, true)});
    QList<SecretForm> distinct;
    for (const SecretForm &form : std::as_const(forms))
        if (std::none_of(distinct.cbegin(), distinct.cend(),
                         [&](const SecretForm &f) { return f.bytes == form.bytes; }))
            distinct.append(form);
    return distinct;
}

QStringList findSecrets(const QMap<QString, QList<SecretForm>> &secrets, const QByteArray &text)
{
    QStringList found;
    const QList<Occurrence> all = occurrences(secrets, text);
    for (auto secret = secrets.cbegin(); secret != secrets.cend(); ++secret)
        for (const SecretForm &form : secret.value())
            if (const qsizetype at = text.indexOf(form.bytes); at >= 0)
                found << QStringLiteral("secret \"%1\" %2 at byte %3: %4")
                             .arg(secret.key(), form.name)
                             .arg(at)
                             .arg(excerpt(text, {at, at + form.bytes.size(), secret.key()}, all));
    return found;
}

StreamTap::StreamTap(int port, const QByteArray &token, const QString &pathAndQuery)
    : m_socket(std::make_unique<QWebSocket>())
{
    QObject::connect(m_socket.get(), &QWebSocket::textMessageReceived, m_socket.get(),
                     [this](const QString &message) { m_received << message.toUtf8(); });
    QObject::connect(m_socket.get(), &QWebSocket::binaryMessageReceived, m_socket.get(),
                     [this](const QByteArray &message) { m_received << message; });
    QObject::connect(m_socket.get(), &QWebSocket::connected, m_socket.get(), [this] { m_opened = true; });
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1%2").arg(port).arg(pathAndQuery)));
    request.setRawHeader("Authorization", "Bearer " + token);
    m_socket->open(request);
}

StreamTap::~StreamTap() = default;

bool StreamTap::waitConnected(int ms)
{
    return QTest::qWaitFor([this] { return m_opened || isClosed(); }, ms) && m_opened;
}

void StreamTap::listen(int ms)
{
    // Until then, or for ms: both are fine.
    static_cast<void>(QTest::qWaitFor([this] { return isClosed(); }, ms));
}

bool StreamTap::isClosed() const
{
    return m_socket->state() == QAbstractSocket::UnconnectedState;
}

QString StreamTap::abnormalClose() const
{
    if (!isClosed() || m_socket->closeCode() == QWebSocketProtocol::CloseCodeNormal)
        return {};
    return QStringLiteral("%1 %2").arg(int(m_socket->closeCode())).arg(m_socket->closeReason());
}

Sweep::Sweep(const QJsonObject &entry, Daemon &daemon) : m_daemon(daemon)
{
    QMap<QString, QByteArray> values;
    const QJsonObject secrets = entry.value(QStringLiteral("secrets")).toObject();
    for (auto it = secrets.begin(); it != secrets.end(); ++it) {
        values.insert(it.key(), it.value().toString().toUtf8());
        m_secrets.insert(it.key(), secretForms(values.value(it.key())));
        daemon.saved.insert(QStringLiteral("secret-") + it.key(), values.value(it.key()));
    }
    m_entry = withValues(entry, values).toObject();
}

Sweep::~Sweep() = default;

bool Sweep::start(QString *why)
{
    for (auto it = m_secrets.cbegin(); it != m_secrets.cend(); ++it) {
        const QByteArray raw = it.value().constFirst().bytes;
        if (raw.size() < MinimumSecretBytes) {
            *why = QStringLiteral("secret \"%1\": at least %2 bytes, so that its forms are its own")
                       .arg(it.key())
                       .arg(MinimumSecretBytes);
            return false;
        }
        // Each form a byte string of its own: a value whose percent-encoded or JSON form is the
        // raw one would let those forms go unchecked.
        if (raw == QUrl::toPercentEncoding(QString::fromUtf8(raw)) || raw == jsonEscaped(raw, false)) {
            *why = QStringLiteral("secret \"%1\": give it characters that URLs and JSON escape (a '\"' is escaped by "
                                  "both; a space, '/' and '+' by URLs), so that every form differs from the raw value")
                       .arg(it.key());
            return false;
        }
    }
    // The search itself, on each form as encoders write it inside longer text: a search that
    // misses proves nothing.
    for (auto it = m_secrets.cbegin(); it != m_secrets.cend(); ++it) {
        const QByteArray raw = it.value().constFirst().bytes;
        QList<QPair<QString, QByteArray>> written{
            {QStringLiteral("QJsonDocument"),
             QJsonDocument(QJsonObject{{QStringLiteral("k"), QString::fromUtf8("a " + raw + " b")}}).toJson()},
            {QStringLiteral("QUrl::toPercentEncoding"), QUrl::toPercentEncoding(QString::fromUtf8("t=" + raw))}};
        for (int offset = 0; offset < 3; ++offset) {
            const QByteArray around = QByteArray(offset, 'u') + raw + "tail";
            written.append({QStringLiteral("base64 at offset %1").arg(offset), around.toBase64()});
            written.append(
                {QStringLiteral("base64url at offset %1").arg(offset), around.toBase64(QByteArray::Base64UrlEncoding)});
        }
        for (const auto &[how, text] : std::as_const(written))
            if (findSecrets({{it.key(), it.value()}}, text).isEmpty()) {
                *why = QStringLiteral("the sweep's search misses secret \"%1\" written by %2").arg(it.key(), how);
                return false;
            }
    }
    if (const QByteArray text = QJsonDocument(m_entry).toJson();
        text.contains("{secret:") || text.contains("{secret-url:")) {
        *why = QStringLiteral("a {secret:NAME} placeholder names no secret of the entry");
        return false;
    }
    if (auto base = DockerHarness::ensureBaseImage(); !base) {
        *why = QStringLiteral("the base image: ") + base.error().text();
        return false;
    }
    m_startedSecs = QDateTime::currentSecsSinceEpoch() - 1;
    m_events = std::make_unique<StreamTap>(m_daemon.port, m_daemon.token, QStringLiteral("/api/v1/events"));
    if (!m_events->waitConnected(5000)) {
        *why = QStringLiteral("the event stream /api/v1/events did not open");
        return false;
    }
    return true;
}

void Sweep::look(const QString &where, const QByteArray &text)
{
    ++m_places;
    for (const QString &found : findSecrets(m_secrets, text))
        m_found << where + QStringLiteral(": ") + found;
}

QJsonObject Sweep::get(const QString &route, const QString &path, const QList<int> &accepted)
{
    m_routesRead.insert(route);
    const Answer answer = call(m_daemon.port, "GET", path.toUtf8(), m_daemon.token);
    // The status and error code only: an error's message could hold what is looked for.
    if (!accepted.contains(answer.status))
        m_problems
            << QStringLiteral("GET %1 answered %2 %3")
                   .arg(path)
                   .arg(answer.status)
                   .arg(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString());
    look(QStringLiteral("GET ") + path, answer.raw);
    return answer.json;
}

void Sweep::stream(const QString &route, const QString &path, int ms)
{
    m_routesRead.insert(route);
    StreamTap tap(m_daemon.port, m_daemon.token, path);
    if (!tap.waitConnected(5000)) {
        m_problems << QStringLiteral("the WebSocket %1 did not open").arg(path);
        return;
    }
    tap.listen(ms);
    if (const QString closed = tap.abnormalClose(); !closed.isEmpty())
        m_problems << QStringLiteral("the WebSocket %1 was closed: %2").arg(path, closed);
    if (tap.received().isEmpty())
        m_problems << QStringLiteral("the WebSocket %1 sent nothing in %2 ms").arg(path).arg(ms);
    look(QStringLiteral("WebSocket ") + path, tap.received());
}

void Sweep::sweepApi()
{
    // Every object the install holds, and every GET route that shows one.
    get(QStringLiteral("/api/v1/health"), QStringLiteral("/api/v1/health"));
    const QJsonObject apps = get(QStringLiteral("/api/v1/apps"), QStringLiteral("/api/v1/apps"));
    for (const QString &app : fieldsOf(apps, QStringLiteral("apps"), QStringLiteral("name"))) {
        const QString base = QStringLiteral("/api/v1/apps/") + app;
        get(QStringLiteral("/api/v1/apps/{name}"), base);
        const QJsonObject deploys =
            get(QStringLiteral("/api/v1/apps/{name}/deploys"), base + QStringLiteral("/deploys?limit=1000"));
        for (const QString &id : fieldsOf(deploys, QStringLiteral("deploys"), QStringLiteral("id"))) {
            get(QStringLiteral("/api/v1/deploys/{id}"), QStringLiteral("/api/v1/deploys/") + id);
            get(QStringLiteral("/api/v1/deploys/{id}/log"),
                QStringLiteral("/api/v1/deploys/") + id + QStringLiteral("/log?limit=5000"));
            // A deploy that ended: its output, then the server closes.
            stream(QStringLiteral("/api/v1/deploys/{id}/log/follow"),
                   QStringLiteral("/api/v1/deploys/") + id + QStringLiteral("/log/follow"), 3000);
        }
        get(QStringLiteral("/api/v1/apps/{name}/logs"), base + QStringLiteral("/logs?tail=100000"));
        get(QStringLiteral("/api/v1/apps/{name}/secrets"), base + QStringLiteral("/secrets"));
        get(QStringLiteral("/api/v1/apps/{name}/env"), base + QStringLiteral("/env"));
        get(QStringLiteral("/api/v1/apps/{name}/hook"), base + QStringLiteral("/hook?limit=500"));
        get(QStringLiteral("/api/v1/apps/{name}/previews"), base + QStringLiteral("/previews"));
        get(QStringLiteral("/api/v1/apps/{name}/services"), base + QStringLiteral("/services"));
        get(QStringLiteral("/api/v1/apps/{name}/grants"), base + QStringLiteral("/grants"));
        // What the edge is answered for the app: an assertion in a header, its claims in the body.
        get(QStringLiteral("/api/v1/edge/auth"), QStringLiteral("/api/v1/edge/auth?app=") + app);
        stream(QStringLiteral("/api/v1/apps/{name}/logs/follow"), base + QStringLiteral("/logs/follow?tail=5000"),
               1500);
    }
    get(QStringLiteral("/api/v1/services"), QStringLiteral("/api/v1/services"));

    QStringList runs;
    const QJsonObject pipelines = get(QStringLiteral("/api/v1/pipelines"), QStringLiteral("/api/v1/pipelines"));
    for (const QString &pipeline : fieldsOf(pipelines, QStringLiteral("pipelines"), QStringLiteral("name"))) {
        const QString base = QStringLiteral("/api/v1/pipelines/") + pipeline;
        get(QStringLiteral("/api/v1/pipelines/{name}"), base);
        runs << fieldsOf(
            get(QStringLiteral("/api/v1/pipelines/{name}/runs"), base + QStringLiteral("/runs?limit=1000")),
            QStringLiteral("runs"), QStringLiteral("id"));
        get(QStringLiteral("/api/v1/pipelines/{name}/grants"), base + QStringLiteral("/grants"));
        get(QStringLiteral("/api/v1/pipelines/{name}/jobs"), base + QStringLiteral("/jobs"));
        const QJsonObject resources =
            get(QStringLiteral("/api/v1/pipelines/{name}/resources"), base + QStringLiteral("/resources"));
        for (const QString &resource : fieldsOf(resources, QStringLiteral("resources"), QStringLiteral("name")))
            get(QStringLiteral("/api/v1/pipelines/{name}/resources/{resource}/versions"),
                base + QStringLiteral("/resources/") + resource + QStringLiteral("/versions"));
        get(QStringLiteral("/api/v1/secrets"), QStringLiteral("/api/v1/secrets?scope=") + pipeline);
    }
    runs << fieldsOf(get(QStringLiteral("/api/v1/runs"), QStringLiteral("/api/v1/runs?limit=1000")),
                     QStringLiteral("runs"), QStringLiteral("id"));
    runs.removeDuplicates();
    for (const QString &run : std::as_const(runs)) {
        const QString base = QStringLiteral("/api/v1/runs/") + run;
        get(QStringLiteral("/api/v1/runs/{id}"), base);
        get(QStringLiteral("/api/v1/runs/{id}/events"), base + QStringLiteral("/events?limit=10000"));
        // A run that ended: all its events, then the server closes.
        stream(QStringLiteral("/api/v1/runs/{id}/follow"), base + QStringLiteral("/follow?after=0"), 3000);
    }
    get(QStringLiteral("/api/v1/secrets"), QStringLiteral("/api/v1/secrets"));
    const QJsonObject connections =
        get(QStringLiteral("/api/v1/source-connections"), QStringLiteral("/api/v1/source-connections"));
    for (const QString &name : fieldsOf(connections, QStringLiteral("connections"), QStringLiteral("name"))) {
        const QString base = QStringLiteral("/api/v1/source-connections/") + name;
        const QJsonObject connection = get(QStringLiteral("/api/v1/source-connections/{name}"), base);
        get(QStringLiteral("/api/v1/source-connections/{name}/grants"), base + QStringLiteral("/grants"));
        // Its forge's API: a connection to a generic host has none (400), and what the refusal
        // says is searched like any answer.
        get(QStringLiteral("/api/v1/source-connections/{name}/repositories"), base + QStringLiteral("/repositories"),
            {200, 400});
        const QString repo = connection.value(QStringLiteral("url")).toString() + QStringLiteral("/private.git");
        get(QStringLiteral("/api/v1/source-connections/{name}/branches"),
            base + QStringLiteral("/branches?repo=") + QString::fromLatin1(QUrl::toPercentEncoding(repo)), {200, 400});
    }
    const QJsonObject approvals =
        get(QStringLiteral("/api/v1/approvals"), QStringLiteral("/api/v1/approvals?limit=1000"));
    for (const QString &id : fieldsOf(approvals, QStringLiteral("approvals"), QStringLiteral("id")))
        get(QStringLiteral("/api/v1/approvals/{id}"), QStringLiteral("/api/v1/approvals/") + id);
    for (const char *route : {"/api/v1/audit/verify", "/api/v1/audit/sinks", "/api/v1/users", "/api/v1/connections",
                              "/api/v1/tokens", "/api/v1/settings", "/api/v1/capacity", "/api/v1/edge"})
        get(QString::fromLatin1(route), QString::fromLatin1(route));
    get(QStringLiteral("/api/v1/audit"), QStringLiteral("/api/v1/audit?limit=10000"));
    // Public keys only: a private key's PEM or its "d" would be found here.
    get(QStringLiteral("/.well-known/jwks.json"), QStringLiteral("/.well-known/jwks.json"));

    // What the event stream sent since before the first step.
    m_routesRead.insert(QStringLiteral("/api/v1/events"));
    m_events->listen(500);
    if (m_events->received().isEmpty())
        m_problems << QStringLiteral("the event stream /api/v1/events sent nothing while the steps ran");
    look(QStringLiteral("WebSocket /api/v1/events (open from before the first step)"), m_events->received());
}

void Sweep::sweepDocker()
{
    // What pandod made in the engine, found by the install's label. Containers' environments
    // are left out: that is where app secrets and task params belong.
    QFile idFile(m_daemon.dir.path() + QStringLiteral("/data/install-id"));
    const QString installId =
        idFile.open(QIODevice::ReadOnly) ? QString::fromUtf8(idFile.readAll().trimmed()) : QString();
    if (installId.isEmpty()) {
        m_problems << QStringLiteral("pandod's install id could not be read: nothing in Docker was swept");
        return;
    }
    const QString filters = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("label"),
                                   QJsonArray{QString(QStringLiteral("dev.pando.install=") + installId)}}})
            .toJson(QJsonDocument::Compact));
    const adapters::dockerapi::DockerClient docker;
    const auto read = [&](const QString &path,
                          const QList<QPair<QString, QString>> &query) -> std::optional<QByteArray> {
        adapters::dockerapi::Request request;
        request.path = path;
        request.query = query;
        request.timeoutMs = 5000;
        auto answer = docker.call(request);
        if (!answer) {
            m_problems << QStringLiteral("docker GET %1: %2").arg(path, answer.error().text());
            return std::nullopt;
        }
        return answer->body;
    };
    const auto listed = [&](const QString &path, const QString &what, int atLeast) {
        QList<QPair<QString, QString>> query{{QStringLiteral("filters"), filters}};
        if (what == QLatin1String("containers"))
            query.append({QStringLiteral("all"), QStringLiteral("1")}); // stopped ones too
        const std::optional<QByteArray> list = read(path, query);
        if (!list)
            return QJsonArray();
        look(QStringLiteral("docker GET %1 (the install's %2)").arg(path, what), *list);
        const QJsonDocument doc = QJsonDocument::fromJson(*list);
        // /volumes answers {"Volumes": [...]}, the others a list.
        const QJsonArray items = doc.isArray() ? doc.array() : doc.object().value(QStringLiteral("Volumes")).toArray();
        if (items.size() < atLeast)
            m_problems << QStringLiteral("docker: the install has no %1").arg(what);
        return items;
    };

    for (const QJsonValue &item : listed(QStringLiteral("/containers/json"), QStringLiteral("containers"), 1)) {
        const QString id = item.toObject().value(QStringLiteral("Id")).toString();
        const std::optional<QByteArray> inspected = read(QStringLiteral("/containers/%1/json").arg(id), {});
        if (!inspected)
            continue;
        QJsonObject container = QJsonDocument::fromJson(*inspected).object();
        QJsonObject config = container.value(QStringLiteral("Config")).toObject();
        config.remove(QStringLiteral("Env"));
        container.insert(QStringLiteral("Config"), config);
        look(QStringLiteral("docker container %1 (inspected, Config.Env left out: labels, name, command, mounts)")
                 .arg(container.value(QStringLiteral("Name")).toString()),
             QJsonDocument(container).toJson(QJsonDocument::Compact));
    }
    for (const QJsonValue &item : listed(QStringLiteral("/images/json"), QStringLiteral("images"), 1)) {
        const QString id = item.toObject().value(QStringLiteral("Id")).toString();
        const QString name = item.toObject().value(QStringLiteral("RepoTags")).toArray().at(0).toString(id);
        if (const auto inspected = read(QStringLiteral("/images/%1/json").arg(id), {}))
            look(QStringLiteral("docker image %1 (inspected: labels, config, environment)").arg(name), *inspected);
        if (const auto history = read(QStringLiteral("/images/%1/history").arg(id), {}))
            look(QStringLiteral("docker image %1 (history: the build's commands)").arg(name), *history);
    }
    listed(QStringLiteral("/networks"), QStringLiteral("networks"), 0);
    listed(QStringLiteral("/volumes"), QStringLiteral("volumes"), 0);
    // The engine's events keep the labels of containers that are gone (tasks' containers).
    const std::optional<QByteArray> events =
        read(QStringLiteral("/events"), {{QStringLiteral("since"), QString::number(m_startedSecs)},
                                         {QStringLiteral("until"), QString::number(QDateTime::currentSecsSinceEpoch())},
                                         {QStringLiteral("filters"), filters}});
    if (events && events->trimmed().isEmpty())
        m_problems << QStringLiteral("docker: no engine event of the install since the entry began");
    if (events)
        look(QStringLiteral("docker GET /events (the install's, since the entry began: labels of every container)"),
             *events);
}

void Sweep::sweepDataDirectory()
{
    // Secrets are sealed, passwords hashed and run output masked before anything is stored.
    QDirIterator files(m_daemon.dir.path(), QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    int read = 0;
    while (files.hasNext()) {
        QFile file(files.next());
        // A socket (the edge's admin socket, while Caddy runs) keeps nothing at rest to read.
        if (!files.fileInfo().isFile() && !files.fileInfo().isSymLink())
            continue;
        if (!file.open(QIODevice::ReadOnly)) {
            m_problems << QStringLiteral("pandod's data directory: %1 could not be read").arg(file.fileName());
            continue;
        }
        ++read;
        look(QStringLiteral("pandod's data directory: ") + QDir(m_daemon.dir.path()).relativeFilePath(file.fileName()),
             file.readAll());
    }
    if (read == 0)
        m_problems << QStringLiteral("pandod's data directory: no file in it");
}

void Sweep::sweepDaemonOutput()
{
    // A moment for what pandod logs about the last requests; then all it wrote since it started
    // (or since the entry before on a shared pandod).
    QTest::qWait(500);
    const QByteArray said = m_daemon.process.readAll();
    if (said.isEmpty())
        m_problems << QStringLiteral("pandod's output: nothing to read");
    look(QStringLiteral("pandod's standard output and error"), said);
}

void Sweep::checkRouteCoverage()
{
    QFile table(sourceDir() + QStringLiteral("/app/server/handlers.cpp"));
    if (!table.open(QIODevice::ReadOnly)) {
        m_problems << QStringLiteral("app/server/handlers.cpp (the route table) could not be read");
        return;
    }
    static const QRegularExpression getRoute(QStringLiteral(R"re(\{"GET", "(/api/v1/[^"]*)")re"));
    const QJsonObject skipped = m_entry.value(QStringLiteral("skipRoutes")).toObject();
    int routes = 0;
    for (const QRegularExpressionMatch &match : getRoute.globalMatch(QString::fromUtf8(table.readAll()))) {
        ++routes;
        const QString route = match.captured(1);
        if (!m_routesRead.contains(route) && !skipped.contains(route))
            m_problems << QStringLiteral("GET %1 (in the route table) was not swept: read it in sweep.cpp (for every "
                                         "object it shows), or name it in the entry's skipRoutes with why")
                              .arg(route);
    }
    if (routes == 0)
        m_problems << QStringLiteral("no GET route found in app/server/handlers.cpp: has the table's form changed?");
}

QStringList Sweep::cleanUp()
{
    QStringList problems;
    for (const QJsonValue &value : m_entry.value(QStringLiteral("then")).toArray()) {
        const QString line = QString::fromUtf8(expand(value.toString(), m_daemon));
        const QByteArray method = line.section(QLatin1Char(' '), 0, 0).toUtf8();
        const QByteArray path = line.section(QLatin1Char(' '), 1).toUtf8();
        const Answer answer = call(m_daemon.port, method, path, m_daemon.token);
        if (answer.status < 200 || answer.status >= 300) {
            problems << QStringLiteral("then: %1 answered %2").arg(line).arg(answer.status);
            continue;
        }
        if (method != "DELETE")
            continue;
        QElapsedTimer waited;
        waited.start();
        while (call(m_daemon.port, "GET", path, m_daemon.token).status != 404) {
            if (waited.elapsed() > 60000) {
                problems << QStringLiteral("then: %1 is still there after 60 s").arg(QString::fromUtf8(path));
                break;
            }
            QTest::qWait(200);
        }
    }
    return problems;
}

QStringList Sweep::finish()
{
    sweepApi();
    sweepDocker();
    sweepDataDirectory();
    sweepDaemonOutput();
    checkRouteCoverage();
    int forms = 0;
    for (const QList<SecretForm> &list : std::as_const(m_secrets))
        forms += int(list.size());
    qInfo().noquote() << QStringLiteral("swept %1 places (%2 GET routes) for %3 forms of %4 secrets: %5 found, %6 "
                                        "places not read")
                             .arg(m_places)
                             .arg(m_routesRead.size())
                             .arg(forms)
                             .arg(m_secrets.size())
                             .arg(m_found.size())
                             .arg(m_problems.size());
    return m_found + m_problems;
}

} // namespace pando::test::attacks
