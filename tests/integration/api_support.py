"""Shared pieces of the admin API tests: the real app on a free port, keys, org snapshots."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
import asyncpg

from api.app import build_app
from api.key_queries import insert_api_key
from api.keys import Role, mint_key
from api.rate_limit import RateLimits, RedisCounters, open_counter_redis
from api.routing import ApiDeps
from channels.connect import Prover
from channels.presence import ChannelPresence
from consolidation.backends import LexicalBackend, SimilarityBackend
from core.address_guard import AddressGuard
from core.db import create_pool
from core.object_store import ObjectStore
from delivery.presence import NO_PRESENCE, Presence
from jobs.queue import open_queue
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.usage import UsageStore
from webhook.server import start_site
from worker.channel_senders import build_presence, http_session, proof_config
from worker.settings import Settings


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any

    @property
    def code(self) -> str | None:
        return self.body.get("error") if isinstance(self.body, dict) else None


@dataclass
class ApiClient:
    """aiohttp's client against the running app; `key` is sent as the bearer when given."""

    http: aiohttp.ClientSession
    base_url: str
    deps: ApiDeps

    async def call(
        self,
        method: str,
        path: str,
        key: str | None = None,
        *,
        json_body: Any = None,
        data: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        async with self.http.request(
            method, self.base_url + path, json=json_body, data=data, headers=sent
        ) as response:
            text = await response.text()
            try:
                body = json.loads(text)
            except ValueError:
                body = text
            return Answer(response.status, body)

    async def get(self, path: str, key: str | None = None) -> Answer:
        return await self.call("GET", path, key)

    async def walk(self, path: str, key: str, limit: int) -> list[list[Any]]:
        """Every page of a list, following `next` until it is null."""
        pages: list[list[Any]] = []
        cursor: str | None = None
        while True:
            sep = "&" if "?" in path else "?"
            url = f"{path}{sep}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
            answer = await self.get(url, key)
            assert answer.status == 200, answer.body
            pages.append(answer.body["items"])
            cursor = answer.body["next"]
            if cursor is None:
                return pages


@contextlib.asynccontextmanager
async def running_api(
    settings: Settings,
    store: ObjectStore,
    *,
    clock: Any = None,
    limits: RateLimits | None = None,
    limiter_redis_url: str | None = None,
    package_limits: PackageLimits = DEFAULT_LIMITS,
    prove_with: Settings | None = None,
    similarity: SimilarityBackend | None = None,
    console_public_url: str | None = None,
    presence: Presence = NO_PRESENCE,
) -> AsyncIterator[ApiClient]:
    """The real application, as `skillet api` builds it (pool as skillet_api), on 127.0.0.1.

    Rate limits only with `limits` (counted in settings' Redis, or `limiter_redis_url`, under
    the test's own key prefix): the other tests send many wrong keys from one address.
    Numbers are proven (POST /v1/channels) only with `prove_with`: settings whose Graph API
    and WAHA are fakes (whatsapp_settings); without, the API connects no number."""
    the_clock = clock or (lambda: datetime.now(UTC))
    async with contextlib.AsyncExitStack() as stack:
        pool = await create_pool(settings.database_url, max_size=4, app_role="skillet_api")
        stack.push_async_callback(pool.close)
        queue = await open_queue(settings.redis_url, settings.queue_name)
        stack.push_async_callback(queue.aclose)
        counters = None
        if limits is not None:
            redis = open_counter_redis(
                limiter_redis_url or settings.redis_url, limits.redis_timeout_s
            )
            stack.push_async_callback(redis.aclose)
            counters = RedisCounters(redis, limits.redis_timeout_s)
        http = await stack.enter_async_context(aiohttp.ClientSession())
        prover = None
        if prove_with is not None:  # the fakes listen on 127.0.0.1: private addresses allowed
            prover = Prover(http, proof_config(prove_with), guard=AddressGuard(allow_private=True))
        deps = ApiDeps(
            pool=pool,
            store=store,
            queue=queue,
            clock=the_clock,
            usage=UsageStore(the_clock),
            rate_limit_counters=counters,
            rate_limits=limits or RateLimits(),
            package_limits=package_limits,
            prover=prover,
            similarity=similarity or LexicalBackend(),
            console_public_url=console_public_url,
            presence=presence,
        )
        runner, port = await start_site(build_app(deps), "127.0.0.1", 0)
        stack.push_async_callback(runner.cleanup)
        yield ApiClient(http, f"http://127.0.0.1:{port}", deps)


@contextlib.asynccontextmanager
async def api_presence(settings: Settings) -> AsyncIterator[ChannelPresence]:
    """The read marks the API process sends (as `skillet api` builds them, on a pool of
    skillet_api), at the settings' fake Graph API and WAHA."""
    async with contextlib.AsyncExitStack() as stack:
        pool = await create_pool(settings.database_url, max_size=2, app_role="skillet_api")
        stack.push_async_callback(pool.close)
        http = await stack.enter_async_context(http_session(settings))
        presence = build_presence(settings, http, pool, lambda kind, call: None)
        assert isinstance(presence, ChannelPresence)
        stack.push_async_callback(presence.aclose)
        yield presence


async def create_key(
    db: asyncpg.Connection, org: uuid.UUID, role: Role, name: str | None = None
) -> str:
    """A live key of `org` (written as the CLI does, by the owner); returns the key."""
    minted = mint_key()
    assert await insert_api_key(db, org, minted, role, name) is not None
    return minted.key


# What a request may change without changing the org's data: its audit rows (checked on
# their own) and the stamp of the key that was used.
_VOLATILE = {"audit_log": None, "api_keys": {"last_used_at"}}


async def org_snapshot(db: asyncpg.Connection, org: uuid.UUID) -> dict[str, list[str]]:
    """Every row of `org` in every table with an organization_id (and its organizations
    row), as sorted JSON text, so two snapshots compare with ==."""
    tables = [
        r["table_name"]
        for r in await db.fetch(
            """select c.table_name from information_schema.columns c
               join information_schema.tables t
                 on t.table_schema = c.table_schema and t.table_name = c.table_name
               where c.table_schema = 'public' and c.column_name = 'organization_id'
                 and t.table_type = 'BASE TABLE'
               order by c.table_name"""
        )
    ]
    snapshot: dict[str, list[str]] = {}
    for table in tables:
        if table in _VOLATILE and _VOLATILE[table] is None:
            continue
        rows = await db.fetch(f'select * from "{table}" where organization_id = $1', org)
        dropped = _VOLATILE.get(table) or set()
        snapshot[table] = sorted(
            json.dumps({k: v for k, v in dict(r).items() if k not in dropped}, default=str)
            for r in rows
        )
    org_row = await db.fetchrow("select * from organizations where id = $1", org)
    snapshot["organizations"] = [json.dumps(dict(org_row or {}), default=str)]
    return snapshot


async def audit_rows(db: asyncpg.Connection, org: uuid.UUID) -> list[dict[str, Any]]:
    rows = await db.fetch(
        "select actor, action, outcome, skill_name, before_version_id, after_version_id, "
        "detail from audit_log where organization_id = $1 order by id",
        org,
    )
    return [dict(r) for r in rows]


async def record_turn_usage(
    db: asyncpg.Connection,
    org: uuid.UUID,
    agent: uuid.UUID | None,
    provider: str,
    model: str,
    at: datetime,
    tokens: tuple[int, int, int, int] | None,
    *,
    calls: int = 1,
) -> None:
    """One reply's model usage, through the function the reply commit calls; `tokens` is
    (input, output, cache read, cache write), None when the provider sent no count."""
    usage: dict[str, Any] = {"agent_id": None if agent is None else str(agent)}
    usage |= {"provider": provider, "model": model, "calls": calls}
    if tokens is not None:
        names = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        usage |= dict(zip(names, tokens, strict=True))
    await db.execute("select skillet_bump_token_usage($1, $2, $3)", org, usage, at)
