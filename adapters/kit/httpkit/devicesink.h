#pragma once
// A streamed answer's body written to a device as it arrives (a download to a file), as an
// onChunk for httpkit::perform and the clients built on it: it stops the transfer when the
// device refuses a write, and counts what it wrote.

#include <QByteArrayView>
#include <QIODevice>

namespace pando::adapters::httpkit {

struct DeviceSink {
    QIODevice &out;
    qint64 written = 0;
    bool failed = false; // a write fell short: out.errorString() says why

    bool operator()(QByteArrayView chunk)
    {
        if (out.write(chunk.data(), chunk.size()) != chunk.size()) {
            failed = true;
            return false;
        }
        written += chunk.size();
        return true;
    }
};

} // namespace pando::adapters::httpkit
