#include "tests/support/curlget.h"

#include <QProcess>
#include <QStringList>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::test {

QString CurlAnswer::describe() const
{
    return u"%1 %2 (%3)"_s.arg(status).arg(QString::fromUtf8(body), error);
}

CurlAnswer curlGet(const QString &url, const QString &caFile)
{
    const QUrl u(url);
    QStringList args{u"-sS"_s,
                     u"--max-time"_s,
                     u"10"_s,
                     u"--resolve"_s,
                     u"%1:%2:127.0.0.1"_s.arg(u.host()).arg(u.port(u.scheme() == u"https" ? 443 : 80)),
                     u"-w"_s,
                     u"\n%{http_code} %{redirect_url}"_s};
    if (!caFile.isEmpty())
        args << u"--cacert"_s << caFile;
    args << url;
    QProcess curl;
    curl.start(u"curl"_s, args);
    curl.waitForFinished(15000);
    CurlAnswer answer;
    const QByteArray out = curl.readAllStandardOutput();
    const qsizetype cut = out.lastIndexOf('\n');
    const QList<QByteArray> tail = out.mid(cut + 1).split(' ');
    answer.body = cut >= 0 ? out.left(cut) : QByteArray();
    answer.status = tail.value(0).toInt();
    answer.location = QString::fromUtf8(tail.value(1));
    answer.error = QString::fromUtf8(curl.readAllStandardError()).trimmed();
    return answer;
}

} // namespace pando::test
