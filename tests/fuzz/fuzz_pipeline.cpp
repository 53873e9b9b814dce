// The pipeline parser on anything, as `pando pipelines set` reads a file: vars from the first
// part of the input when it holds a NUL byte (the rest is the pipeline), secrets as
// placeholders, undefined vars allowed. ((var)) expansion has its limits on; nothing may crash,
// hang or grow without bound (libFuzzer's -rss_limit_mb and -timeout catch the last two).
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/template/interpolate.h"

#include <cstdint>

using namespace pando::core::pipelines;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArray input = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype split = input.indexOf('\0');
    InterpolationSources sources;
    sources.secretMode = InterpolationSources::SecretMode::Placeholder;
    sources.allowUndefined = true;
    sources.secrets = [](const QString &name) -> std::optional<QString> {
        if (name.startsWith(QLatin1Char('s')))
            return QStringLiteral("a-secret-value");
        return std::nullopt;
    };
    if (split >= 0) {
        if (auto vars = readVarsFile(input.left(split)))
            sources.vars = *vars;
    }
    pando::discardResult(parsePipeline(split >= 0 ? input.mid(split + 1) : input, sources),
                         "a refusal is as good as an acceptance: only a crash or a hang is a finding");
    return 0;
}
