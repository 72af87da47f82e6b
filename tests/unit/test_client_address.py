"""Unit tests of api.client_address and the limiter's window arithmetic: pure, no services."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.client_address import UNKNOWN_PEER, client_address, parse_trusted_proxies
from api.rate_limit import retry_after_s, window_of
from worker.settings import Settings

PROXIES = parse_trusted_proxies(["10.0.0.0/8", "127.0.0.1", "fd00::/8"])

CASES = [
    # (peer, X-Forwarded-For headers, client counted)
    ("203.0.113.7", [], "203.0.113.7"),
    # An untrusted peer's header is its own writing: ignored.
    ("203.0.113.7", ["198.51.100.1"], "203.0.113.7"),
    # A trusted proxy without a header: the proxy itself.
    ("10.0.0.5", [], "10.0.0.5"),
    ("10.0.0.5", ["198.51.100.1"], "198.51.100.1"),
    # Right-most untrusted: what the client wrote left of it is never read.
    ("10.0.0.5", ["6.6.6.6, 198.51.100.1"], "198.51.100.1"),
    ("10.0.0.5", ["6.6.6.6, 198.51.100.1, 10.1.2.3"], "198.51.100.1"),
    ("127.0.0.1", ["6.6.6.6", "198.51.100.1,10.9.9.9"], "198.51.100.1"),
    # Every hop trusted: the left-most.
    ("10.0.0.5", ["10.1.1.1, 10.2.2.2"], "10.1.1.1"),
    # Not an address: the trusted hop that wrote it is the client (fails closed).
    ("10.0.0.5", ["198.51.100.1, unknown"], "10.0.0.5"),
    ("10.0.0.5", ["198.51.100.1, unknown, 10.2.2.2"], "10.2.2.2"),
    ("10.0.0.5", [" , 198.51.100.1 ,"], "198.51.100.1"),
    # IPv6 by its /64; IPv4-mapped as IPv4.
    ("2001:db8:1:2:aaaa::1", [], "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb::9", [], "2001:db8:1:2::/64"),
    ("::ffff:203.0.113.7", [], "203.0.113.7"),
    ("fd00::1", ["2001:db8::1, 203.0.113.9"], "203.0.113.9"),
    ("::ffff:127.0.0.1", ["198.51.100.1"], "198.51.100.1"),
    # No IP peer (a Unix socket): one shared budget.
    (None, ["198.51.100.1"], UNKNOWN_PEER),
    ("", [], UNKNOWN_PEER),
]


@pytest.mark.parametrize(("peer", "forwarded", "expected"), CASES)
def test_the_client_is_the_peer_or_the_right_most_untrusted_forwarded_hop(
    peer: str | None, forwarded: list[str], expected: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == expected


def test_without_trusted_proxies_the_header_is_never_read() -> None:
    assert client_address("127.0.0.1", ["198.51.100.1"], ()) == "127.0.0.1"


def test_trusted_proxies_are_ips_or_cidrs() -> None:
    assert [str(n) for n in parse_trusted_proxies(["10.1.2.3/8", " ::1 "])] == [
        "10.0.0.0/8",
        "::1/128",
    ]
    with pytest.raises(ValueError):
        parse_trusted_proxies(["proxy.internal"])


@pytest.mark.parametrize(
    ("now_s", "window", "wait_s"),
    [(0.0, 0, 60), (10.0, 0, 50), (59.2, 0, 1), (59.99, 0, 1), (60.0, 1, 60), (125.5, 2, 55)],
)
def test_a_lock_lasts_to_the_end_of_its_minute(now_s: float, window: int, wait_s: int) -> None:
    assert (window_of(now_s), retry_after_s(now_s)) == (window, wait_s)


def test_the_limits_are_on_by_default_and_read_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert (
        defaults.api_auth_failures_per_minute,
        defaults.api_key_requests_per_minute,
        defaults.api_trusted_proxies,
        defaults.api_rate_limit_timeout_s,
    ) == (20, 0, (), 0.25)
    monkeypatch.setenv("SKILLET_API_AUTH_FAILURES_PER_MINUTE", "5")
    monkeypatch.setenv("SKILLET_API_KEY_REQUESTS_PER_MINUTE", "600")
    monkeypatch.setenv("SKILLET_API_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1")
    read = Settings()
    assert read.api_auth_failures_per_minute == 5
    assert read.api_key_requests_per_minute == 600
    assert read.api_trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
    monkeypatch.setenv("SKILLET_API_TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal")
    with pytest.raises(ValidationError, match=r"proxy\.internal"):
        Settings()
