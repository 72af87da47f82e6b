"""Which addresses are globally reachable, from IANA's special-purpose address registries.

The table is data (skillet_data/special_addresses.csv, shipped in the wheel): each row is one
registry entry, its prefix, its name and whether the registry marks it globally reachable,
plus the word a refusal says. Rows come from the IPv4 and IPv6 Special-Purpose Address
Registries, with the IPv4 multicast block and the IPv6 address space's top-level blocks
(everything outside 2000::/3 is reserved or special). The most specific row holding an
address decides; an IPv4 address in no row is global. Python's own `ipaddress.is_global`
is not used: it changes between patch releases (3.11 counts 192.0.0.8 as global).

Rows whose reason is `embedded-ipv4` (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and
64:ff9b:1::/48, 6to4 2002::/16) carry an IPv4 address: they are judged by that address, since
that is where a packet to them ends up.
"""

from __future__ import annotations

import csv
import functools
import ipaddress
from dataclasses import dataclass

from skillet_data import SPECIAL_ADDRESSES_CSV

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
EMBEDDED = "embedded-ipv4"
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


@dataclass(frozen=True)
class SpecialBlock:
    registry: str
    network: IPNetwork
    name: str
    globally_reachable: bool
    reason: str  # the word a refusal says; `embedded-ipv4`: judge the IPv4 inside


def parse_table(text: str) -> tuple[SpecialBlock, ...]:
    """The rows of the CSV `text`, most specific first (ValueError on a malformed row)."""
    blocks: list[SpecialBlock] = []
    for row in csv.DictReader(text.splitlines()):
        reachable = row["globally_reachable"].strip().lower()
        if reachable not in ("true", "false"):
            raise ValueError(f"globally_reachable must be true or false: {row}")
        reason = row["reason"].strip()
        if reachable == "false" and not reason:
            raise ValueError(f"a block not globally reachable needs a reason: {row}")
        blocks.append(
            SpecialBlock(
                registry=row["registry"].strip(),
                network=ipaddress.ip_network(row["prefix"].strip()),
                name=row["name"].strip(),
                globally_reachable=reachable == "true",
                reason=reason,
            )
        )
    return tuple(sorted(blocks, key=lambda b: -b.network.prefixlen))


@functools.cache
def special_blocks() -> tuple[SpecialBlock, ...]:
    """The shipped table (read once)."""
    return parse_table(SPECIAL_ADDRESSES_CSV.read_text(encoding="utf-8"))


def block_of(
    address: IPAddress, blocks: tuple[SpecialBlock, ...] | None = None
) -> SpecialBlock | None:
    """The most specific row holding `address`, or None."""
    for block in special_blocks() if blocks is None else blocks:
        if block.network.version == address.version and address in block.network:
            return block
    return None


def refusal(address: IPAddress) -> str | None:
    """Why `address` is not globally reachable (a word), or None when it is."""
    block = block_of(address)
    if block is None:
        return None
    if block.reason == EMBEDDED and isinstance(address, ipaddress.IPv6Address):
        for inside in embedded_ipv4(address):
            if (reason := refusal(inside)) is not None:
                return reason
        return None
    return None if block.globally_reachable else block.reason


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a packet to `address` may reach: 6to4's bits 16-47; the last 32
    bits otherwise (mapped, NAT64 /96); for 64:ff9b:1::/48 also RFC 6052's /48 layout
    (bits 48-63 and 72-87, around the u octet), since an operator may use either."""
    if address.sixtofour is not None:
        return [address.sixtofour]
    value = int(address)
    found = [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if address in _NAT64_LOCAL:
        high = (value >> 64) & 0xFFFF
        low = (value >> 40) & 0xFFFF
        found.append(ipaddress.IPv4Address(high << 16 | low))
    return found
