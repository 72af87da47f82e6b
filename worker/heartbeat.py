"""Per-worker heartbeats in Redis: who is alive on a queue, healthy or draining.

arq's health-check key is one per queue (the last worker to write wins), so it cannot say
how many workers there are. Each worker also writes its own key, `{queue}:skillet:worker:{id}`,
with a TTL of three intervals, and indexes it in the sorted set `{queue}:skillet:workers`
(score = expiry in ms, so readers prune the dead without SCAN). A worker that stops cleanly
deletes its key; one that dies disappears when the TTL runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import structlog

log = structlog.get_logger(__name__)

TTL_INTERVALS = 3  # a worker is gone after missing this many beats


def workers_key(queue_name: str) -> str:
    return f"{queue_name}:skillet:workers"


def worker_key(queue_name: str, worker_id: str) -> str:
    return f"{queue_name}:skillet:worker:{worker_id}"


def new_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class WorkerBeat:
    worker_id: str
    host: str
    pid: int
    started_at: float  # epoch seconds
    seen_at: float  # epoch seconds
    jobs_in_progress: int
    draining: bool
    healthy: bool | None  # None: not checked yet
    metrics_port: int | None
    # The jobs it was running when the beat was written (arq job ids), and how long arq's
    # in-progress key of a job lives (None: a worker that does not say; see job_owners).
    job_ids: tuple[str, ...] = ()
    in_progress_ttl_s: float | None = None
    # The similarity backend it measures skills with (similarity.choice; None: not said).
    similarity: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "job_ids": list(self.job_ids)}

    @classmethod
    def from_json(cls, raw: str | bytes) -> WorkerBeat:
        data = json.loads(raw)
        fields = {k: data.get(k) for k in cls.__dataclass_fields__}
        return cls(**{**fields, "job_ids": tuple(data.get("job_ids") or ())})


async def write_beat(redis: Any, queue_name: str, beat: WorkerBeat, ttl_s: float) -> None:
    ttl_ms = int(ttl_s * 1000)
    expires_ms = int(beat.seen_at * 1000) + ttl_ms
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(worker_key(queue_name, beat.worker_id), json.dumps(beat.to_json()), px=ttl_ms)
        pipe.zadd(workers_key(queue_name), {beat.worker_id: expires_ms})
        await pipe.execute()


async def remove_beat(redis: Any, queue_name: str, worker_id: str) -> None:
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(worker_key(queue_name, worker_id))
        pipe.zrem(workers_key(queue_name), worker_id)
        await pipe.execute()


async def list_alive(
    redis: Any, queue_name: str, *, now_s: float | None = None
) -> list[WorkerBeat]:
    """Workers whose heartbeat has not expired, oldest first."""
    now_ms = int((time.time() if now_s is None else now_s) * 1000)
    index = workers_key(queue_name)
    await redis.zremrangebyscore(index, "-inf", now_ms)
    ids = [i.decode() if isinstance(i, bytes) else str(i) for i in await redis.zrange(index, 0, -1)]
    if not ids:
        return []
    raws = await redis.mget([worker_key(queue_name, i) for i in ids])
    beats = [WorkerBeat.from_json(raw) for raw in raws if raw is not None]
    return sorted(beats, key=lambda b: (b.started_at, b.worker_id))


class Heartbeat:
    """Writes `beat()` every `interval_s` until closed; never raises into the worker."""

    def __init__(
        self,
        redis: Any,
        queue_name: str,
        worker_id: str,
        beat: Callable[[], Awaitable[WorkerBeat]],
        *,
        interval_s: float,
    ) -> None:
        self._redis = redis
        self._queue = queue_name
        self._worker_id = worker_id
        self._beat = beat
        self._interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="skillet-heartbeat")

    async def beat_once(self) -> None:
        beat = await self._beat()
        await write_beat(self._redis, self._queue, beat, self._interval_s * TTL_INTERVALS)

    async def _run(self) -> None:
        while True:
            try:
                await self.beat_once()
            except Exception as exc:  # Redis blinked: the next beat tries again
                log.warning("worker.heartbeat_failed", error=repr(exc)[:200])
            await asyncio.sleep(self._interval_s)

    async def close(self) -> None:
        """Stop beating and remove this worker's key (best effort: else it expires)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await remove_beat(self._redis, self._queue, self._worker_id)
        except Exception as exc:
            log.warning("worker.heartbeat_remove_failed", error=repr(exc)[:200])
