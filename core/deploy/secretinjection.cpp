#include "core/deploy/secretinjection.h"

#include "core/secrets/appsecrets.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

void wipeString(QString &text)
{
    if (text.isEmpty())
        return;
    // Volatile, so the compiler cannot drop the writes as dead stores.
    volatile char16_t *p = reinterpret_cast<char16_t *>(text.data());
    for (qsizetype i = 0; i < text.size(); ++i)
        p[i] = 0;
    text.clear();
}

void wipeBytes(QByteArray &bytes)
{
    pipelines::SealBox::wipe(bytes);
}

} // namespace

Result<SecretInjection> SecretInjection::prepare(const Services &s, const QString &app, const AppSpec &spec)
{
    SecretInjection out;
    if (s.seal == nullptr) {
        if (spec.secrets.isEmpty())
            return out;
        return fail(ErrorCode::Unavailable, u"the secret store is not open"_s, u"secrets"_s);
    }
    secrets::AppSecretStore store(s.db, *s.seal, s.clock);
    auto infos = store.list(app);
    if (!infos)
        return std::unexpected(infos.error());
    auto values = store.open(app);
    if (!values)
        return std::unexpected(values.error());
    for (const secrets::AppSecretInfo &info : std::as_const(*infos))
        out.m_updatedMs.insert(info.name, info.updatedMs);

    for (auto it = spec.secrets.cbegin(); it != spec.secrets.cend(); ++it) {
        if (!values->contains(it.key())) {
            secrets::wipe(*values);
            return fail(ErrorCode::Invalid,
                        u"the spec asks for secret %1 as the file %2, but app %3 has no secret %1"_s.arg(it.key(),
                                                                                                         it->path, app),
                        u"secrets."_s + it.key(),
                        u"set it with `pando secrets set %1 %2 --from-file FILE`"_s.arg(app, it.key()));
        }
    }
    for (auto it = values->begin(); it != values->end(); ++it) {
        const QString &name = it.key();
        if (auto file = spec.secrets.constFind(name); file != spec.secrets.cend()) {
            // Moved, not shared: a wipe of a shared QByteArray would only zero a copy.
            out.m_files.insert(file->path,
                               adapters::ContainerFile{std::move(it.value()), file->mode, file->uid, file->gid});
            out.m_filePaths.insert(name, file->path);
            continue;
        }
        Status ok = secrets::checkEnvInjectable(name, it.value());
        if (ok && spec.run.env.contains(name))
            ok = fail(ErrorCode::Invalid, u"%1 is both a secret of app %2 and set in run.env"_s.arg(name, app),
                      u"run.env."_s + name,
                      u"remove it from run.env, or remove the secret with `pando secrets rm %1 %2`"_s.arg(app, name));
        if (!ok) {
            secrets::wipe(*values);
            out.wipe();
            return std::unexpected(ok.error());
        }
        out.m_env.insert(name, it.value());
    }
    secrets::wipe(*values);
    return out;
}

void SecretInjection::applyTo(adapters::ContainerSpec &container) const
{
    for (auto it = m_env.cbegin(); it != m_env.cend(); ++it)
        container.env.insert(it.key(), QString::fromUtf8(it.value()));
    for (auto it = m_files.cbegin(); it != m_files.cend(); ++it)
        container.files.insert(it.key(), it.value());
}

void SecretInjection::scrub(adapters::ContainerSpec &container) const
{
    for (auto it = m_env.cbegin(); it != m_env.cend(); ++it) {
        auto found = container.env.find(it.key());
        if (found != container.env.end()) {
            wipeString(found.value());
            container.env.erase(found);
        }
    }
    for (auto it = m_files.cbegin(); it != m_files.cend(); ++it) {
        auto found = container.files.find(it.key());
        if (found != container.files.end()) {
            wipeBytes(found->content);
            container.files.erase(found);
        }
    }
}

QString SecretInjection::describe(qint64 sinceMs) const
{
    if (isEmpty())
        return {};
    QStringList parts;
    if (!m_env.isEmpty())
        parts << u"%1 as env"_s.arg(m_env.keys().join(u", "_s));
    for (auto it = m_filePaths.cbegin(); it != m_filePaths.cend(); ++it)
        parts << u"%1 as file %2"_s.arg(it.key(), it.value());
    QString text = u"secrets: "_s + parts.join(u"; "_s);
    if (sinceMs > 0) {
        QStringList changed;
        for (auto it = m_updatedMs.cbegin(); it != m_updatedMs.cend(); ++it) {
            if (it.value() > sinceMs)
                changed << it.key();
        }
        if (!changed.isEmpty())
            text += u"; secrets changed since the serving deploy: "_s + changed.join(u", "_s);
    }
    return text;
}

void SecretInjection::wipe()
{
    for (auto it = m_env.begin(); it != m_env.end(); ++it)
        wipeBytes(it.value());
    m_env.clear();
    for (auto &file : m_files)
        wipeBytes(file.content);
    m_files.clear();
}

} // namespace pando::core
