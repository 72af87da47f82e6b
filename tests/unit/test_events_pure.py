"""The events webhook's pure parts: signature, address classification, URL shape, backoff
schedule and settlement, and the guard with an injected resolver (DNS rebinding)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket

import pytest

from core.address_guard import AddressGuard, AddressRefused, GuardedResolver
from core.addresses import EventsUrlRefused, parse_events_url, refusal
from events.backoff import Outcome, RetryPolicy, backoff_s, settle
from events.signature import sign, signature_valid
from worker.metrics import WorkerMetrics

SECRET = "segredo-de-teste-0123456789"


def test_signature_is_hmac_sha256_of_the_raw_body() -> None:
    body = '{"type":"conversation.taken_over","text":"olá"}'.encode()
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert sign(SECRET, body) == f"sha256={expected}"
    assert signature_valid(SECRET, body, f"sha256={expected}")
    assert not signature_valid(SECRET, body + b" ", f"sha256={expected}")
    assert not signature_valid("outro-segredo-0123456789", body, f"sha256={expected}")
    assert not signature_valid(SECRET, body, None)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("10.1.2.3", "privado"),
        ("172.16.0.1", "privado"),
        ("192.168.1.1", "privado"),
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("100.64.0.1", "compartilhado"),  # carrier-grade NAT
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reservado"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "privado"),
        ("fd12:3456::1", "privado"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.0.0.1", "privado"),
        ("::127.0.0.1", "reservado"),  # IPv4-compatible: deprecated
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", "privado"),  # NAT64 of 10.0.0.1
        ("2001:db8::1", "documentação"),
        ("8.8.8.8", None),
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_address_classification(address: str, reason: str | None) -> None:
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hook",
        "ftp://example.com/hook",
        "https://127.0.0.1/hook",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://user:pass@example.com/hook",
        "https:///hook",
        "https://example.com:99999/hook",
        "https://exa mple.com/hook",
        "",
    ],
)
def test_urls_refused_by_shape(url: str) -> None:
    with pytest.raises(EventsUrlRefused) as refused:
        parse_events_url(url, allow_private=False)
    assert refused.value.code == "events_url_refused"


def test_a_public_https_url_is_accepted_and_private_ones_only_when_allowed() -> None:
    target = parse_events_url("https://93.184.215.14:8443/h?x=1", allow_private=False)
    assert (target.host, target.port, str(target.literal)) == (
        "93.184.215.14",
        8443,
        "93.184.215.14",
    )
    named = parse_events_url("https://hooks.example.com/h", allow_private=False)
    assert (named.port, named.literal) == (443, None)
    assert parse_events_url("http://127.0.0.1:9/h", allow_private=True).port == 9
    assert parse_events_url("http://[::1]/h", allow_private=True).port == 80


def test_backoff_doubles_up_to_its_cap() -> None:
    policy = RetryPolicy(base_s=10, max_s=300, max_attempts=12, max_age_s=86_400)
    assert [backoff_s(n, policy) for n in range(1, 8)] == [10, 20, 40, 80, 160, 300, 300]
    assert backoff_s(500, policy) == 300


def test_settlement_delivered_retried_then_failed_and_kept() -> None:
    policy = RetryPolicy(base_s=10, max_s=3600, max_attempts=3, max_age_s=1000)
    common = {"permanent": False, "error": "http_500: answered 500", "policy": policy}
    assert (
        settle(
            delivered=True, permanent=False, error=None, attempts=1, age_s=0, policy=policy
        ).outcome
        is Outcome.DELIVERED
    )
    first = settle(delivered=False, attempts=1, age_s=0, **common)  # type: ignore[arg-type]
    assert (first.outcome, first.retry_in_s) == (Outcome.RETRY, 10)
    second = settle(delivered=False, attempts=2, age_s=10, **common)  # type: ignore[arg-type]
    assert (second.outcome, second.retry_in_s) == (Outcome.RETRY, 20)
    last = settle(delivered=False, attempts=3, age_s=30, **common)  # type: ignore[arg-type]
    assert last.outcome is Outcome.FAILED and "after 3 attempts" in (last.error or "")
    old = settle(delivered=False, attempts=1, age_s=995, **common)  # type: ignore[arg-type]
    assert old.outcome is Outcome.FAILED and "older than" in (old.error or "")
    refused = settle(
        delivered=False,
        permanent=True,
        error="events_url_refused: x",
        attempts=1,
        age_s=0,
        policy=policy,
    )
    assert (refused.outcome, refused.error) == (Outcome.FAILED, "events_url_refused: x")


class SteppingResolver:
    """Answers each call with the next list of addresses (a name that changes its answer)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.answers.pop(0)


async def test_a_name_that_later_resolves_inside_is_refused_then() -> None:
    resolver = SteppingResolver(["93.184.215.14"], ["93.184.215.14", "10.0.0.7"])
    guard = AddressGuard(resolver)
    await guard.check_url("https://hooks.example.com/h")  # set time: public
    with pytest.raises(EventsUrlRefused, match=r"10\.0\.0\.7 \(privado\)"):
        await guard.addresses("hooks.example.com", 443)  # delivery: one address is inside
    assert resolver.calls == 2


async def test_the_http_client_connects_only_to_the_checked_addresses() -> None:
    resolver = SteppingResolver(["2606:4700:4700::1111", "8.8.8.8"], ["127.0.0.1"])
    aiohttp_resolver = GuardedResolver(AddressGuard(resolver))
    answers = await aiohttp_resolver.resolve("hooks.example.com", 443)
    assert [(a["host"], a["family"], a["port"]) for a in answers] == [
        ("2606:4700:4700::1111", socket.AF_INET6, 443),
        ("8.8.8.8", socket.AF_INET, 443),
    ]
    with pytest.raises(AddressRefused) as refused:
        await aiohttp_resolver.resolve("hooks.example.com", 443)
    assert refused.value.refused.code == "events_url_refused"


async def test_allow_private_lets_loopback_through_and_unresolvable_names_are_refused() -> None:
    allowed = AddressGuard(SteppingResolver(["127.0.0.1"]), allow_private=True)
    assert [str(a) for a in await allowed.addresses("localhost", 80)] == ["127.0.0.1"]

    async def nowhere(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(EventsUrlRefused, match="não resolve"):
        await AddressGuard(nowhere).check_url("https://nao-existe.invalid/h")


def test_the_worker_counts_delivered_retried_and_failed_events() -> None:
    metrics = WorkerMetrics()

    def value(result: str, code: str) -> float | None:
        return metrics.registry.get_sample_value(
            "skillet_events_deliveries_total", {"result": result, "code": code}
        )

    assert value("retried", "none") == 0  # born at 0
    metrics.event_settled("delivered", None)
    metrics.event_settled("retry", "http_500")
    metrics.event_settled("failed", "events_url_refused")
    metrics.event_settled("failed", "Not A Code")
    assert value("delivered", "none") == 1
    assert value("retried", "http_500") == 1
    assert value("failed", "events_url_refused") == 1
    assert value("failed", "other") == 1
