// Vars given on the command line (fly's -v NAME=VALUE and -y NAME=YAML) set on top of a vars file.
#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/config/pipelineconfig.h"

#include <QJsonDocument>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

using core::detail::DocNode;

Result<QByteArray> withVarFlags(const QByteArray &varsYaml, const QList<VarFlag> &flags)
{
    if (flags.isEmpty())
        return varsYaml;
    DocNode root;
    root.kind = DocNode::Kind::Map;
    if (!varsYaml.trimmed().isEmpty()) {
        auto read = readVarsFile(varsYaml);
        if (!read)
            return std::unexpected(read.error());
        root = std::move(*read);
    }
    static const QRegularExpression segmentName(uR"(^[a-zA-Z0-9_/-]+\z)"_s);
    for (const VarFlag &flag : flags) {
        const QString where = (flag.yaml ? u"--yaml-var "_s : u"--var "_s) + flag.name;
        const QStringList path = flag.name.split(u'.');
        for (const QString &segment : path)
            if (!segmentName.match(segment).hasMatch())
                return fail(
                    ErrorCode::Invalid,
                    u"\"%1\" is not a var name: letters, digits, _, / and -, with dots between fields"_s.arg(flag.name),
                    where, u"write NAME=VALUE, e.g. -v branch=main or -v db.host=primary"_s);
        DocNode value;
        if (flag.yaml) {
            core::detail::ReaderLimits limits;
            limits.document = where;
            auto read = core::detail::readYaml(flag.value.toUtf8(), limits);
            if (!read) {
                Error error = read.error();
                error.where = error.where.isEmpty() ? where : where + u": "_s + error.where;
                return std::unexpected(error);
            }
            value = std::move(*read);
        } else {
            value.kind = DocNode::Kind::Scalar;
            value.text = flag.value;
            value.quoted = true; // -v gives text, whatever it looks like
        }
        DocNode *node = &root;
        for (qsizetype i = 0; i < path.size(); ++i) {
            if (node->kind != DocNode::Kind::Map)
                return fail(ErrorCode::Invalid,
                            u"%1 is not a mapping, so it has no field %2"_s.arg(path.mid(0, i).join(u'.'), path[i]),
                            where);
            DocNode *next = nullptr;
            for (auto &[key, child] : node->entries)
                if (key == path[i])
                    next = &child;
            if (!next) {
                DocNode fresh;
                fresh.kind = DocNode::Kind::Map;
                node->entries.emplace_back(path[i], fresh);
                next = &node->entries.back().second;
            }
            node = next;
        }
        *node = std::move(value);
    }
    return QJsonDocument(internal::toJsonValue(root).toObject()).toJson(QJsonDocument::Indented);
}

} // namespace pando::core::pipelines
