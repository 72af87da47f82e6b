"""arq's Worker, surviving a Redis restart: a lost connection pauses polling, never kills it;
and saying when it starts draining.

arq 0.28 lets a Redis ConnectionError raised while polling (or re-raised from a finished job
task) escape its main loop, which ends the process. Here the poll iteration catches it,
repairs the job-slot accounting a half-started job may have leaked, backs off and tries again.
Relies on arq's private `_poll_iteration`, `sem` and `job_counter`: arq is pinned to 0.28.0.

SIGTERM/SIGINT log `worker.draining` the moment the drain starts (arq's own line is at INFO
on `arq.worker`, which we silence because its job lines carry message bodies).
"""

from __future__ import annotations

import asyncio
from signal import Signals

import structlog
from arq.worker import Worker
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = structlog.get_logger(__name__)

RECONNECT_BACKOFF_MAX_S = 5.0


class ResilientWorker(Worker):
    _redis_failures = 0
    _drain_logged = False

    def handle_sig_wait_for_completion(self, signum: Signals) -> None:
        self._log_drain(signum)
        super().handle_sig_wait_for_completion(signum)

    def handle_sig(self, signum: Signals) -> None:
        self._log_drain(signum)
        super().handle_sig(signum)

    def _log_drain(self, signum: Signals) -> None:
        """Once per process: a second signal during the drain changes nothing arq does."""
        if self._drain_logged:
            return
        self._drain_logged = True
        log.info(
            "worker.draining",
            signal=Signals(signum).name,
            jobs_in_progress=sum(not task.done() for task in self.tasks.values()),
            # 0: running jobs are cancelled now (and run again elsewhere).
            completion_wait_s=self._job_completion_wait,
        )

    async def _poll_iteration(self) -> None:
        try:
            await super()._poll_iteration()
        except (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError) as exc:
            self._redis_failures += 1
            delay_s = min(RECONNECT_BACKOFF_MAX_S, 0.1 * 2 ** min(self._redis_failures, 6))
            log.warning(
                "worker.redis_unavailable",
                failures=self._redis_failures,
                retry_in_s=delay_s,
                error=repr(exc)[:200],
            )
            await self._repair_slots()
            await asyncio.sleep(delay_s)
        else:
            if self._redis_failures:
                log.info("worker.redis_reconnected", after_failures=self._redis_failures)
            self._redis_failures = 0

    async def _repair_slots(self) -> None:
        """A job start interrupted by the error may have taken a slot it never gives back:
        count slots again from the tasks actually running."""
        running = sum(not task.done() for task in self.tasks.values())
        self.job_counter = running
        self.sem = asyncio.BoundedSemaphore(self.max_jobs + 1)
        for _ in range(running):  # each running task releases one slot when it completes
            self.sem._value -= 1
