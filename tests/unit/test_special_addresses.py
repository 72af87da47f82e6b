"""The public-address guard's table (IANA's special-purpose registries, kept as data): every
guard refuses what the registries mark not globally reachable, whatever Python's version."""

from __future__ import annotations

import ipaddress

import pytest

from core.addresses import EventsUrlRefused, parse_events_url, refusal
from core.special_addresses import block_of, embedded_ipv4, parse_table, special_blocks
from skillet_data import SPECIAL_ADDRESSES_CSV

REFUSED = [
    # IPv4 special-purpose registry
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("10.0.0.1", "privado"),
    ("10.255.255.255", "privado"),
    ("100.64.0.1", "compartilhado"),
    ("100.127.255.254", "compartilhado"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.169.254", "link-local"),
    ("172.16.0.1", "privado"),
    ("172.31.255.255", "privado"),
    ("192.0.0.0", "reservado"),
    ("192.0.0.1", "reservado"),
    ("192.0.0.7", "reservado"),
    ("192.0.0.8", "reservado"),  # accepted by Python 3.11's is_global
    ("192.0.0.11", "reservado"),
    ("192.0.0.170", "reservado"),
    ("192.0.0.171", "reservado"),
    ("192.0.0.255", "reservado"),
    ("192.0.2.1", "documentação"),
    ("192.88.99.1", "reservado"),
    ("192.168.0.1", "privado"),
    ("198.18.0.1", "reservado"),
    ("198.19.255.255", "reservado"),
    ("198.51.100.7", "documentação"),
    ("203.0.113.9", "documentação"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reservado"),
    ("255.255.255.255", "reservado"),
    # IPv6 special-purpose registry and address space
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::2", "reservado"),
    ("::127.0.0.1", "reservado"),  # IPv4-compatible: deprecated, reserved
    ("::8.8.8.8", "reservado"),
    ("100::1", "reservado"),  # discard-only
    ("100:0:0:1::1", "reservado"),  # dummy prefix
    ("2001::1", "reservado"),  # Teredo
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reservado"),
    ("2001:2::1", "reservado"),  # benchmarking
    ("2001:10::1", "reservado"),  # old ORCHID
    ("2001:db8::1", "documentação"),
    ("3fff::1", "documentação"),
    ("3fff:fff::1", "documentação"),
    ("5f00::1", "reservado"),
    ("fc00::1", "privado"),
    ("fd12:3456::1", "privado"),
    ("fe80::1", "link-local"),
    ("fec0::1", "reservado"),
    ("ff02::1", "multicast"),
    ("4000::1", "reservado"),
    # Embedded IPv4: judged by the IPv4 address
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "privado"),
    ("::ffff:192.0.0.8", "reservado"),
    ("::ffff:169.254.169.254", "link-local"),
    ("64:ff9b::a00:1", "privado"),  # NAT64 of 10.0.0.1
    ("64:ff9b::7f00:1", "loopback"),
    ("64:ff9b::c000:8", "reservado"),  # NAT64 of 192.0.0.8
    ("64:ff9b:1::a00:1", "privado"),  # local NAT64, /96 layout
    ("64:ff9b:1:7f00:0:108:808:808", "loopback"),  # local NAT64, RFC 6052 /48 layout
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:a9fe:a9fe::1", "link-local"),
    ("2002:c000:8::", "reservado"),
]

ACCEPTED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",  # just below shared space
    "100.128.0.0",  # just above
    "172.15.255.255",
    "172.32.0.0",
    "192.0.0.9",  # PCP anycast: globally reachable
    "192.0.0.10",  # TURN anycast
    "192.0.1.1",
    "192.31.196.1",  # AS112-v4
    "192.52.193.1",  # AMT
    "192.175.48.1",  # AS112 direct delegation
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2001:1::1",  # PCP anycast
    "2001:3::1",  # AMT
    "2001:4:112::1",  # AS112-v6
    "2001:20::1",  # ORCHIDv2
    "2620:4f:8000::1",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_not_globally_reachable_addresses_are_refused(address: str, reason: str) -> None:
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ACCEPTED)
def test_globally_reachable_addresses_are_accepted(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("host", ["192.0.0.8", "[64:ff9b::c000:8]", "[3fff::1]", "198.18.0.1"])
def test_every_url_guard_refuses_them(host: str) -> None:
    with pytest.raises(EventsUrlRefused):
        parse_events_url(f"https://{host}/", allow_private=False)


def test_the_table_is_the_shipped_csv_with_registry_name_prefix_and_flag() -> None:
    header = SPECIAL_ADDRESSES_CSV.read_text(encoding="utf-8").splitlines()[0]
    assert header == "registry,prefix,name,globally_reachable,reason"
    blocks = special_blocks()
    registries = {b.registry for b in blocks}
    assert {"iana-ipv4-special-registry", "iana-ipv6-special-registry"} <= registries
    dummy = block_of(ipaddress.ip_address("192.0.0.8"))
    assert dummy is not None and dummy.name == "IPv4 dummy address"
    assert not dummy.globally_reachable
    prefixes = [b.network.prefixlen for b in blocks]
    assert prefixes == sorted(prefixes, reverse=True)  # most specific first


def test_a_malformed_row_is_refused_when_read() -> None:
    head = "registry,prefix,name,globally_reachable,reason\n"
    with pytest.raises(ValueError):
        parse_table(head + "x,10.0.0.0/8,Private,maybe,privado\n")
    with pytest.raises(ValueError):
        parse_table(head + "x,10.0.0.0/8,Private,false,\n")
    with pytest.raises(ValueError):
        parse_table(head + "x,10.0.0.1/8,Private,false,privado\n")  # host bits set


def test_embedded_ipv4_layouts() -> None:
    assert embedded_ipv4(ipaddress.IPv6Address("2002:c000:8::")) == [
        ipaddress.IPv4Address("192.0.0.8")
    ]
    local = embedded_ipv4(ipaddress.IPv6Address("64:ff9b:1:a00:0:100::"))
    assert ipaddress.IPv4Address("10.0.0.1") in local
