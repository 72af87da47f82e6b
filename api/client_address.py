"""Who is asking, as the rate limiter counts it: the TCP peer, or past trusted proxies. Pure.

The client is the TCP peer, unless the peer is one of the operator's trusted proxies
(`SKILLET_API_TRUSTED_PROXIES`, IPs or CIDRs). Then `X-Forwarded-For` is read from the
right: each proxy appends the address it received the request from, so entries are skipped
while they are trusted proxies too, and the first one that is not is the client. Everything
left of it was written by the client and may be forged; it is never read. When every entry is
a trusted proxy, the left-most is the client (a request from inside the proxies' network).

An entry that is not an IP address (a proxy that writes `unknown`, an obfuscated name) ends
the walk at the hop that wrote it: that hop is counted as the client. This lumps its clients
together, which only fails closed (they share one budget), never open.

IPv6 clients are counted by their /64: one host is routinely given a whole /64, so counting
single addresses would let it take a new one for every guess. IPv4-mapped IPv6 peers
(`::ffff:10.0.0.1`, a dual-stack socket) count as the IPv4 address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPV6_CLIENT_PREFIX = 64  # bits one host may be assigned; see the docstring
UNKNOWN_PEER = "unknown"  # no IP peer (a Unix socket): one shared budget


def parse_trusted_proxies(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Networks from IPs or CIDRs (`10.0.0.0/8`, `127.0.0.1`); raises ValueError on others."""
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values)


def _ip(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: IPAddress, trusted: tuple[IPNetwork, ...]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def _counted_as(address: IPAddress) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def client_address(
    peer: str | None, forwarded_for: Iterable[str], trusted: tuple[IPNetwork, ...]
) -> str:
    """The address a request's failures are counted under (see the module docstring).

    `peer` is the TCP peer's IP text (None or garbage: no IP peer); `forwarded_for` holds
    every `X-Forwarded-For` header's value in order (a header may be sent more than once).
    """
    hop = _ip(peer or "")
    if hop is None:
        return UNKNOWN_PEER
    if not _trusted(hop, trusted):
        return _counted_as(hop)
    entries = [entry for value in forwarded_for for entry in value.split(",")]
    for entry in reversed(entries):
        if not entry.strip():
            continue
        address = _ip(entry)
        if address is None:
            break  # written by `hop`, a trusted proxy: count it as the client
        hop = address
        if not _trusted(hop, trusted):
            break
    return _counted_as(hop)
