#pragma once
// Package template resolves `((var))` placeholders in a pipeline (or task) file. It works on the
// parsed YAML value tree before anything is typed, only inside string values and never in keys,
// from a vars file first and then from a secret lookup; it reports which vars and secrets were
// used so that callers can mask secret values and store only the un-interpolated text.

#include "adapters/api/error.h"
#include "core/spec/yamlreader.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

namespace pando::core::pipelines {

// Returns a secret's value, or nullopt when there is none by that name. Called once per distinct
// name per interpolate() call, on the calling thread.
using SecretLookup = std::function<std::optional<QString>(const QString &name)>;

// A var source a pipeline declares (`var_sources:`): `((name:path.field))` reads from it.
struct VarSourceConfig {
    QString name;
    QString type;           // "dummy", "vault"
    detail::DocNode config; // placeholders as written, or resolved (a run)
    QString path;           // where it is declared: "var_sources[0]"
};

// Reads var `varPath` ("github/deploy") from a var source of a type the template package does not
// read itself (vault), its config resolved; nullopt when the source has no such var. An error says
// why the source could not be asked. Called once per distinct var per interpolate() call.
using VarSourceReader =
    std::function<Result<std::optional<detail::DocNode>>(const VarSourceConfig &source, const QString &varPath)>;

// What expanding placeholders may add to a file, in all: a var (or secret) is copied whole at each
// place it is used, so a few hundred uses of a large one would otherwise multiply a 1 MiB file
// into gigabytes (the "billion laughs" the reader's limits stop for YAML itself).
struct ExpansionLimits {
    qsizetype maxBytes = 4 * 1024 * 1024; // text added by substitutions, summed over every use
    int maxNodes = 200000;                // values added by substitutions, summed over every use
    int maxDepth = 64;                    // nesting of the result, as the reader allows
};

struct InterpolationSources {
    // The vars file's root mapping (from readVarsFile), or a Null node for none.
    detail::DocNode vars;
    SecretLookup secrets;
    // Why a secret secrets() has no value for may not be used here (it exists but is not granted
    // to this pipeline), or nullopt; asked before the placeholder is called undefined, and its
    // error (given the path as `where`) is the answer. May be empty.
    std::function<std::optional<Error>(const QString &name)> secretRefusal;
    // Placeholder: a secret's existence is checked but `((name))` stays in the text, so the
    // result can be shown (a diff) or stored without any secret value in it.
    enum class SecretMode { Resolve, Placeholder } secretMode = SecretMode::Resolve;
    // Told each secret value, and each field of one a placeholder picks, as it is substituted
    // (Resolve mode), also when the walk fails later: a run masks them in everything it shows,
    // its error included. May be empty.
    std::function<void(const QString &value)> substituted;
    // Leave undefined vars as written and list them in the report instead of failing.
    bool allowUndefined = false;
    // A run's local vars (load_var), a mapping of name → value: `((.:name))` resolves from it,
    // and is an error when it lacks the name. Null: such placeholders stay as written (until the
    // step that uses them runs).
    const detail::DocNode *locals = nullptr;
    // With locals: a name it lacks stays as written too (an across step fills in its own vars
    // and leaves the run's load_var ones for when its steps run).
    bool otherLocalsStay = false;
    // The pipeline's var sources. A placeholder whose source is one of them reads from it; a
    // declared name wins over the built-in vars: and secrets:.
    QList<VarSourceConfig> varSources;
    // Set (a run, the configs in varSources resolved): such placeholders resolve, a dummy source's
    // from its config's vars, any other's through this; a vault's values are masked as secrets.
    // Empty: they stay as written (a set, a view).
    VarSourceReader readVarSource;
    ExpansionLimits limits;
};

struct InterpolationReport {
    QStringList varsUsed;    // names resolved from the vars file, sorted, unique
    QStringList secretsUsed; // names resolved from secrets, sorted, unique (mask their values)
    QStringList undefined;   // only with allowUndefined
    // The values of the secrets that were substituted, for a log masker. Held in memory only:
    // never persist or log this list.
    QStringList secretValues;
};

// Replaces placeholders in every string scalar of `tree`, in place. A scalar that is exactly one
// placeholder takes the var's value whole (a vars entry may be a list or mapping); a placeholder
// inside longer text must resolve to a scalar. Syntax: `((name))`, `((name.field.sub))` into a
// mapping (a secret's value is read as JSON for field access), `((vars:name))` or
// `((secrets:name))` to pick the source (otherwise vars first, then secrets), `((.:name))` for a
// run's local var (InterpolationSources::locals), `((source:path/to.field))` for a declared var
// source; a segment in double quotes may hold dots and colons (`(("a.b".c))`). Errors name the var
// and `where` is the path it was used at (rootPath + the tree path, "jobs[0].plan[1].params.X").
Result<InterpolationReport> interpolate(detail::DocNode &tree, const InterpolationSources &sources,
                                        const QString &rootPath = {});

// Reads a vars file (`-l vars.yml`): YAML through the one reader, whose root must be a mapping.
Result<detail::DocNode> readVarsFile(const QByteArray &yaml);

// The placeholder names in a text, in order of appearance ("((a)) and ((b.c))" → a, b.c).
QStringList placeholderNames(const QString &text);

// The var source each placeholder in tree's strings names (the part before an unquoted ':'),
// sorted, unique; "" and "." (local vars) left out.
QStringList placeholderSources(const detail::DocNode &tree);

} // namespace pando::core::pipelines
