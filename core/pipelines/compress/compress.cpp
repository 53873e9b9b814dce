#include "core/pipelines/compress/compress.h"

#include <QBuffer>
#include <zstd.h>

namespace pando::core {

namespace {

constexpr int kZstdWorkers = 2;

QString zstdText(size_t code)
{
    return QString::fromLatin1(ZSTD_getErrorName(code));
}

} // namespace

ZstdCompressDevice::ZstdCompressDevice(QIODevice *sink, int level, QObject *parent)
    : QIODevice(parent), m_sink(sink), m_ctx(ZSTD_createCCtx()),
      m_outBuf(qsizetype(ZSTD_CStreamOutSize()), Qt::Uninitialized)
{
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_compressionLevel, level);
    // A checksum per frame: a flipped bit in a stored blob is found on the way back in.
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_checksumFlag, 1);
    // Compression is the slow half of storing a tree. With one or more workers zstd's output
    // is the same whatever their number, so blob ids do not depend on the machine; a libzstd
    // built without threads refuses the setting and compresses inline.
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_nbWorkers, kZstdWorkers);
    open(QIODevice::WriteOnly | QIODevice::Unbuffered);
}

ZstdCompressDevice::~ZstdCompressDevice()
{
    ZSTD_freeCCtx(m_ctx);
}

bool ZstdCompressDevice::drain(int mode, const char *data, qint64 len)
{
    ZSTD_inBuffer in{data, size_t(len), 0};
    for (;;) {
        ZSTD_outBuffer out{m_outBuf.data(), size_t(m_outBuf.size()), 0};
        const size_t left = ZSTD_compressStream2(m_ctx, &out, &in, ZSTD_EndDirective(mode));
        if (ZSTD_isError(left)) {
            setErrorString(QStringLiteral("zstd compression failed: ") + zstdText(left));
            return false;
        }
        if (out.pos > 0) {
            qint64 done = 0;
            while (done < qint64(out.pos)) {
                const qint64 n = m_sink->write(m_outBuf.constData() + done, qint64(out.pos) - done);
                if (n <= 0) {
                    setErrorString(QStringLiteral("cannot write compressed data: ") + m_sink->errorString());
                    return false;
                }
                done += n;
            }
            m_out += qint64(out.pos);
        }
        const bool inputDone = in.pos == in.size;
        if (mode == ZSTD_e_end ? left == 0 : inputDone)
            return true;
    }
}

qint64 ZstdCompressDevice::writeData(const char *data, qint64 len)
{
    if (m_finished) {
        setErrorString(QStringLiteral("the zstd stream was already finished"));
        return -1;
    }
    if (!drain(ZSTD_e_continue, data, len))
        return -1;
    m_in += len;
    return len;
}

Status ZstdCompressDevice::finish()
{
    if (m_finished)
        return {};
    m_finished = true;
    if (!drain(ZSTD_e_end, nullptr, 0))
        return fail(ErrorCode::Failed, errorString());
    return {};
}

void ZstdCompressDevice::close()
{
    discardResult(finish(), "close() cannot report; a writer that cares calls finish() first");
    QIODevice::close();
}

ZstdDecompressDevice::ZstdDecompressDevice(QIODevice *source, qint64 maxOutput, QObject *parent)
    : QIODevice(parent), m_source(source), m_ctx(ZSTD_createDCtx()), m_maxOutput(maxOutput),
      m_inBuf(qsizetype(ZSTD_DStreamInSize()), Qt::Uninitialized)
{
    m_frameDone = false;
    open(QIODevice::ReadOnly | QIODevice::Unbuffered);
}

ZstdDecompressDevice::~ZstdDecompressDevice()
{
    ZSTD_freeDCtx(m_ctx);
}

qint64 ZstdDecompressDevice::readData(char *data, qint64 maxlen)
{
    if (m_failed)
        return -1;
    if (m_ended || maxlen <= 0)
        return 0;
    auto failWith = [this](const QString &text) -> qint64 {
        m_failed = true;
        setErrorString(text);
        return -1;
    };
    // Never produce more than one byte past the limit, so a bomb is cut off, not expanded.
    const qint64 room = std::min(maxlen, m_maxOutput - m_out + 1);
    ZSTD_outBuffer out{data, size_t(room), 0};
    for (;;) {
        if (m_inPos == m_inSize && !m_sourceEnded) {
            qint64 n = m_source->read(m_inBuf.data(), m_inBuf.size());
            if (n < 0)
                return failWith(QStringLiteral("cannot read the compressed stream: ") + m_source->errorString());
            if (n == 0 && m_source->waitForReadyRead(30'000))
                continue;
            if (n <= 0) {
                m_sourceEnded = true;
                n = 0;
            }
            m_inPos = 0;
            m_inSize = n;
        }
        if (m_inPos == m_inSize && m_sourceEnded) {
            if (!m_frameDone)
                return failWith(QStringLiteral("the zstd stream is truncated"));
            m_ended = true;
            return qint64(out.pos);
        }
        ZSTD_inBuffer in{m_inBuf.constData(), size_t(m_inSize), size_t(m_inPos)};
        const size_t before = out.pos;
        const size_t ret = ZSTD_decompressStream(m_ctx, &out, &in);
        if (ZSTD_isError(ret))
            return failWith(QStringLiteral("the zstd stream is corrupt: ") + zstdText(ret));
        m_inPos = qint64(in.pos);
        m_frameDone = ret == 0;
        m_out += qint64(out.pos - before);
        if (m_out > m_maxOutput)
            return failWith(QStringLiteral("the zstd stream expands to more than %1 bytes").arg(m_maxOutput));
        if (out.pos > 0)
            return qint64(out.pos);
    }
}

Result<QByteArray> zstdCompress(QByteArrayView data, int level)
{
    QByteArray result;
    QBuffer buffer(&result);
    buffer.open(QIODevice::WriteOnly);
    ZstdCompressDevice device(&buffer, level);
    if (device.write(data.data(), data.size()) != data.size())
        return fail(ErrorCode::Failed, device.errorString());
    if (auto st = device.finish(); !st)
        return std::unexpected(st.error());
    return result;
}

Result<QByteArray> zstdDecompress(QByteArrayView data, qint64 maxOutput)
{
    QByteArray input = data.toByteArray();
    QBuffer buffer(&input);
    buffer.open(QIODevice::ReadOnly);
    ZstdDecompressDevice device(&buffer, maxOutput);
    QByteArray result;
    QByteArray chunk(256LL * 1024, Qt::Uninitialized);
    for (;;) {
        const qint64 n = device.read(chunk.data(), chunk.size());
        if (n < 0)
            return fail(maxOutput < device.bytesOut() ? ErrorCode::TooLarge : ErrorCode::Invalid, device.errorString());
        if (n == 0)
            break;
        result.append(chunk.constData(), n);
    }
    return result;
}

} // namespace pando::core
