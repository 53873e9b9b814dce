// What a source connection must be (checkConnectionInput and the checks of each credential's
// form) and which connection covers an address (choose, chooseForImage): pure rules, apart from
// the store that keeps connections (sourceconn.cpp).

#include "core/sourceconn/sourceconn.h"

#include "adapters/api/jose/rs256.h"

#include <QCryptographicHash>
#include <QRegularExpression>
#include <QUrl>
#include <QtEndian>

using namespace Qt::StringLiterals;

namespace pando::core::sourceconn {

namespace {

// The fields of an OpenSSH private key ("openssh-key-v1"): the cipher its private half is
// encrypted with and the public key blob. nullopt when the text is not such a key.
struct OpenSshKey {
    QByteArray cipher;
    QByteArray publicKey;
};

std::optional<OpenSshKey> readOpenSshKey(QByteArrayView pem)
{
    static constexpr QByteArrayView Begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
    static constexpr QByteArrayView End = "-----END OPENSSH PRIVATE KEY-----";
    const qsizetype from = pem.indexOf(Begin);
    const qsizetype to = pem.indexOf(End);
    if (from < 0 || to < from)
        return std::nullopt;
    const QByteArray body = QByteArray::fromBase64(
        pem.sliced(from + Begin.size(), to - from - Begin.size()).toByteArray().simplified().replace(' ', ""));
    static constexpr QByteArrayView Magic("openssh-key-v1\0", 15);
    if (!body.startsWith(Magic))
        return std::nullopt;
    qsizetype at = Magic.size();
    const auto field = [&]() -> std::optional<QByteArray> {
        if (at + 4 > body.size())
            return std::nullopt;
        const auto length = qFromBigEndian<quint32>(body.constData() + at);
        at += 4;
        if (length > quint32(body.size() - at))
            return std::nullopt;
        QByteArray value = body.mid(at, length);
        at += length;
        return value;
    };
    auto cipher = field();
    auto kdf = field();
    auto kdfOptions = field();
    if (!cipher || !kdf || !kdfOptions || at + 4 > body.size())
        return std::nullopt;
    at += 4; // the number of keys: one in every key ssh-keygen writes
    auto publicKey = field();
    if (!publicKey)
        return std::nullopt;
    return OpenSshKey{*cipher, *publicKey};
}

Status checkKey(QByteArrayView key)
{
    const QString where = u"ssh_key"_s;
    const QString hint =
        u"give the private key file ssh-keygen wrote (e.g. ssh-keygen -t ed25519 -N '' -f deploy-key)"_s;
    if (key.startsWith("-----BEGIN OPENSSH PRIVATE KEY-----")) {
        auto read = readOpenSshKey(key);
        if (!read)
            return fail(ErrorCode::Invalid, u"the OpenSSH private key is damaged or cut short"_s, where, hint);
        if (read->cipher != "none")
            return fail(ErrorCode::Invalid,
                        u"the private key is protected by a passphrase; a deploy key is used unattended, so it "
                        u"must have none"_s,
                        where, u"remove it from a copy with ssh-keygen -p -N '' -f COPY, or make a new key"_s);
        return {};
    }
    if (key.startsWith("-----BEGIN ENCRYPTED PRIVATE KEY-----") || key.contains("Proc-Type: 4,ENCRYPTED"))
        return fail(ErrorCode::Invalid,
                    u"the private key is protected by a passphrase; a deploy key is used unattended, so it must "
                    u"have none"_s,
                    where, u"remove it from a copy with ssh-keygen -p -N '' -f COPY, or make a new key"_s);
    for (const QByteArrayView begin :
         {QByteArrayView("-----BEGIN RSA PRIVATE KEY-----"), QByteArrayView("-----BEGIN EC PRIVATE KEY-----"),
          QByteArrayView("-----BEGIN PRIVATE KEY-----")}) {
        if (key.startsWith(begin))
            return {};
    }
    if (key.startsWith("ssh-") || key.startsWith("ecdsa-"))
        return fail(ErrorCode::Invalid, u"this is a public key; the connection needs the private one"_s, where,
                    u"give the file without .pub; add the .pub to the forge as the deploy key"_s);
    return fail(ErrorCode::Invalid, u"is not an SSH private key (OpenSSH or PEM)"_s, where, hint);
}

// One host key per line, as ssh-keyscan prints them: "host[,host…] type base64", comments and
// blank lines allowed.
Status checkKnownHosts(const QString &knownHosts)
{
    const QString where = u"known_hosts"_s;
    const QString hint = u"get them with ssh-keyscan -p PORT HOST, and check the fingerprints (ssh-keygen -lf) "
                         u"against what the forge publishes"_s;
    if (knownHosts.trimmed().isEmpty())
        return fail(ErrorCode::Invalid,
                    u"a deploy key connection needs the server's host keys, so nobody in between can pose as it"_s,
                    where, hint);
    if (knownHosts.size() > qsizetype(64) * 1024)
        return fail(ErrorCode::TooLarge, u"the host keys are more than 64 KiB"_s, where);
    int keys = 0;
    int number = 0;
    for (const QString &raw : knownHosts.split(u'\n')) {
        ++number;
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        QStringList fields = line.simplified().split(u' ');
        if (fields.first().startsWith(u'@'))
            fields.removeFirst();
        const bool typed =
            fields.size() >= 3 && (fields.at(1).startsWith(u"ssh-"_s) || fields.at(1).startsWith(u"ecdsa-"_s) ||
                                   fields.at(1).startsWith(u"sk-"_s));
        if (!typed || QByteArray::fromBase64(fields.at(2).toLatin1()).isEmpty())
            return fail(ErrorCode::Invalid,
                        u"line %1 is not \"HOST KEY-TYPE BASE64-KEY\" as in a known_hosts file"_s.arg(number), where,
                        hint);
        ++keys;
    }
    if (keys == 0)
        return fail(ErrorCode::Invalid, u"lists no host key"_s, where, hint);
    return {};
}

Status checkToken(QByteArrayView token)
{
    const QString where = u"token"_s;
    if (token.isEmpty())
        return fail(ErrorCode::Invalid, u"a token connection needs a token"_s, where);
    if (token.size() > MaxTokenBytes)
        return fail(ErrorCode::TooLarge, u"the token is more than %1 bytes"_s.arg(MaxTokenBytes), where);
    for (const char c : token) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            return fail(ErrorCode::Invalid,
                        u"the token contains whitespace or a control character; copy it without the line break"_s,
                        where);
    }
    return {};
}

// A GitHub App's ids are numbers GitHub shows: the App ID on the app's settings page, an
// installation's at the end of its settings page's address.
Status checkAppNumber(const QString &value, const QString &field)
{
    const bool number = !value.isEmpty() && value.size() <= 20 && !value.startsWith(u'0') &&
                        std::all_of(value.begin(), value.end(), [](QChar c) { return c >= u'0' && c <= u'9'; });
    if (number)
        return {};
    return fail(ErrorCode::Invalid,
                value.isEmpty() ? u"a GitHub App connection needs it"_s
                                : u"\"%1\" is not a number as GitHub shows it"_s.arg(value.left(40)),
                field,
                u"the app's settings page shows its App ID; an installation's id ends the address of its settings "
                u"page (…/settings/installations/ID)"_s);
}

Status checkGitHubApp(const ConnectionInput &input)
{
    if (input.scope.kind != adapters::ForgeKind::GitHub)
        return fail(ErrorCode::Invalid,
                    u"a GitHub App is GitHub's; a %1 host takes a token or a deploy key"_s.arg(
                        adapters::forgeKindName(input.scope.kind)),
                    u"kind"_s);
    if (!input.username.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"a GitHub App's tokens are sent as %1; give no user name"_s.arg(InstallationTokenUser),
                    u"username"_s);
    if (!input.knownHosts.isEmpty())
        return fail(ErrorCode::Invalid, u"host keys are for ssh-key connections; a GitHub App reads over https"_s,
                    u"known_hosts"_s);
    for (const auto &[value, field] :
         {std::pair{input.appId, u"app_id"_s}, std::pair{input.installationId, u"installation_id"_s}}) {
        if (auto ok = checkAppNumber(value, field); !ok)
            return ok;
    }
    if (input.secret.size() > MaxKeyBytes)
        return fail(ErrorCode::TooLarge, u"the key is more than %1 bytes"_s.arg(MaxKeyBytes), u"private_key"_s);
    if (auto key = adapters::jose::RsaKey::fromPem(input.secret); !key)
        return fail(ErrorCode::Invalid, key.error().message, u"private_key"_s,
                    u"give the .pem file GitHub generated under the app's settings (Private keys)"_s);
    return {};
}

// A registry connection is docker login's: the registry's address alone, a user and a password
// or token.
Status checkRegistry(const ConnectionInput &input)
{
    const QUrl url(input.scope.baseUrl);
    if (url.scheme().toLower() == u"ssh"_s || !url.path(QUrl::FullyDecoded).remove(u'/').isEmpty())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a registry's address: give its https:// address alone"_s.arg(input.scope.baseUrl),
                    u"url"_s,
                    u"e.g. https://ghcr.io, https://registry.gitlab.com or https://docker.io; narrow it to a namespace "
                    u"with owner"_s);
    if (input.auth != AuthKind::Token)
        return fail(ErrorCode::Invalid,
                    u"a registry takes a user name and a password or token, as docker login does; not a %1"_s.arg(
                        authKindName(input.auth)),
                    u"auth"_s);
    return {};
}

