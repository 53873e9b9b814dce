#include "netaddress.h"

namespace pando::adapters {

bool isInternalAddress(QHostAddress address)
{
    bool mapped = false;
    const quint32 v4 = address.toIPv4Address(&mapped);
    if (mapped)
        address = QHostAddress(v4);
    if (address.isLoopback() || address.isLinkLocal() || address.isNull())
        return true;
    if (address.protocol() == QAbstractSocket::IPv4Protocol)
        return (address.toIPv4Address() >> 24) == 0;
    return address == QHostAddress(QHostAddress::AnyIPv6);
}

} // namespace pando::adapters
