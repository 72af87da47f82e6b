"""Fire-and-forget recording of skill activations: the turn enqueues, a background task batches."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from turn.activation_queries import ActivationRow

BatchWriter = Callable[[Sequence[ActivationRow]], Awaitable[None]]

log = structlog.get_logger(__name__)


@dataclass
class ActivationStats:
    written: int = 0
    failed: int = 0
    dropped: int = 0
    batches: int = 0


class ActivationRecorder:
    """`record()` never blocks and never raises; rows are written in batches in the background.

    A failed batch is logged and counted, not retried: telemetry must never slow or break a
    turn. Rows still pending at `close()` get a bounded time to flush.
    """

    def __init__(
        self,
        write: BatchWriter,
        *,
        batch_size: int = 200,
        max_pending: int = 10_000,
        linger_s: float = 0.0,
    ):
        self._write = write
        self._batch_size = batch_size
        # How long a batch waits for more rows after its first: each write costs a pooled
        # connection and a few round trips, and turns record one row each.
        self._linger_s = linger_s
        self._queue: asyncio.Queue[ActivationRow] = asyncio.Queue(maxsize=max_pending)
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._in_flight = 0  # rows taken off the queue whose write has not finished
        self.stats = ActivationStats()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="activation-recorder")

    def record(self, rows: Sequence[ActivationRow]) -> None:
        for i, row in enumerate(rows):
            if self._closed:
                self._drop(len(rows) - i, "closed")
                return
            try:
                self._queue.put_nowait(row)
            except asyncio.QueueFull:
                self._drop(len(rows) - i, "queue_full")
                return

    def _drop(self, count: int, reason: str) -> None:
        self.stats.dropped += count
        log.warning("activations.dropped", rows=count, reason=reason)

    async def flush(self) -> None:
        """Wait until every row recorded so far was written (or failed)."""
        await self._queue.join()

    async def close(self, timeout_s: float) -> None:
        """Stop accepting rows, flush what is pending for at most `timeout_s`, then stop."""
        self._closed = True
        if self._task is None:
            if self._queue.qsize():
                self._drop(self._queue.qsize(), "never_started")
            return
        try:
            await asyncio.wait_for(self._queue.join(), timeout_s)
        except TimeoutError:
            pending = self._queue.qsize() + self._in_flight
            self.stats.dropped += pending
            log.warning("activations.flush_timeout", rows=pending, timeout_s=timeout_s)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            self._in_flight = 1
            if self._linger_s:
                await asyncio.sleep(self._linger_s)
            # Take what is waiting: batches grow with load, latency stays low when idle.
            while len(batch) < self._batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            self._in_flight = len(batch)
            await self._write_batch(batch)
            self._in_flight = 0
            for _ in batch:
                self._queue.task_done()

    async def _write_batch(self, batch: list[ActivationRow]) -> None:
        try:
            await self._write(batch)
        except Exception as exc:  # telemetry must never propagate: log and count instead
            self.stats.failed += len(batch)
            log.warning("activations.write_failed", rows=len(batch), error=repr(exc)[:200])
        else:
            self.stats.written += len(batch)
            self.stats.batches += 1