Status checkOAuth(const ConnectionInput &input)
{
    const bool bitbucketCloud =
        input.scope.kind == adapters::ForgeKind::Bitbucket && QUrl(input.scope.baseUrl).host() == u"bitbucket.org"_s;
    const bool hasApps = input.scope.kind == adapters::ForgeKind::GitHub ||
                         input.scope.kind == adapters::ForgeKind::GitLab ||
                         input.scope.kind == adapters::ForgeKind::Gitea || bitbucketCloud;
    if (!hasApps)
        return fail(ErrorCode::Invalid,
                    u"OAuth applications are GitHub's, GitLab's, Gitea's, Forgejo's and Bitbucket Cloud's; a %1 host "
                    u"takes a token or a deploy key"_s.arg(input.scope.kind == adapters::ForgeKind::Bitbucket
                                                               ? u"Bitbucket Data Center"_s
                                                               : adapters::forgeKindName(input.scope.kind)),
                    u"kind"_s);
    if (QUrl(input.scope.baseUrl).scheme() == u"ssh"_s)
        return fail(ErrorCode::Invalid, u"an OAuth application's tokens read over https; the address is ssh://"_s,
                    u"url"_s, u"give the forge's https:// address"_s);
    if (!input.username.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"an OAuth connection's tokens are sent as the forge takes them; give no user name"_s,
                    u"username"_s);
    if (!input.knownHosts.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"host keys are for ssh-key connections; an OAuth application reads over https"_s,
                    u"known_hosts"_s);
    const bool plain =
        std::all_of(input.clientId.begin(), input.clientId.end(), [](QChar c) { return c > u' ' && c < QChar(0x7f); });
    if (input.clientId.isEmpty() || input.clientId.size() > 255 || !plain)
        return fail(ErrorCode::Invalid,
                    input.clientId.isEmpty() ? u"an OAuth connection needs its application's client id"_s
                                             : u"is not a client id: 1-255 printable characters, no spaces"_s,
                    u"client_id"_s, u"the application's settings page on the forge shows it"_s);
    const QString hint = u"the application's settings page on the forge shows it (or makes a new one)"_s;
    if (input.secret.isEmpty())
        return fail(ErrorCode::Invalid, u"an OAuth connection needs its application's client secret"_s,
                    u"client_secret"_s, hint);
    if (auto ok = checkToken(input.secret); !ok)
        return fail(ok.error().code, QString(ok.error().message).replace(u"the token"_s, u"the client secret"_s),
                    u"client_secret"_s, hint);
    return {};
}

} // namespace

