"""Rate limits of the admin API and the console's sign-in, on real Redis over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg

from api.client_address import parse_trusted_proxies
from api.console.sessions import CSRF_FIELD, SIGN_IN_COOKIE
from api.keys import Role, mint_key
from api.rate_limit import RateLimits
from tests.integration.api_support import Answer, ApiClient, create_key, running_api
from tests.integration.support import create_org
from tests.prometheus_samples import parse_samples, value
from worker.resources import Resources
from worker.settings import Settings

# Ten seconds into a minute: a window's lock lasts 50 more.
START = datetime(2030, 1, 1, 0, 0, 10, tzinfo=UTC)
CLIENT_A = "203.0.113.7"
CLIENT_B = "203.0.113.8"
LOOPBACK = parse_trusted_proxies(["127.0.0.1"])


@dataclass
class FixedClock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


def _limits(settings: Settings, **values: Any) -> RateLimits:
    """The defaults under this test's own Redis key prefix (the queue name is per test)."""
    return RateLimits(key_prefix=f"{settings.queue_name}:ratelimit", **values)


def _from(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


async def _skills(api: ApiClient, key: str | None, address: str) -> Answer:
    return await api.call("GET", "/v1/skills", key, headers=_from(address))


async def _metrics(api: ApiClient) -> dict[str, float]:
    answer = await api.get("/metrics")
    samples = parse_samples(answer.body)
    return {
        "failed_auth": value(
            samples, "skillet_api_rate_limited_total", reason="too_many_failed_auth"
        ),
        "key_requests": value(
            samples, "skillet_api_rate_limited_total", reason="too_many_requests"
        ),
        "failures": value(samples, "skillet_api_auth_failures_total"),
        "bypassed": value(samples, "skillet_api_rate_limit_bypassed_total"),
    }


async def test_the_21st_wrong_key_from_an_address_is_429_and_no_other_address_is_affected(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    valid = await create_key(db, org, Role.VIEWER)
    revoked = await create_key(db, org, Role.ADMIN)
    await db.execute("update api_keys set revoked_at = now() where prefix = $1", revoked[:12])
    clock = FixedClock()
    limits = _limits(settings, trusted_proxies=LOOPBACK)
    async with running_api(settings, resources.store, clock=clock, limits=limits) as api:
        for _ in range(30):  # no key at all: a plain 401, never counted
            assert (await _skills(api, None, CLIENT_A)).code == "unauthorized"
        wrong = [mint_key().key for _ in range(19)] + [revoked]
        for i, key in enumerate(wrong):
            # What the client writes left of the proxy's entry is forged and never read.
            answer = await _skills(api, key, f"198.51.100.{i}, {CLIENT_A}")
            assert (answer.status, answer.code) == (401, "unauthorized")

        async with api.http.get(
            api.base_url + "/v1/skills",
            headers={"Authorization": f"Bearer {mint_key().key}", **_from(CLIENT_A)},
        ) as locked:
            body = await locked.json()
            assert locked.status == 429
            assert locked.headers["Retry-After"] == "50"
            assert body["error"] == "too_many_failed_auth"
            assert "Espere 50 s" in body["message"]
        # Every request of the address that needs a credential, a valid key too: while
        # locked, no key is looked up, so none can be told apart from a wrong one.
        assert (await _skills(api, None, CLIENT_A)).status == 429
        assert (await _skills(api, valid, CLIENT_A)).status == 429
        assert (await api.call("GET", "/healthz", headers=_from(CLIENT_A))).status == 200
        assert (await _skills(api, valid, CLIENT_B)).status == 200
        assert (await _skills(api, mint_key().key, CLIENT_B)).status == 401

        assert await _metrics(api) == {
            "failed_auth": 3,
            "key_requests": 0,
            "failures": 21,
            "bypassed": 0,
        }
        clock.now = START + timedelta(seconds=50)  # the next minute: free again
        assert (await _skills(api, valid, CLIENT_A)).status == 200
        assert (await _skills(api, mint_key().key, CLIENT_A)).status == 401


async def test_an_untrusted_peers_forwarded_for_is_ignored(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    valid = await create_key(db, org, Role.VIEWER)
    limits = _limits(settings, auth_failures_per_minute=3)  # no trusted proxies
    async with running_api(settings, resources.store, clock=FixedClock(), limits=limits) as api:
        for address in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):
            assert (await _skills(api, mint_key().key, address)).status == 401
        # The peer (127.0.0.1) is the client, whatever its header says.
        assert (await _skills(api, valid, "203.0.113.4")).status == 429


async def test_failed_console_sign_ins_lock_the_address_out_of_the_console_and_api(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    valid = await create_key(db, org, Role.VIEWER)
    limits = _limits(settings, trusted_proxies=LOOPBACK)
    async with running_api(settings, resources.store, clock=FixedClock(), limits=limits) as api:
        sign_in = api.base_url + "/console/entrar"
        async with api.http.get(sign_in, headers=_from(CLIENT_A)) as page:
            assert page.status == 200
            token = page.cookies[SIGN_IN_COOKIE].value

        async def attempt(key: str, address: str) -> aiohttp.ClientResponse:
            async with api.http.post(
                sign_in,
                data={CSRF_FIELD: token, "key": key},
                headers={"Cookie": f"{SIGN_IN_COOKIE}={token}", **_from(address)},
                allow_redirects=False,
            ) as answer:
                await answer.read()
                return answer

        for _ in range(20):
            assert (await attempt(mint_key().key, CLIENT_A)).status == 401
        locked = await attempt(valid, CLIENT_A)
        assert (locked.status, locked.headers["Retry-After"]) == (429, "50")
        assert "too_many_failed_auth" in (await locked.text())
        async with api.http.get(sign_in, headers=_from(CLIENT_A)) as page:
            assert page.status == 429 and "Muitas tentativas" in await page.text()
        async with api.http.get(
            api.base_url + "/console/skills", headers=_from(CLIENT_A), allow_redirects=False
        ) as page:
            assert page.status == 429
        assert (await _skills(api, valid, CLIENT_A)).status == 429
        signed_in = await attempt(valid, CLIENT_B)
        assert (signed_in.status, signed_in.headers["Location"]) == (303, "/console/atendimento")


async def test_a_key_past_its_requests_per_minute_is_429_and_other_keys_are_not(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    busy = await create_key(db, org, Role.VIEWER)
    other = await create_key(db, org, Role.VIEWER)
    clock = FixedClock()
    limits = _limits(settings, key_requests_per_minute=3)
    async with running_api(settings, resources.store, clock=clock, limits=limits) as api:
        for _ in range(3):
            assert (await api.get("/v1/skills", busy)).status == 200
        async with api.http.get(
            api.base_url + "/v1/skills", headers={"Authorization": f"Bearer {busy}"}
        ) as limited:
            body = await limited.json()
            assert (limited.status, limited.headers["Retry-After"]) == (429, "50")
            assert (
                body["error"] == "too_many_requests" and "3 pedidos por minuto" in body["message"]
            )
        assert (await api.get("/v1/skills", other)).status == 200
        assert (await _metrics(api))["key_requests"] == 1
        clock.now = START + timedelta(minutes=1)
        assert (await api.get("/v1/skills", busy)).status == 200


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_with_redis_down_requests_pass_and_the_bypass_is_counted(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    valid = await create_key(db, org, Role.VIEWER)
    limits = _limits(settings, auth_failures_per_minute=2, key_requests_per_minute=1)
    down = f"redis://127.0.0.1:{_closed_port()}/0"
    async with running_api(settings, resources.store, limits=limits, limiter_redis_url=down) as api:
        for _ in range(5):  # a wrong key: the lock check and the failure's count both fail
            assert (await api.get("/v1/skills", mint_key().key)).status == 401
        for _ in range(3):  # a valid key: the lock check and the key's count
            assert (await api.get("/v1/skills", valid)).status == 200
        assert (await _metrics(api))["bypassed"] == 5 * 2 + 3 * 2


@contextlib.asynccontextmanager
async def _silent_server() -> AsyncIterator[int]:
    """A TCP server that accepts and never answers: a hung Redis."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_hung_redis_delays_a_request_by_the_timeout_only(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    valid = await create_key(db, org, Role.VIEWER)
    limits = _limits(settings, redis_timeout_s=0.2)
    async with (
        _silent_server() as port,
        running_api(
            settings,
            resources.store,
            limits=limits,
            limiter_redis_url=f"redis://127.0.0.1:{port}/0",
        ) as api,
    ):
        started = time.monotonic()
        assert (await api.get("/v1/skills", mint_key().key)).status == 401
        assert (await api.get("/v1/skills", valid)).status == 200
        elapsed_s = time.monotonic() - started
        assert elapsed_s < 2.0, elapsed_s  # three limiter calls of 0.2 s each, then through
        assert (await _metrics(api))["bypassed"] == 3
