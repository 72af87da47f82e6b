"""Reading an arq queue in Redis: due, deferred and in-progress jobs (read-only).

arq keeps every job of a queue in one sorted set scored by when it may run (ms); a running
job stays in it until it finishes, marked by `arq:in-progress:{job_id}`. So: due = score <=
now (running or waiting), deferred = score > now (coalescing window, retry delay), waiting =
due minus running. A running job no live worker owns (its worker was killed) is orphaned
(worker.job_owners): it waits for its in-progress key to expire, then runs again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from arq.constants import health_check_key_suffix, in_progress_key_prefix

from worker.heartbeat import WorkerBeat
from worker.job_owners import RunningJob, orphaned_jobs

EXISTS_CHUNK = 1000  # in-progress lookups per pipeline round trip
_NO_KEY = -2  # PTTL of a key that does not exist; -1: a key without expiry


@dataclass(frozen=True)
class QueueDepth:
    due: int
    deferred: int


@dataclass(frozen=True)
class QueueSnapshot:
    name: str
    due: int
    deferred: int
    running: int  # due jobs with an in-progress key: owned by a worker, or orphaned
    oldest_waiting_s: float | None  # how long the oldest due, not running job has waited
    arq_health_check: str | None  # arq's shared per-queue line (last worker to write it)
    running_jobs: tuple[RunningJob, ...] = ()
    orphaned: tuple[str, ...] = ()  # job ids of running jobs no live worker owns

    @property
    def waiting(self) -> int:
        return self.due - self.running

    @property
    def in_progress(self) -> int:
        """Running jobs a live worker owns (or may own: just started)."""
        return self.running - len(self.orphaned)

    def with_owners(self, beats: Sequence[WorkerBeat], now_s: float) -> QueueSnapshot:
        """This snapshot with its orphaned jobs told apart, given the live heartbeats."""
        return replace(self, orphaned=orphaned_jobs(self.running_jobs, beats, now_s))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "waiting": self.waiting,
            "in_progress": self.in_progress,
            "orphaned": len(self.orphaned),
            "orphaned_jobs": list(self.orphaned),
            "deferred": self.deferred,
            "due": self.due,
            "oldest_waiting_s": self.oldest_waiting_s,
            "arq_health_check": self.arq_health_check,
        }


def _now_ms() -> int:
    return int(time.time() * 1000)


async def queue_depth(redis: Any, queue_name: str, *, now_ms: int | None = None) -> QueueDepth:
    """Two ZCOUNTs: cheap enough for every metrics scrape."""
    now = _now_ms() if now_ms is None else now_ms
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zcount(queue_name, "-inf", now)
        pipe.zcount(queue_name, f"({now}", "+inf")
        due, deferred = await pipe.execute()
    return QueueDepth(due=int(due), deferred=int(deferred))


async def queue_snapshot(
    redis: Any, queue_name: str, *, now_ms: int | None = None
) -> QueueSnapshot:
    """Depth plus which due jobs are running: one EXISTS per due job (for `skillet status`)."""
    now = _now_ms() if now_ms is None else now_ms
    depth = await queue_depth(redis, queue_name, now_ms=now)  # its `due` is re-read below
    due = await redis.zrangebyscore(queue_name, "-inf", now, withscores=True)
    running: list[RunningJob] = []
    oldest_ms: float | None = None
    for start in range(0, len(due), EXISTS_CHUNK):
        chunk = due[start : start + EXISTS_CHUNK]
        async with redis.pipeline(transaction=False) as pipe:
            for job_id, _ in chunk:
                pipe.pttl(in_progress_key_prefix + _text(job_id))
            ttls = await pipe.execute()
        for (job_id, score), ttl_ms in zip(chunk, ttls, strict=True):
            if ttl_ms != _NO_KEY:
                running.append(RunningJob(_text(job_id), None if ttl_ms < 0 else int(ttl_ms)))
            elif oldest_ms is None or score < oldest_ms:
                oldest_ms = score
    health = await redis.get(queue_name + health_check_key_suffix)
    return QueueSnapshot(
        name=queue_name,
        due=len(due),
        deferred=depth.deferred,
        running=len(running),
        running_jobs=tuple(running),
        oldest_waiting_s=None if oldest_ms is None else round((now - oldest_ms) / 1000, 3),
        arq_health_check=None if health is None else _text(health),
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
