#pragma once
// An S3-compatible server on loopback for tests: s3rver (npm), which answers the S3 REST API from
// a temporary directory. It refuses an access key other than its one ("S3RVER", secret
// "S3RVER") but does not check Signature Version 4 signatures. Setup installs it with the other npm test tools
// (scripts/lib.sh, ensure_npm_tools); PANDO_NPM_TOOLS names where, else the user's cache directory. Plain HTTP on
// 127.0.0.1 and a port of its own choosing. It stops with the object.
//
// It keeps no object versions: a versioned bucket's requests are answered NotImplemented.

#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

class S3Server {
public:
    static constexpr const char *AccessKey = "S3RVER";
    static constexpr const char *SecretKey = "S3RVER";

    // Whether s3rver and node are installed; why not in why.
    static bool available(QString *why);

    S3Server() = default;
    ~S3Server();
    S3Server(const S3Server &) = delete;
    S3Server &operator=(const S3Server &) = delete;

    // Starts it and waits until it listens; false (error() says why) when it does not.
    bool start();
    QString error() const { return m_error; }
    // "http://127.0.0.1:PORT", what a resource's endpoint names it by.
    QString endpoint() const;

private:
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_process;
    int m_port = 0;
    QString m_error;
};

} // namespace pando::test
