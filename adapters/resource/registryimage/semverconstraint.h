#pragma once
// registry-image's `semver_constraint`: which version tags a check may return, written as
// Masterminds/semver (the library Concourse's resource uses) reads constraints.
//
//   comparisons  = 1.2.3, != 1.2, > 1.2, < 2, >= 1.2.3, <= 2.x (also =>, =<; no operator is =)
//   and          written side by side or with commas: ">= 1.2, < 3.0.0"
//   or           "||": ">= 1.2 < 3.0.0 || >= 4.2.3"
//   ranges       "1.2 - 1.4.5" is ">= 1.2, <= 1.4.5"
//   wildcards    x, X or * for a part, or a part left out: "1.2.x" and "1.2" are ">= 1.2.0, < 1.3.0"
//                with = ; "> 1.2" is ">= 1.3.0", "<= 2.x" is "< 3.0.0"; "*" is any release
//   tilde        ~1.2.3 is ">= 1.2.3, < 1.3.0"; ~1 and ~1.x are ">= 1, < 2" (also ~>)
//   caret        ^1.2.3 is ">= 1.2.3, < 2.0.0"; ^0.2.3 is ">= 0.2.3, < 0.3.0"; ^0.0.3 only 0.0.3
//
// As Masterminds/semver does, a pre-release (1.3.0-rc.1) passes a comparison only when the
// comparison names a pre-release itself (">= 1.3.0-rc.0"): pre_releases: true lets them be
// tracked, the constraint still has to ask for them. A leading "v" and build metadata ("+…") are
// allowed in the constraint's versions.
//
// Threading: values; any thread.

#include "adapters/api/error.h"
#include "adapters/resource/registryimage/tagversion.h"

#include <QList>
#include <QString>

namespace pando::adapters::registryimage {

class SemverConstraint {
public:
    // The constraint, or an error whose where is `where` and whose text quotes the part that
    // could not be read.
    static Result<SemverConstraint> parse(const QString &text, const QString &where);

    // No constraint (as constructed): every version passes.
    bool isEmpty() const { return m_anyOf.isEmpty(); }
    bool matches(const TagVersion &version) const;

private:
    enum class Op { Equal, NotEqual, Greater, Less, GreaterOrEqual, LessOrEqual, Tilde, Caret };
    struct Comparison {
        Op op = Op::Equal;
        int major = 0;
        int minor = 0;
        int patch = 0;
        QString preRelease;
        bool anyMajor = false;  // "*": every release
        bool minorOpen = false; // left out or a wildcard, and so is the patch
        bool patchOpen = false;
        bool matches(const TagVersion &version) const;
    };
    QList<QList<Comparison>> m_anyOf; // "||" of groups whose comparisons all hold
};

} // namespace pando::adapters::registryimage
