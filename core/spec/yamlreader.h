#pragma once
// The one place Pando reads YAML (and JSON shaped like it). yaml-cpp is used through its event
// parser only, so nothing is expanded but what this reader copies for an alias, within the
// limits (or aliases are refused outright); nesting and size are capped before and while
// reading, duplicate keys are errors, and every yaml-cpp exception is caught here and turned
// into an Error that says "line L, column C".

#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <utility>
#include <vector>

namespace pando::core::detail {

// A document as plain data: the spec walker never sees yaml-cpp types.
struct DocNode {
    enum class Kind { Null, Scalar, Sequence, Map };
    Kind kind = Kind::Null;
    QString text;               // Scalar: the value as written (numbers and booleans are text too)
    bool quoted = false;        // Scalar: quoted or explicitly tagged, so certainly a string
    int line = 0;               // 1-based; 0 when unknown
    int column = 0;             // 1-based; 0 when unknown
    std::vector<DocNode> items; // Sequence
    std::vector<std::pair<QString, DocNode>> entries; // Map, in document order, keys unique

    // Defaulted in the .cpp: clang (clang-tidy) would otherwise define the implicit one while
    // std::pair<QString, DocNode> is still incomplete, and refuse the header; GCC defers it.
    DocNode();

    const DocNode *value(const QString &key) const;
    QString location() const; // "line L, column C", or empty when unknown
};

// The error with where in the document its node was added to the message ("services.db.kind"
// with " (line 4, column 11)"), so an error in a long document is found at once.
Error at(Error error, const DocNode &node);
// A non-empty scalar's text, trimmed; else an Invalid error at `where` saying "expected <expected>".
Result<QString> scalarText(const DocNode &node, const QString &where, const QString &expected);

struct ReaderLimits {
    qsizetype maxBytes = 1024LL * 1024;
    int maxDepth = 64;     // nested sequences and mappings
    int maxNodes = 100000; // every scalar, sequence and mapping counts, and every copy aliases make
    // What the messages call the text ("pipeline" → "the pipeline is empty"); empty keeps the
    // AppSpec wording ("the spec is empty", "not allowed in an AppSpec").
    QString document;
    // Anchors (&name), aliases (*name) and merge keys (<<: *name, <<: [*a, *b]) as YAML 1.1 has
    // them, as pipelines use them. An alias is a copy of what its anchor named, counted against
    // maxNodes and maxDepth where it lands (and the copy an anchor keeps, against maxNodes), so a
    // "billion laughs" ends at maxNodes; a merge adds the keys the mapping does not give itself,
    // the first merged mapping's before later ones.
    // false: an alias or merge key is refused (an AppSpec).
    bool aliases = false;
};

// Reads one YAML document. Errors: TooLarge (over maxBytes, checked before parsing) or Invalid
// with `where` set to "line L, column C" or, for a duplicate key, the key's path.
Result<DocNode> readYaml(const QByteArray &text, const ReaderLimits &limits = {});
// Reads one JSON value under the same limits, into the same shape (numbers keep their text).
Result<DocNode> readJson(const QByteArray &text, const ReaderLimits &limits = {});

// "line L, column C" (1-based) for the byte offset into text.
QString lineColumnAt(const QByteArray &text, qsizetype offset);

// The candidate closest to word (optimal string alignment distance, case-insensitive: "prot" is
// one step from "port"), for "did you mean" hints; empty when none is close enough.
QString closestWord(const QString &word, const QStringList &candidates);

} // namespace pando::core::detail
