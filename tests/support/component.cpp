#include "component.h"

#include <QProcessEnvironment>

namespace pando::test {

bool inCi()
{
    const QString ci = qEnvironmentVariable("CI").toLower();
    return ci == QLatin1String("true") || ci == QLatin1String("1");
}

QString sourceDir()
{
    return qEnvironmentVariable("PANDO_SOURCE_DIR", QStringLiteral(PANDO_SOURCE_DIR_FALLBACK));
}

QString binaryDir()
{
    return qEnvironmentVariable("PANDO_BINARY_DIR", QStringLiteral(PANDO_BINARY_DIR_FALLBACK));
}

} // namespace pando::test
