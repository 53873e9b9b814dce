#pragma once
// A throwaway certificate authority and a server certificate for localhost/127.0.0.1, made
// with the openssl command line, for the audit sink tests' TLS receivers.

#include <QString>

namespace pando::test {

struct TestPki {
    QString caCert, serverCert, serverKey; // PEM file paths
    QString error;                         // non-empty when openssl could not make them
};

// Writes ca.pem, server.pem and server.key into dir.
TestPki makeTestPki(const QString &dir);

} // namespace pando::test
