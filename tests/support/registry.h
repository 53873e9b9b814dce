#pragma once
// An image registry on loopback for tests: Debian's docker-registry (the CNCF Distribution
// registry), storing in a temporary directory, over plain HTTP on 127.0.0.1, which Docker engines
// reach without TLS as they do any loopback registry. It stops with the object. With a login it
// answers only to that user and password: by default through its htpasswd authentication (bcrypt
// as it requires), or, with Auth::Token, through the token scheme that Docker Hub, GHCR and Harbor
// use, with tests/support/registrytokenserver.py as the token server.

#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

class ImageRegistry {
public:
    // How the registry lets its one user in. Basic: HTTP Basic, checked against its htpasswd file.
    // Token: the Docker Distribution token scheme. The registry answers 401 with
    // `WWW-Authenticate: Bearer realm="<tokenRealm()>",service="<tokenService()>",scope="..."` and
    // takes only the JWTs of the token server at that realm, which hands them out (over HTTP Basic)
    // to the user and password alone: others get 401, and a client without credentials an
    // anonymous token the registry lets do nothing.
    enum class Auth { Basic, Token };

    // Whether Debian's docker-registry is installed; why not in why.
    static bool available(QString *why);
    // Whether Auth::Token can run too: docker-registry, openssl, and Debian's python3 with
    // python3-jwt and python3-cryptography; why not in why.
    static bool tokenAvailable(QString *why);

    ImageRegistry() = default;
    // The only user it lets in, and how; before start().
    ImageRegistry(QString user, QString password, Auth auth = Auth::Basic)
        : m_user(std::move(user)), m_password(std::move(password)), m_auth(auth)
    {}
    ~ImageRegistry();
    ImageRegistry(const ImageRegistry &) = delete;
    ImageRegistry &operator=(const ImageRegistry &) = delete;

    // Starts it (on the port it had before, when started again) and waits until /v2/ answers,
    // and with Auth::Token the token server too (same port and signing key when started again);
    // false (error() says why) when it does not.
    bool start();
    // Stops the registry and, with Auth::Token, the token server.
    void stop();
    QString error() const { return m_error; }

    // "127.0.0.1:PORT", what image references name it by.
    QString host() const;

    // With Auth::Token: the token server's URL, "http://127.0.0.1:PORT/token", the realm of the
    // registry's challenges.
    QString tokenRealm() const;
    // The service the challenges name and the tokens' audience.
    static QString tokenService();
    // With Auth::Token: how many tokens the token server has issued since it started (anonymous
    // ones too, refusals not), so that a test can tell a client that keeps its token from one that
    // fetches one per request; -1 when it cannot be asked.
    int tokensIssued() const;

private:
    bool startTokenServer();

    QString m_user;
    QString m_password;
    Auth m_auth = Auth::Basic;
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_process;
    std::unique_ptr<QProcess> m_tokenServer;
    int m_port = 0;
    int m_tokenPort = 0;
    QString m_error;
};

} // namespace pando::test
