"""CPU seconds spent by each server a bench drives, so two runs can be compared by work done
rather than by wall-clock time (which moves ±20% between identical runs on a 2-vCPU VM).

- This process: ``time.process_time()`` (a bench that runs the worker in-process).
- Redis: ``INFO cpu`` (``used_cpu_user`` + ``used_cpu_sys``), any host.
- PostgreSQL: Linux /proc, only when the server runs on this host and its processes are
  readable: the postmaster's own time, its reaped children's (``cutime``/``cstime``: backends
  that exited) and its live children's. Every database of the server counts, so read it on a
  quiet server.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg
from redis.asyncio import Redis

_PROC = Path("/proc")
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# Fields of /proc/PID/stat after the ")" that closes the command name (man 5 proc, 0-based):
# ppid, then utime, stime, cutime, cstime in clock ticks.
_PPID, _UTIME, _STIME, _CUTIME, _CSTIME = 1, 11, 12, 13, 14


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:  # gone, or not on this host
        return None
    return raw[raw.rindex(")") + 2 :].split()


def _ticks(fields: list[str], *indexes: int) -> int:
    return sum(int(fields[i]) for i in indexes)


def postgres_cpu_s(postmaster_pid: int) -> float | None:
    """The server's CPU seconds so far (None when its postmaster is not readable here)."""
    own = _stat_fields(postmaster_pid)
    if own is None:
        return None
    total = _ticks(own, _UTIME, _STIME, _CUTIME, _CSTIME)
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None and int(fields[_PPID]) == postmaster_pid:
            total += _ticks(fields, _UTIME, _STIME)
    return total / _TICKS_PER_S


async def postmaster_pid(conn: asyncpg.Connection) -> int | None:
    """The server's postmaster when it runs on this host, else None."""
    backend = int(await conn.fetchval("select pg_backend_pid()"))
    fields = _stat_fields(backend)
    if fields is None:
        return None
    # A pid on this host that is not a postgres backend: the server is elsewhere.
    comm = (_PROC / str(backend) / "comm").read_text().strip()
    return int(fields[_PPID]) if comm.startswith("postgres") else None


async def redis_cpu_s(redis: Redis) -> float:
    cpu = await redis.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


@dataclass(frozen=True)
class CpuSample:
    process_s: float
    redis_s: float
    postgres_s: float | None

    def __sub__(self, earlier: CpuSample) -> CpuSample:
        postgres = None
        if self.postgres_s is not None and earlier.postgres_s is not None:
            postgres = self.postgres_s - earlier.postgres_s
        return CpuSample(
            self.process_s - earlier.process_s, self.redis_s - earlier.redis_s, postgres
        )

    def per_job_ms(self, jobs: int) -> str:
        """``this process 2.31, Redis 0.20, PostgreSQL 1.80`` (ms a job)."""
        parts = [f"this process {1000 * self.process_s / jobs:.2f}"]
        parts.append(f"Redis {1000 * self.redis_s / jobs:.2f}")
        if self.postgres_s is not None:
            parts.append(f"PostgreSQL {1000 * self.postgres_s / jobs:.2f}")
        return ", ".join(parts)


async def sample(redis: Redis, postmaster: int | None) -> CpuSample:
    return CpuSample(
        time.process_time(),
        await redis_cpu_s(redis),
        None if postmaster is None else postgres_cpu_s(postmaster),
    )
