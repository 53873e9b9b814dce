#include "replies.h"

#include "httperror.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QUrlQuery>

namespace pando::server {

FileBody::~FileBody()
{
    if (!path.isEmpty())
        QFile::remove(path);
}

Reply errorReply(const Error &error)
{
    return Reply{httpStatus(error.code), errorBody(error)};
}

Result<core::accounts::AccountService *> accountService(Call &call)
{
    core::accounts::AccountService *accounts = call.engine.accounts();
    if (!accounts)
        return fail(ErrorCode::Unavailable, QStringLiteral("this install has no accounts"), call.request.url.path(),
                    QStringLiteral("start pandod with accounts"));
    return accounts;
}

Reply invalid(const QString &message, const QString &where, const QString &hint)
{
    return errorReply(Error{ErrorCode::Invalid, message, where, hint});
}

Result<qint64> int64Param(const RequestData &request, const QString &name, qint64 fallback, qint64 min, qint64 max)
{
    const QUrlQuery query(request.url);
    if (!query.hasQueryItem(name))
        return fallback;
    bool ok = false;
    const qint64 value = query.queryItemValue(name).toLongLong(&ok);
    if (!ok || value < min || value > max)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("must be a whole number from %1 to %2, got \"%3\"")
                        .arg(min)
                        .arg(max)
                        .arg(query.queryItemValue(name)),
                    QStringLiteral("query.") + name);
    return value;
}

Result<int> intParam(const RequestData &request, const QString &name, int fallback, int min, int max)
{
    auto value = int64Param(request, name, fallback, min, max);
    if (!value)
        return std::unexpected(value.error());
    return int(*value);
}

Result<bool> boolParam(const RequestData &request, const QString &name)
{
    const QUrlQuery query(request.url);
    if (!query.hasQueryItem(name))
        return false;
    const QString value = query.queryItemValue(name);
    if (value != QLatin1String("true") && value != QLatin1String("false"))
        return fail(ErrorCode::Invalid, QStringLiteral("must be true or false, got \"%1\"").arg(value),
                    QStringLiteral("query.") + name);
    return value == QLatin1String("true");
}

QString queryParam(const RequestData &request, const QString &name)
{
    return QUrlQuery(request.url).queryItemValue(name, QUrl::FullyDecoded);
}

Result<QJsonObject> jsonObjectBody(const RequestData &request, const QStringList &allowed, const QString &example)
{
    const QByteArray body = request.body.trimmed();
    if (body.isEmpty())
        return QJsonObject{};
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ErrorCode::Invalid, QStringLiteral("malformed JSON: %1").arg(parseError.errorString()),
                    QStringLiteral("body, offset %1").arg(parseError.offset), QStringLiteral("send ") + example);
    if (!doc.isObject())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a JSON object"), QStringLiteral("body"),
                    QStringLiteral("send ") + example);
    const QJsonObject object = doc.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!allowed.contains(it.key()))
            return fail(ErrorCode::Invalid, QStringLiteral("unknown field"), it.key(),
                        QStringLiteral("the fields are: ") + allowed.join(QStringLiteral(", ")));
    }
    return object;
}

} // namespace pando::server
