"""The typed arq context the worker's startup fills and jobs read."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from turn.inbound_turn import TurnDeps


class JobContext(TypedDict, total=False):
    # Filled by arq for each job.
    job_id: str
    job_try: int
    enqueue_time: datetime
    redis: Any
    # Filled by the worker's startup.
    turn_deps: TurnDeps
    pool: Any
    max_tries: int
    retry_defer_s: float
