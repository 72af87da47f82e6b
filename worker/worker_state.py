"""What a running arq Worker tells operators: jobs in progress and whether it is draining."""

from __future__ import annotations

from typing import Protocol

from arq.worker import Worker


class WorkerState(Protocol):
    def jobs_in_progress(self) -> int: ...

    def running_job_ids(self) -> tuple[str, ...]: ...

    def in_progress_ttl_s(self) -> float | None: ...

    def draining(self) -> bool: ...


class ArqWorkerState:
    """Reads arq's own bookkeeping: `tasks` (running jobs) and `allow_pick_jobs` (cleared on
    SIGTERM while running jobs get `job_completion_wait` to finish)."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    def jobs_in_progress(self) -> int:
        return sum(not task.done() for task in self._worker.tasks.values())

    def running_job_ids(self) -> tuple[str, ...]:
        return tuple(sorted(job_id for job_id, t in self._worker.tasks.items() if not t.done()))

    def in_progress_ttl_s(self) -> float | None:
        """What arq gives each job's in-progress key (its longest job timeout + 10 s)."""
        return float(self._worker.in_progress_timeout_s)

    def draining(self) -> bool:
        main = self._worker.main_task
        return not self._worker.allow_pick_jobs or (main is not None and main.done())


class IdleWorkerState:
    """For code running outside an arq Worker (tests of the pieces)."""

    def jobs_in_progress(self) -> int:
        return 0

    def running_job_ids(self) -> tuple[str, ...]:
        return ()

    def in_progress_ttl_s(self) -> float | None:
        return None

    def draining(self) -> bool:
        return False
