#pragma once
// One HTTP(S) request with curl, as a user's browser would make it to an app's name: the name
// resolved to 127.0.0.1 (--resolve), only the given root trusted.

#include <QByteArray>
#include <QString>

namespace pando::test {

struct CurlAnswer {
    int status = 0; // 0: no HTTP answer (curl's words in error)
    QByteArray body;
    QString location; // where a redirect leads
    QString error;
    QString describe() const; // "308 <body> (error)" for a failed check
};

CurlAnswer curlGet(const QString &url, const QString &caFile = {});

} // namespace pando::test
