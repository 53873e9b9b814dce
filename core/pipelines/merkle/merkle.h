#pragma once
// Package merkle names each step by its content: a hash over what the step is (its resolved
// configuration), what it reads (its inputs' tree digests) and what it runs on (the image's
// digest). A step whose hash already succeeded is not run again: its outputs come back from the
// blob store (among steps of the same scope, see StepContent::scope). Because inputs are named by the digests of trees
// that earlier steps produced, the hashes of a job form a chain: change one step's output and every step that reads it
// changes.
//
// Secrets never enter a hash as values: the caller replaces each secret's value in the config
// by a keyed digest of it (secretDigest), so a stored hash cannot be used to guess a secret,
// while rotating a secret still changes the hashes of the steps that use it.

#include <QByteArray>
#include <QMap>
#include <QString>

namespace pando::core::pipelines {

struct StepContent {
    QString kind;                        // "task", "get", "put"
    QByteArray canonicalConfig;          // the step's resolved config as canonical JSON
    QMap<QString, QString> inputDigests; // input name (as the step sees it) → tree digest
    QString imageDigest;                 // the image id a task runs on ("host" on the host)
    QString extra;                       // anything else that must change the hash (a get's version)
    // Who may share the entry: "pipeline:<name>" (the default for tasks and for gets through a
    // type the pipeline declares itself, with that definition's digest), "shared" (a container
    // task that opted in), "builtin:<type>" (a get through Pando's own code). Two pipelines hit
    // each other's entries only when their scopes are equal, so one author cannot plant the
    // outputs another pipeline restores.
    QString scope;
};

// Hex SHA-256 over a length-prefixed, versioned encoding of content: unambiguous whatever the
// fields hold.
QString stepHash(const StepContent &content);

// The keyed digest a secret's value is replaced by before hashing: hex HMAC-SHA256(key, value).
QString secretDigest(const QByteArray &key, const QString &value);

} // namespace pando::core::pipelines
