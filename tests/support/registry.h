#pragma once
// An image registry on loopback for tests: Debian's docker-registry (the CNCF Distribution
// registry), storing in a temporary directory, over plain HTTP on 127.0.0.1, which Docker engines
// reach without TLS as they do any loopback registry. It stops with the object.

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
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_process;
    int m_port = 0;
    QString m_error;
};

} // namespace pando::test
