// The app spec parser on anything: YAML (what `pando apps create -f` and the API read) and JSON.
// Beyond not crashing, a spec the parser accepts must pass the field rules on its own and
// keep them after a round trip through JSON, the form the API answers with.
#include "core/spec/appspec.h"

#include <QJsonDocument>
#include <cstdint>
#include <cstdlib>

using namespace pando;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArray input = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    for (auto parse : {&core::parseAppSpec, &core::parseAppSpecJson}) {
        auto spec = parse(input);
        if (!spec)
            continue;
        if (!core::validateAppSpec(*spec))
            std::abort(); // accepted, yet against its own rules
        const QByteArray json = QJsonDocument(spec->toJson()).toJson(QJsonDocument::Compact);
        if (!core::parseAppSpecJson(json))
            std::abort(); // what the API shows cannot be read back
    }
    return 0;
}
