#pragma once
// An image registry on loopback for tests: Debian's docker-registry (the CNCF Distribution
// registry), storing in a temporary directory, over plain HTTP on 127.0.0.1, which Docker engines
// reach without TLS as they do any loopback registry. It stops with the object. With a login it
// answers only to that user and password (its htpasswd authentication, bcrypt as it requires).

#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

class ImageRegistry {
public:
    // Whether Debian's docker-registry is installed; why not in why.
    static bool available(QString *why);

    ImageRegistry() = default;
    // The only user it lets in; before start().
    ImageRegistry(QString user, QString password) : m_user(std::move(user)), m_password(std::move(password)) {}
    ~ImageRegistry();
    ImageRegistry(const ImageRegistry &) = delete;
    ImageRegistry &operator=(const ImageRegistry &) = delete;

    // Starts it (on the port it had before, when started again) and waits until /v2/ answers;
    // false (error() says why) when it does not.
    bool start();
    void stop();
    QString error() const { return m_error; }

    // "127.0.0.1:PORT", what image references name it by.
    QString host() const;

private:
    QString m_user;
    QString m_password;
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_process;
    int m_port = 0;
    QString m_error;
};

} // namespace pando::test
