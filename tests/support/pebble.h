#pragma once
// Pebble, Let's Encrypt's ACME test server (Debian's pebble), on loopback for tests: its own
// DNS stub (pebble-challtestsrv, every name → 127.0.0.1), so it validates challenges against
// whatever serves the given HTTP and HTTPS ports, as a public CA would against a server's
// address. Its listener's certificate is made here (openssl); its issuing root is fetched from
// its management API once it runs. Both processes stop with the object.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

struct PebbleOptions {
    int httpPort = 0;           // where HTTP-01 challenges are fetched (the edge's HTTP port)
    int tlsPort = 0;            // where TLS-ALPN-01 challenges are made (the edge's HTTPS port)
    int validitySeconds = 0;    // the certificates' lifetime; 0: Pebble's default (years)
    QStringList refuse;         // names Pebble refuses to issue for (its domainBlocklist)
    int nonceRejectPercent = 0; // how many good nonces Pebble refuses as bad (badNonce), on purpose
};

class Pebble {
public:
    // Whether Debian's pebble and openssl are installed; why not in why.
    static bool available(QString *why);

    explicit Pebble(PebbleOptions options);
    ~Pebble();
    Pebble(const Pebble &) = delete;
    Pebble &operator=(const Pebble &) = delete;

    // Starts the DNS stub and Pebble and waits for the directory to answer; false (error() says
    // why) when either does not.
    bool start();
    void stop();
    QString error() const { return m_error; }

    QString directoryUrl() const;     // https://127.0.0.1:PORT/dir
    QString listenerRootFile() const; // PEM the directory's certificate is checked against
    // Pebble's issuing root (PEM) in a file, fetched from its management API; empty on failure.
    QString issuingRootFile();

private:
    PebbleOptions m_options;
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_dns;
    std::unique_ptr<QProcess> m_pebble;
    int m_acmePort = 0;
    int m_managementPort = 0;
    QString m_error;
};

} // namespace pando::test
