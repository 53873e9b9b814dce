#pragma once
// baseimages: the images a Dockerfile's build pulls from a registry, read as the builder reads
// them, so that a build can pull the private ones first with a registry connection's login
// (BuildKit without a client session cannot ask for one itself).
//
// Counted: each FROM's image, and COPY --from and RUN --mount=…,from= when they name an image
// rather than a stage (by name or number). Not counted: `scratch` and stages. Read as the
// Dockerfile reference says: the escape directive, continuation lines, comment lines inside an
// instruction, heredocs (whose lines are not instructions), flags in any order, and variables in
// the image: the ARGs declared before the first FROM, with build.args over their defaults, as
// $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word}; an unset one is empty, as the builder has it.
// What still does not read as an image reference is left out: the build says what is wrong.

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

namespace pando::core {

// Each image once, in the order the Dockerfile names them.
QStringList baseImages(const QByteArray &dockerfile, const QMap<QString, QString> &buildArgs);

} // namespace pando::core
