#pragma once
// A build context's .dockerignore, read as `docker build` reads it, so that what it keeps out of
// an image (.env files, credentials, node_modules) stays out when Pando builds too:
// - one pattern per line; a line starting with '#' is a comment; surrounding whitespace is
//   dropped, '.' and '..' are resolved, and a leading '/' means the context's root;
// - '*' is any run of characters but '/', '?' one such character, '[...]' a class ('[^...]'
//   negated), '\' escapes the next character, and '**' any number of directories, none included;
// - a pattern excludes what it matches and everything below it; '!' makes an exception, and the
//   last line that matches a path decides;
// - the Dockerfile and .dockerignore are sent all the same (the engine leaves them out of COPY
//   and ADD itself when they are excluded);
// - an excluded directory is not entered unless an exception's pattern starts with its path
//   (so `node_modules` with `!**/keep` keeps nothing of node_modules, as Docker does).
//
// Threading: a value type; const calls may be made from any thread.

#include "adapters/api/error.h"

#include <QList>
#include <QRegularExpression>
#include <QString>

namespace pando::adapters::dockerapi {

class DockerIgnore {
public:
    // The rules of text, a .dockerignore's content; a pattern that is not one (an unclosed
    // '[') fails with Invalid naming `where` and the line.
    static Result<DockerIgnore> parse(const QByteArray &text, const QString &where);
    // The rules of contextDir/.dockerignore, with exceptions added for the Dockerfile (relative to
    // contextDir) and .dockerignore itself; none when the file does not exist.
    static Result<DockerIgnore> forContext(const QString &contextDir, const QString &dockerfile);

    bool isEmpty() const { return m_rules.isEmpty(); }
    // Whether path (relative to the context, '/'-separated) is left out of the context.
    bool excludes(const QString &path) const;
    // Whether an excluded directory must still be entered, for an exception below it.
    bool mayKeepBelow(const QString &directory) const;
    // Adds "!path" (a path, not a pattern) at the end when the rules would exclude path.
    void keep(const QString &path);

private:
    struct Rule {
        QString pattern; // cleaned, without its '!'
        bool exception = false;
        QRegularExpression regex;
    };
    static Result<Rule> compile(QString pattern, bool exception);

    QList<Rule> m_rules;
};

} // namespace pando::adapters::dockerapi
