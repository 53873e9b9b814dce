#include "semverconstraint.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>

namespace pando::adapters::registryimage {

using namespace Qt::StringLiterals;

namespace {

bool isWildcard(const QString &part)
{
    return part == u"x"_s || part == u"X"_s || part == u"*"_s;
}

} // namespace

Result<SemverConstraint> SemverConstraint::parse(const QString &text, const QString &where)
{
    // One comparison: an operator (none is =), then a version whose parts may be wildcards.
    static const QRegularExpression comparison(
        u"\\s*(!=|=>|=<|>=|<=|~>|=|>|<|~|\\^)?\\s*v?(\\d+|[xX*])(?:\\.(\\d+|[xX*]))?(?:\\.(\\d+|[xX*]))?"
        u"(?:-([0-9A-Za-z.-]+))?(?:\\+[0-9A-Za-z.-]+)?\\s*(?:,|(?=\\s)|$)\\s*"_s);
    static const QRegularExpression range(u"(\\S+)\\s+-\\s+(\\S+)"_s);
    const QString example = u"write comparisons such as \">= 1.2, < 2\", \"~1.2\" or \"^1.2.3\", joined by \"||\""_s;
    SemverConstraint constraint;
    for (const QString &alternative : text.split(u"||"_s)) {
        QString group = alternative.trimmed();
        if (group.isEmpty())
            return fail(ErrorCode::Invalid, u"has an empty alternative in \"%1\""_s.arg(text), where, example);
        group.replace(range, u">= \\1, <= \\2"_s);
        QList<Comparison> all;
        for (qsizetype at = 0; at < group.size();) {
            const auto m = comparison.match(group, at, QRegularExpression::NormalMatch,
                                            QRegularExpression::AnchorAtOffsetMatchOption);
            if (!m.hasMatch() || m.capturedLength() == 0)
                return fail(ErrorCode::Invalid, u"cannot read \"%1\" in \"%2\""_s.arg(group.mid(at), text), where,
                            example);
            at = m.capturedEnd();
            Comparison c;
            const QString op = m.captured(1);
            static const QHash<QString, Op> ops{{u""_s, Op::Equal},
                                                {u"="_s, Op::Equal},
                                                {u"!="_s, Op::NotEqual},
                                                {u">"_s, Op::Greater},
                                                {u"<"_s, Op::Less},
                                                {u">="_s, Op::GreaterOrEqual},
                                                {u"=>"_s, Op::GreaterOrEqual},
                                                {u"<="_s, Op::LessOrEqual},
                                                {u"=<"_s, Op::LessOrEqual},
                                                {u"~"_s, Op::Tilde},
                                                {u"~>"_s, Op::Tilde},
                                                {u"^"_s, Op::Caret}};
            c.op = ops.value(op);
            c.anyMajor = isWildcard(m.captured(2));
            c.major = c.anyMajor ? 0 : m.captured(2).toInt();
            c.minorOpen = c.anyMajor || !m.hasCaptured(3) || isWildcard(m.captured(3));
            c.minor = c.minorOpen ? 0 : m.captured(3).toInt();
            c.patchOpen = c.minorOpen || !m.hasCaptured(4) || isWildcard(m.captured(4));
            c.patch = c.patchOpen ? 0 : m.captured(4).toInt();
            c.preRelease = m.captured(5);
            if (c.anyMajor && (c.op == Op::NotEqual || c.op == Op::Greater || c.op == Op::Less))
                return fail(ErrorCode::Invalid,
                            u"\"%1\" in \"%2\" allows no version"_s.arg(m.captured(0).trimmed(), text), where,
                            u"\"*\" alone allows every release"_s);
            all.append(c);
        }
        constraint.m_anyOf.append(all);
    }
    return constraint;
}

bool SemverConstraint::matches(const TagVersion &version) const
{
    return m_anyOf.isEmpty() || std::ranges::any_of(m_anyOf, [&version](const QList<Comparison> &all) {
               return std::ranges::all_of(all, [&version](const Comparison &c) { return c.matches(version); });
           });
}

bool SemverConstraint::Comparison::matches(const TagVersion &v) const
{
    // A pre-release passes only a comparison that names one.
    if (!v.preRelease.isEmpty() && preRelease.isEmpty())
        return false;
    if (anyMajor)
        return true;
    const int vMajor = v.numbers.value(0);
    const int vMinor = v.numbers.value(1);
    const int vPatch = v.numbers.value(2);
    const int order = compareReleases(v, TagVersion{{major, minor, patch}, preRelease, {}});
    const bool open = minorOpen || patchOpen;
    // "~": the same minor (the same major when the minor is open) from the version on.
    const auto tilde = [&] {
        return order >= 0 && vMajor == major && (minorOpen || vMinor == minor);
    };
    switch (op) {
    case Op::Equal:
        return open ? tilde() : order == 0;
    case Op::NotEqual:
        return open ? vMajor != major || (!minorOpen && vMinor != minor) : order != 0;
    case Op::Greater:
        if (!open)
            return order > 0;
        if (vMajor != major)
            return vMajor > major;
        return !minorOpen && vMinor > minor;
    case Op::Less:
        return order < 0;
    case Op::GreaterOrEqual:
        return order >= 0;
    case Op::LessOrEqual:
        if (!open)
            return order <= 0;
        if (vMajor != major)
            return vMajor < major;
        return minorOpen || vMinor <= minor;
    case Op::Tilde:
        return tilde();
    case Op::Caret:
        if (order < 0)
            return false;
        if (major > 0 || minorOpen)
            return vMajor == major;
        if (minor > 0 || patchOpen)
            return vMajor == 0 && vMinor == minor;
        return vMajor == 0 && vMinor == 0 && vPatch == patch;
    }
    return false;
}

} // namespace pando::adapters::registryimage
