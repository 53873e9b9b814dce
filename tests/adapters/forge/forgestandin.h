#pragma once
// The local stand-in for six forges' REST APIs (forge_api_standin.py, its docstring says what it
// answers) as a process a test starts and stops: where it listens, what it was sent, and its
// control routes (refuse, hang, move the next pages elsewhere, forget). No forge on the internet
// can be reached from the tests; this is what the forge adapter and what builds on it run against.
//
// Threading: the test's thread; each call is a blocking request to the stand-in (10 s deadline).

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace pando::test {

class ForgeStandIn {
public:
    // The stand-in takes token (and Bitbucket Cloud's app password user bitbucketUser), given to
    // it through its environment, never argv.
    explicit ForgeStandIn(QByteArray token, QString bitbucketUser = QStringLiteral("jdoe"));
    ~ForgeStandIn();
    ForgeStandIn(const ForgeStandIn &) = delete;
    ForgeStandIn &operator=(const ForgeStandIn &) = delete;

    // Whether Debian's python3, which runs it, is there with python3-jwt and python3-cryptography.
    static bool available();
    // Starts it and waits (10 s) until it says its port; false when it did not.
    bool start();
    void stop();

    // "http://127.0.0.1:PORT"; each forge answers below its own prefix ("/github", "/azure/ORG").
    QString base() const;

    QJsonArray statuses(const QString &forge) const;
    QJsonObject hooks(const QString &forge) const;
    // The events forge's hooks are for: {"repo": {"url": [event, …]}}, each list sorted; a second
    // hook for a URL shows as its events twice.
    QJsonObject hookEvents(const QString &forge) const;
    // The pull request comments forge took: [{"repo", "number", "path", "body", "id"}], path the
    // request's (below the stand-in's root), body the JSON it was sent.
    QJsonArray comments(const QString &forge) const;
    // Forgets the comment forge keeps as id, as if someone deleted it on the forge.
    void deleteComment(const QString &forge, const QString &id) const;
    // Gives forge's repo a push-only hook for url (as an older Pando registered it) in the
    // forge's own shape; its id.
    QString seedHook(const QString &forge, const QString &repo, const QString &url, const QString &secret) const;
    QJsonArray requests(const QString &forge) const;
    // How many GETs forge answered on a path ending in pathEnd.
    int gets(const QString &forge, const QString &pathEnd) const;
    // status: 401, 403, 404, 203 or "hang"; repo "*": every request to forge.
    void failFor(const QString &forge, const QString &repo, const QJsonValue &status) const;
    void reset() const;
    void nextPagesAt(const QString &host) const;
    // Makes GitHub take app appId's JWTs, verified with publicKey (PEM): installations maps an
    // installation's id to "active" or "suspended"; an active one's token is token, and lists
    // repositories (empty: all three). Kept across reset().
    void gitHubApp(const QString &appId, const QByteArray &publicKey, const QJsonObject &installations,
                   const QByteArray &token, const QStringList &repositories = {}) const;
    // Registers the OAuth application every forge knows: its pages act as the user choosing
    // Authorize (Deny when deny), its grants last expiresIn seconds (0: they do not expire and
    // come without a refresh token) and read like the stand-in's token.
    void oauthApp(const QString &clientId, const QByteArray &clientSecret, int expiresIn, bool deny = false) const;
    // What a browser shown authorizeUrl (an OAuth application's authorization page) is sent to
    // next: the redirect address with the code and state, or the error; empty when the page did
    // not redirect.
    static QString authorizationRedirect(const QString &authorizeUrl);
    // The refresh tokens granted so far stop working, as when the user revokes the application.
    void revokeOAuth() const;

private:
    QJsonValue get(const QString &what, const QString &forge) const;
    QJsonObject control(const QString &path, const QJsonObject &body) const;

    QByteArray m_token;
    QString m_bitbucketUser;
    QProcess m_process;
    int m_port = 0;
};

// A new RSA key pair as GitHub hands an App's out (openssl genrsa -traditional, 2048 bits): the
// private key PKCS#1 PEM, the public SubjectPublicKeyInfo PEM. Empty halves when openssl failed.
struct RsaKeyPair {
    QByteArray privatePem;
    QByteArray publicPem;
};
RsaKeyPair rsaKeyPair();

} // namespace pando::test
