#include "knownhosts.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMessageAuthenticationCode>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

// One entry of a host list: "name", "*.example.com", "[host]:2222", "!bad" or a hashed
// "|1|salt|hmac" (HMAC-SHA1 of the name, keyed with the salt).
bool patternMatches(const QByteArray &pattern, const QByteArray &name)
{
    if (pattern.startsWith("|1|")) {
        const QList<QByteArray> parts = pattern.mid(3).split('|');
        if (parts.size() != 2)
            return false;
        const QByteArray salt = QByteArray::fromBase64(parts.at(0));
        const QByteArray hash = QByteArray::fromBase64(parts.at(1));
        return !salt.isEmpty() && QMessageAuthenticationCode::hash(name, salt, QCryptographicHash::Sha1) == hash;
    }
    // OpenSSH patterns know only '*' and '?' ('[' is literal, as in "[host]:port"); names are
    // compared case-insensitively.
    QString regex;
    for (const QChar c : QString::fromUtf8(pattern.toLower()))
        regex += c == u'*' ? u".*"_s : c == u'?' ? u"."_s : QRegularExpression::escape(QString(c));
    const QRegularExpression re(QRegularExpression::anchoredPattern(regex));
    return re.match(QString::fromUtf8(name.toLower())).hasMatch();
}

// A host list matches when one entry matches and no negated ("!") entry does.
bool hostListMatches(const QByteArray &list, const QByteArray &name)
{
    bool matched = false;
    for (const QByteArray &entry : list.split(',')) {
        if (entry.startsWith('!')) {
            if (patternMatches(entry.mid(1), name))
                return false;
        } else if (patternMatches(entry, name)) {
            matched = true;
        }
    }
    return matched;
}

} // namespace

QString sshFingerprint(const QByteArray &hostKey)
{
    QByteArray digest = QCryptographicHash::hash(hostKey, QCryptographicHash::Sha256).toBase64();
    while (digest.endsWith('='))
        digest.chop(1);
    return u"SHA256:"_s + QString::fromLatin1(digest);
}

Status checkKnownHost(const QString &knownHostsPath, const QString &host, int port, const QByteArray &hostKey)
{
    const QString label = port == 22 ? host : u"%1:%2"_s.arg(host).arg(port);
    QFile file(knownHostsPath);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Unavailable,
                    u"cannot read the ssh known_hosts file to check %1: %2"_s.arg(label, file.errorString()),
                    knownHostsPath);
    if (file.size() > MaxKnownHostsBytes)
        return fail(ErrorCode::Invalid, u"the ssh known_hosts file is larger than 1 MiB"_s, knownHostsPath);
    return checkKnownHostIn(file.readAll(), host, port, hostKey, knownHostsPath);
}

Status checkKnownHostIn(const QByteArray &knownHosts, const QString &host, int port, const QByteArray &hostKey,
                        const QString &where)
{
    const QString label = port == 22 ? host : u"%1:%2"_s.arg(host).arg(port);
    const QString &knownHostsPath = where;
    // OpenSSH writes hosts on a port other than 22 as "[host]:port".
    const QByteArray name = port == 22 ? host.toUtf8() : u"[%1]:%2"_s.arg(host).arg(port).toUtf8();
    bool listed = false;
    for (const QByteArray &raw : knownHosts.split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        QList<QByteArray> fields = line.simplified().split(' ');
        QByteArray marker;
        if (fields.first().startsWith('@'))
            marker = fields.takeFirst();
        if (fields.size() < 3 || !hostListMatches(fields.at(0), name))
            continue;
        const bool sameKey = QByteArray::fromBase64(fields.at(2)) == hostKey;
        if (marker == "@revoked") {
            if (sameKey)
                return fail(ErrorCode::Unauthorized,
                            u"the ssh host key of %1 (%2) is marked @revoked"_s.arg(label, sshFingerprint(hostKey)),
                            knownHostsPath);
            continue;
        }
        if (!marker.isEmpty())
            continue; // @cert-authority: host certificates are not supported, the key must be listed
        listed = true;
        if (sameKey)
            return {};
    }
    if (listed)
        return fail(ErrorCode::Unauthorized,
                    u"the ssh host key of %1 (%2) does not match the key listed for it: the server's key changed "
                    u"or someone is intercepting the connection"_s.arg(label, sshFingerprint(hostKey)),
                    knownHostsPath,
                    u"check the new fingerprint with the server's administrator before updating the file"_s);
    return fail(ErrorCode::Unauthorized,
                u"the ssh host %1 (key %2) is not listed in the known hosts"_s.arg(label, sshFingerprint(hostKey)),
                knownHostsPath,
                u"add it with ssh-keyscan -p %1 %2 after checking the fingerprint"_s.arg(port).arg(host));
}

} // namespace pando::adapters::git::detail
