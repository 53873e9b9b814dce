#include "semverresourcetype.h"

#include "adapters/api/resourceio.h"
#include "adapters/kit/gitkit/gitmirrors.h"
#include "adapters/kit/s3kit/s3client.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <memory>

namespace pando::adapters::semver {

using namespace Qt::StringLiterals;

namespace {

// A put that bumps reads, bumps and writes again this often when the branch keeps moving.
constexpr int BumpAttempts = 5;
constexpr qint64 MaxVersionFileBytes = 4096;

// Where the version lives.
class Driver {
public:
    virtual ~Driver() = default;
    // The stored version (none when nothing is stored) and what identifies the read (a commit),
    // which write() is given back so that it writes only on top of what was read.
    virtual Result<std::pair<std::optional<SemVer>, QString>> read(const CancelToken &cancel) = 0;
    // Conflict when what is stored moved since the read that gave token.
    virtual Status write(const SemVer &version, const QString &token, const CancelToken &cancel) = 0;
};

Result<std::optional<SemVer>> parseStored(const QByteArray &content, const QString &where)
{
    const QString text = QString::fromUtf8(content).trimmed();
    if (text.isEmpty())
        return std::optional<SemVer>();
    auto version = parseSemVer(text);
    if (!version)
        return fail(ErrorCode::Invalid, u"holds \"%1\", which is not a semantic version"_s.arg(text.left(64)), where,
                    u"write a version such as 1.2.3 there, or remove the file to start from initial_version"_s);
    return version;
}

class GitDriver final : public Driver {
public:
    GitDriver(const QString &cacheRoot, git::GitCredentials credentials, QString uri, git::FileCommit change)
        : m_mirrors(cacheRoot, std::move(credentials)), m_uri(std::move(uri)), m_change(std::move(change))
    {}
    Result<std::pair<std::optional<SemVer>, QString>> read(const CancelToken &cancel) override
    {
        auto file = m_mirrors.readFile(m_uri, u"refs/heads/"_s + m_change.branch, m_change.path, cancel);
        if (!file)
            return std::unexpected(file.error());
        std::optional<SemVer> version;
        if (const std::optional<QByteArray> &content = file->content; content.has_value()) {
            auto stored = parseStored(content.value(), u"source.file"_s);
            if (!stored)
                return std::unexpected(stored.error());
            version = *stored;
        }
        return std::make_pair(version, file->commit);
    }
    Status write(const SemVer &version, const QString &token, const CancelToken &cancel) override
    {
        git::FileCommit change = m_change;
        change.content = version.text().toUtf8();
        change.message.replace(u"%version%"_s, version.text()).replace(u"%file%"_s, m_change.path);
        auto committed = m_mirrors.commitFile(m_uri, change, token, cancel);
        if (!committed)
            return std::unexpected(committed.error());
        return {};
    }

private:
    git::GitMirrors m_mirrors;
    QString m_uri;
    git::FileCommit m_change;
};

class S3Driver final : public Driver {
public:
    S3Driver(s3kit::Config config, QString key) : m_client(std::move(config)), m_key(std::move(key)) {}
    Result<std::pair<std::optional<SemVer>, QString>> read(const CancelToken &cancel) override
    {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        auto fetched = m_client.download(m_key, {}, buffer, cancel);
        if (!fetched) {
            if (fetched.error().code == ErrorCode::NotFound && fetched.error().message.contains(u"NoSuchKey"_s))
                return std::make_pair(std::optional<SemVer>(), QString());
            return std::unexpected(fetched.error());
        }
        if (buffer.size() > MaxVersionFileBytes)
            return fail(ErrorCode::Invalid, u"is %1 bytes: no version file is that long"_s.arg(buffer.size()),
                        u"source.key"_s);
        auto stored = parseStored(buffer.data(), u"source.key"_s);
        if (!stored)
            return std::unexpected(stored.error());
        return std::make_pair(*stored, QString());
    }
    Status write(const SemVer &version, const QString &, const CancelToken &cancel) override
    {
        QBuffer buffer;
        buffer.setData(version.text().toUtf8());
        buffer.open(QIODevice::ReadOnly);
        s3kit::UploadOptions options;
        options.contentType = u"text/plain"_s;
        auto uploaded = m_client.upload(m_key, buffer, options, cancel);
        if (!uploaded)
            return std::unexpected(uploaded.error());
        return {};
    }

private:
    s3kit::S3Client m_client;
    QString m_key;
};

struct Source {
    std::unique_ptr<Driver> driver;
    SemVer initial;
};

// The fields a driver cannot go without; the first one missing is the error.
Status readRequired(const QJsonObject &o, std::initializer_list<std::pair<QString, QString *>> fields,
                    const QString &driver)
{
    if (auto ok = readTexts(o, fields, u"source."_s); !ok)
        return ok;
    for (const auto &[key, into] : fields)
        if (into->isEmpty())
            return fail(ErrorCode::Invalid, u"is required by the %1 driver"_s.arg(driver), u"source."_s + key);
    return {};
}

// "Name <email>" or a bare address.
std::pair<QString, QString> identity(const QString &user)
{
    static const QRegularExpression named(uR"(^\s*(.*?)\s*<([^<>]+)>\s*$)"_s);
    if (const auto m = named.match(user); m.hasMatch())
        return {m.captured(1).isEmpty() ? m.captured(2) : m.captured(1), m.captured(2)};
    return {user.trimmed(), user.trimmed()};
}

Result<Source> readSource(const QJsonObject &o, const QString &cacheRoot)
{
    Source s;
    QString initial;
    QString kind;
    if (auto ok = readTexts(o, {{u"initial_version"_s, &initial}, {u"driver"_s, &kind}}, u"source."_s); !ok)
        return std::unexpected(ok.error());
    if (!initial.isEmpty()) {
        auto parsed = parseSemVer(initial);
        if (!parsed)
            return fail(ErrorCode::Invalid, u"\"%1\" is not a semantic version (1.2.3)"_s.arg(initial),
                        u"source.initial_version"_s);
        s.initial = *parsed;
    }
    if (kind.isEmpty())
        kind = u"s3"_s;
    if (kind == u"git") {
        git::FileCommit change;
        QString uri;
        if (auto ok =
                readRequired(o, {{u"uri"_s, &uri}, {u"branch"_s, &change.branch}, {u"file"_s, &change.path}}, kind);
            !ok)
            return std::unexpected(ok.error());
        if (QDir::isAbsolutePath(change.path) || QDir::cleanPath(change.path).startsWith(u".."_s))
            return fail(ErrorCode::Invalid, u"must be a path inside the repository"_s, u"source.file"_s);
        git::GitCredentials credentials;
        QString password;
        QString key;
        QString user;
        QString message;
        if (auto ok = readTexts(o,
                                {{u"username"_s, &credentials.username},
                                 {u"password"_s, &password},
                                 {u"private_key"_s, &key},
                                 {u"git_user"_s, &user},
                                 {u"commit_message"_s, &message}},
                                u"source."_s);
            !ok)
            return std::unexpected(ok.error());
        credentials.httpsToken = password;
        credentials.sshPrivateKey = key.toUtf8();
        if (!user.isEmpty())
            std::tie(change.authorName, change.authorEmail) = identity(user);
        change.message = message.isEmpty() ? u"bump to %version%"_s : message;
        s.driver = std::make_unique<GitDriver>(cacheRoot, std::move(credentials), uri, change);
        return s;
    }
    if (kind == u"s3") {
        s3kit::Config config;
        QString key;
        if (auto ok = readRequired(o, {{u"bucket"_s, &config.bucket}, {u"key"_s, &key}}, kind); !ok)
            return std::unexpected(ok.error());
        QString region;
        if (auto ok = readTexts(o,
                                {{u"access_key_id"_s, &config.credentials.accessKeyId},
                                 {u"secret_access_key"_s, &config.credentials.secretAccessKey},
                                 {u"session_token"_s, &config.credentials.sessionToken},
                                 {u"region_name"_s, &region},
                                 {u"endpoint"_s, &config.endpoint}},
                                u"source."_s);
            !ok)
            return std::unexpected(ok.error());
        if (!region.isEmpty())
            config.region = region;
        if (auto ok = readFlags(
                o, {{u"disable_ssl"_s, &config.disableSsl}, {u"skip_ssl_verification"_s, &config.skipSslVerification}},
                u"source."_s);
            !ok)
            return std::unexpected(ok.error());
        s.driver = std::make_unique<S3Driver>(std::move(config), key);
        return s;
    }
    return fail(ErrorCode::Invalid, u"driver \"%1\" is not supported; use git or s3"_s.arg(kind), u"source.driver"_s,
                kind == u"swift" || kind == u"gcs" ? u"keep the version in a git repository or an S3 bucket"_s
                                                   : QString());
}

struct Bump {
    QString bump;
    QString pre;
    bool preWithoutVersion = false;
    bool any() const { return !bump.isEmpty() || !pre.isEmpty(); }
};

Result<Bump> readBump(const QJsonObject &params)
{
    Bump b;
    if (auto ok = readTexts(params, {{u"bump"_s, &b.bump}, {u"pre"_s, &b.pre}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    if (auto ok = readFlags(params, {{u"pre_without_version"_s, &b.preWithoutVersion}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    static const QStringList bumps{u"major"_s, u"minor"_s, u"patch"_s, u"final"_s};
    if (!b.bump.isEmpty() && !bumps.contains(b.bump))
        return fail(ErrorCode::Invalid, u"\"%1\" is not a bump; use major, minor, patch or final"_s.arg(b.bump),
                    u"params.bump"_s);
    static const QRegularExpression identifier(uR"(^[0-9A-Za-z-]+$)"_s);
    if (!b.pre.isEmpty() && !identifier.match(b.pre).hasMatch())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a pre-release name (letters, digits, '-')"_s.arg(b.pre),
                    u"params.pre"_s);
    return b;
}

// The version in params.file, a file in the step's inputs.
Result<SemVer> versionFromFile(const QString &workDir, const QString &relative)
{
    const QString where = u"params.file"_s;
    auto path = fileInInputs(workDir, relative, where);
    if (!path)
        return std::unexpected(path.error());
    QFile file(*path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Failed, u"cannot read %1: %2"_s.arg(relative, file.errorString()), where);
    auto stored = parseStored(file.read(MaxVersionFileBytes), where);
    if (!stored)
        return std::unexpected(stored.error());
    const std::optional<SemVer> &version = *stored;
    if (!version.has_value())
        return fail(ErrorCode::Invalid, u"%1 is empty"_s.arg(relative), where);
    return version.value();
}

Version versionOf(const SemVer &v)
{
    return Version{{u"number"_s, v.text()}};
}

} // namespace

QString SemVer::text() const
{
    QString out = u"%1.%2.%3"_s.arg(major).arg(minor).arg(patch);
    if (!pre.isEmpty())
        out += u'-' + pre.join(u'.');
    if (!build.isEmpty())
        out += u'+' + build.join(u'.');
    return out;
}

std::optional<SemVer> parseSemVer(const QString &text)
{
    static const QRegularExpression pattern(
        uR"(^(0|[1-9]\d{0,17})\.(0|[1-9]\d{0,17})\.(0|[1-9]\d{0,17})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$)"_s);
    const auto m = pattern.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    SemVer v;
    v.major = m.captured(1).toULongLong();
    v.minor = m.captured(2).toULongLong();
    v.patch = m.captured(3).toULongLong();
    if (m.hasCaptured(4))
        v.pre = m.captured(4).split(u'.');
    if (m.hasCaptured(5))
        v.build = m.captured(5).split(u'.');
    // A numeric pre-release identifier has no leading zero.
    static const QRegularExpression leadingZero(uR"(^0\d+$)"_s);
    for (const QString &identifier : std::as_const(v.pre))
        if (leadingZero.match(identifier).hasMatch())
            return std::nullopt;
    return v;
}

int compareSemVer(const SemVer &a, const SemVer &b)
{
    for (const auto &[x, y] : {std::pair{a.major, b.major}, {a.minor, b.minor}, {a.patch, b.patch}})
        if (x != y)
            return x < y ? -1 : 1;
    // A pre-release comes before its release; identifiers compare numerically when both are
    // numbers, numbers before words, and a shorter list first when one is the other's start.
    if (a.pre.isEmpty() != b.pre.isEmpty())
        return a.pre.isEmpty() ? 1 : -1;
    for (qsizetype i = 0; i < std::min(a.pre.size(), b.pre.size()); ++i) {
        bool aNumber = false;
        bool bNumber = false;
        const qulonglong an = a.pre[i].toULongLong(&aNumber);
        const qulonglong bn = b.pre[i].toULongLong(&bNumber);
        if (aNumber && bNumber && an != bn)
            return an < bn ? -1 : 1;
        if (aNumber != bNumber)
            return aNumber ? -1 : 1;
        if (!aNumber)
            if (const int c = a.pre[i].compare(b.pre[i]); c != 0)
                return c < 0 ? -1 : 1;
    }
    return a.pre.size() == b.pre.size() ? 0 : (a.pre.size() < b.pre.size() ? -1 : 1);
}

Result<SemVer> bumpSemVer(SemVer v, const QString &bump, const QString &pre, bool preWithoutVersion)
{
    v.build.clear();
    if (bump == u"major") {
        ++v.major;
        v.minor = 0;
        v.patch = 0;
        v.pre.clear();
    } else if (bump == u"minor") {
        ++v.minor;
        v.patch = 0;
        v.pre.clear();
    } else if (bump == u"patch") {
        ++v.patch;
        v.pre.clear();
    } else if (bump == u"final") {
        v.pre.clear();
    } else if (!bump.isEmpty()) {
        return fail(ErrorCode::Invalid, u"\"%1\" is not a bump; use major, minor, patch or final"_s.arg(bump),
                    u"params.bump"_s);
    }
    if (pre.isEmpty())
        return v;
    if (preWithoutVersion) {
        v.pre = {pre};
        return v;
    }
    // The same pre-release counts up; another, or none, starts at 1.
    bool counted = false;
    if (v.pre.size() == 2 && v.pre[0] == pre) {
        bool number = false;
        const qulonglong n = v.pre[1].toULongLong(&number);
        if (number) {
            v.pre[1] = QString::number(n + 1);
            counted = true;
        }
    }
    if (!counted)
        v.pre = {pre, u"1"_s};
    return v;
}

Result<QList<Version>> SemverResourceType::check(const QJsonObject &sourceJson, const Version &from,
                                                 const CancelToken &cancel, const LogSink &)
{
    auto source = readSource(sourceJson, m_cacheRoot);
    if (!source)
        return std::unexpected(source.error());
    auto stored = source->driver->read(cancel);
    if (!stored)
        return std::unexpected(stored.error());
    const SemVer current = stored->first.value_or(source->initial);
    const auto previous = parseSemVer(from.value(u"number"_s));
    if (previous && compareSemVer(current, *previous) <= 0)
        return QList<Version>{};
    return QList<Version>{versionOf(current)};
}

Result<VersionMetadata> SemverResourceType::in(const QJsonObject &sourceJson, const Version &version,
                                               const QJsonObject &params, const QString &dir, const BuildMetadata &,
                                               const CancelToken &, const LogSink &log)
{
    // The source is read for its errors only: a get hands over the version it is given.
    auto source = readSource(sourceJson, m_cacheRoot);
    if (!source)
        return std::unexpected(source.error());
    auto parsed = parseSemVer(version.value(u"number"_s));
    if (!parsed)
        return fail(ErrorCode::Invalid, u"\"%1\" is not a semantic version"_s.arg(version.value(u"number"_s)),
                    u"version.number"_s);
    auto bump = readBump(params);
    if (!bump)
        return std::unexpected(bump.error());
    auto bumped = bumpSemVer(*parsed, bump->bump, bump->pre, bump->preWithoutVersion);
    if (!bumped)
        return std::unexpected(bumped.error());
    const QByteArray text = bumped->text().toUtf8();
    for (const QString &name : {u"version"_s, u"number"_s})
        if (auto written = writeResourceFile(dir + u'/' + name, text); !written)
            return std::unexpected(written.error());
    if (bump->any() && log)
        log(u"bumped %1 to %2 for this build (the stored version is unchanged)"_s.arg(parsed->text(), bumped->text()));
    return VersionMetadata{version, {{u"number"_s, bumped->text()}}};
}

Result<VersionMetadata> SemverResourceType::out(const QJsonObject &sourceJson, const QJsonObject &params,
                                                const QString &workDir, const BuildMetadata &,
                                                const CancelToken &cancel, const LogSink &log)
{
    auto source = readSource(sourceJson, m_cacheRoot);
    if (!source)
        return std::unexpected(source.error());
    auto file = sourceText(params, u"file"_s, u"params."_s);
    if (!file)
        return std::unexpected(file.error());
    auto bump = readBump(params);
    if (!bump)
        return std::unexpected(bump.error());
    if (!file->isEmpty()) {
        auto version = versionFromFile(workDir, *file);
        if (!version)
            return std::unexpected(version.error());
        if (auto written = source->driver->write(*version, {}, cancel); !written)
            return std::unexpected(written.error());
        if (log)
            log(u"set the version to %1"_s.arg(version->text()));
        return VersionMetadata{versionOf(*version), {{u"number"_s, version->text()}}};
    }
    if (!bump->any())
        return fail(ErrorCode::Invalid, u"give file (a version to set) or bump and/or pre"_s, u"params"_s);
    for (int attempt = 1;; ++attempt) {
        auto stored = source->driver->read(cancel);
        if (!stored)
            return std::unexpected(stored.error());
        const SemVer current = stored->first.value_or(source->initial);
        auto bumped = bumpSemVer(current, bump->bump, bump->pre, bump->preWithoutVersion);
        if (!bumped)
            return std::unexpected(bumped.error());
        auto written = source->driver->write(*bumped, stored->second, cancel);
        if (written) {
            if (log)
                log(u"bumped %1 to %2"_s.arg(current.text(), bumped->text()));
            return VersionMetadata{versionOf(*bumped), {{u"number"_s, bumped->text()}}};
        }
        if (written.error().code != ErrorCode::Conflict || attempt == BumpAttempts)
            return std::unexpected(written.error());
        if (log)
            log(u"the version moved while bumping it (%1); bumping again"_s.arg(written.error().message));
    }
}

} // namespace pando::adapters::semver