Status checkConnectionName(const QString &name)
{
    static const QRegularExpression pattern(uR"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\z)"_s);
    if (!pattern.match(name).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a connection name: 1-63 lower-case letters, digits and '-', not starting or "
                    u"ending with '-'"_s.arg(name.left(64)),
                    u"name"_s);
    return {};
}

Status checkConnectionInput(const ConnectionInput &input)
{
    if (auto ok = checkConnectionName(input.name); !ok)
        return ok;
    if (auto ok = adapters::checkForgeScope(input.scope); !ok)
        return ok;
    if (input.username.size() > 255 || input.username.contains(u':') ||
        std::any_of(input.username.begin(), input.username.end(), [](QChar c) { return c.isSpace() || c < u' '; }))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a user name: no spaces, colons or control characters, at most 255"_s.arg(
                        input.username.left(64)),
                    u"username"_s);
    if (input.scope.kind == adapters::ForgeKind::Registry) {
        if (auto ok = checkRegistry(input); !ok)
            return ok;
    }
    if (input.auth == AuthKind::GitHubApp)
        return checkGitHubApp(input);
    if (!input.clientId.isEmpty() && input.auth != AuthKind::OAuth)
        return fail(ErrorCode::Invalid, u"a client id is for OAuth connections"_s, u"client_id"_s);
    if (input.auth == AuthKind::OAuth) {
        if (!input.appId.isEmpty() || !input.installationId.isEmpty())
            return fail(ErrorCode::Invalid, u"an app id and an installation id are for GitHub App connections"_s,
                        input.appId.isEmpty() ? u"installation_id"_s : u"app_id"_s);
        return checkOAuth(input);
    }
    if (!input.appId.isEmpty() || !input.installationId.isEmpty())
        return fail(ErrorCode::Invalid, u"an app id and an installation id are for GitHub App connections"_s,
                    input.appId.isEmpty() ? u"installation_id"_s : u"app_id"_s);
    if (input.auth == AuthKind::Token) {
        if (auto ok = checkToken(input.secret); !ok)
            return ok;
        if (input.username.isEmpty() && adapters::defaultTokenUser(input.scope.kind).isEmpty())
            return fail(ErrorCode::Invalid,
                        u"a token for a %1 host is sent with the account's user name; none was given"_s.arg(
                            adapters::forgeKindName(input.scope.kind)),
                        u"username"_s, u"give the user the token belongs to"_s);
        if (!input.knownHosts.isEmpty())
            return fail(ErrorCode::Invalid, u"host keys are for ssh-key connections; a token is sent over https"_s,
                        u"known_hosts"_s);
        return {};
    }
    if (input.secret.size() > MaxKeyBytes)
        return fail(ErrorCode::TooLarge, u"the key is more than %1 bytes"_s.arg(MaxKeyBytes), u"ssh_key"_s);
    if (auto ok = checkKey(input.secret.trimmed()); !ok)
        return ok;
    return checkKnownHosts(input.knownHosts);
}

