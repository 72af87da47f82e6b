"""A worker's own readiness: can it reach its Redis, Postgres and S3 right now?

Each check uses the worker's real clients (its asyncpg pool, its Redis client, its S3
client), runs concurrently with the others and is bounded by `timeout_s`, so a hung
dependency reads as down instead of hanging the probe.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

Check = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    latency_ms: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "latency_ms": round(self.latency_ms, 1), "error": self.error}


@dataclass(frozen=True)
class HealthReport:
    checks: Mapping[str, CheckResult]
    draining: bool = False

    @property
    def healthy(self) -> bool:
        """Ready for jobs: every dependency answered and the worker is not shutting down."""
        return not self.draining and all(c.ok for c in self.checks.values())

    @property
    def status(self) -> str:
        if self.draining:
            return "draining"
        return "ok" if self.healthy else "unhealthy"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "checks": {name: c.to_json() for name, c in sorted(self.checks.items())},
        }


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:200] if text else type(exc).__name__


async def run_check(check: Check, timeout_s: float) -> CheckResult:
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            await check()
    except TimeoutError:
        elapsed_ms = (time.monotonic() - started) * 1000
        return CheckResult(False, elapsed_ms, f"no answer within {timeout_s:g} s")
    except Exception as exc:  # any failure of the dependency is "down", with its reason
        return CheckResult(False, (time.monotonic() - started) * 1000, _describe(exc))
    return CheckResult(True, (time.monotonic() - started) * 1000)


async def run_checks(
    checks: Mapping[str, Check], timeout_s: float, *, draining: bool = False
) -> HealthReport:
    names = list(checks)
    results = await asyncio.gather(*(run_check(checks[n], timeout_s) for n in names))
    return HealthReport(dict(zip(names, results, strict=True)), draining=draining)


def postgres_check(pool: Any) -> Check:
    """A pooled connection answers `select 1` (a broken one is discarded by the pool)."""

    async def check() -> None:
        async with pool.acquire() as conn:
            await conn.fetchval("select 1")

    return check


def redis_check(redis: Any) -> Check:
    async def check() -> None:
        await redis.ping()

    return check


def s3_check(client: Any, bucket: str) -> Check:
    """The worker's bucket answers HEAD (reachable, credentials accepted, bucket there)."""

    async def check() -> None:
        await client.head_bucket(Bucket=bucket)

    return check