QString keyFingerprint(QByteArrayView privateKey)
{
    auto key = readOpenSshKey(privateKey);
    if (!key || key->publicKey.isEmpty())
        return {};
    const QByteArray digest = QCryptographicHash::hash(key->publicKey, QCryptographicHash::Sha256);
    return u"SHA256:"_s + QString::fromLatin1(digest.toBase64(QByteArray::OmitTrailingEquals));
}

namespace {

Result<std::optional<Connection>> closest(const QList<Connection> &candidates, const QString &repo, bool image)
{
    int best = -1;
    QList<Connection> chosen;
    for (const Connection &c : candidates) {
        auto address = image ? adapters::parseImageAddress(repo) : adapters::parseRepoAddress(repo, c.scope.kind);
        if (!address)
            continue;
        const int score = adapters::coverage(c.scope, c.overHttps(), *address);
        if (score < 0 || score < best)
            continue;
        if (score > best)
            chosen.clear();
        best = score;
        chosen << c;
    }
    if (chosen.isEmpty())
        return std::optional<Connection>{};
    if (chosen.size() > 1) {
        QStringList names;
        for (const Connection &c : chosen)
            names << c.name;
        return std::unexpected(Error{ErrorCode::Conflict,
                                     u"connections %1 all cover %2 equally"_s.arg(names.join(u", "_s), repo),
                                     u"source.connection"_s, u"name the one to use as source.connection"_s});
    }
    return std::optional<Connection>{chosen.first()};
}

} // namespace

Result<std::optional<Connection>> choose(const QList<Connection> &candidates, const QString &repo)
{
    return closest(candidates, repo, false);
}

Result<std::optional<Connection>> chooseForImage(const QList<Connection> &candidates, const QString &image)
{
    return closest(candidates, image, true);
}

} // namespace pando::core::sourceconn
