"""Scheduling of the outbox sweep (`jobs.outbox_sweep`): every minute at second 30, with a
timeout no longer than a turn's."""

from __future__ import annotations

from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from jobs.context import arq_job
from jobs.outbox_sweep import OUTBOX_SWEEP, outbox_sweep
from worker.curator_cron import within_turn_timeout
from worker.settings import Settings

SWEEP_TIMEOUT_S = 30
# arq re-runs a dead worker's job after its timeout + 10 s; a claim outliving that by a
# margin belongs to a send that can no longer be in flight.
CLAIM_MARGIN_S = 30


def abandoned_after_s(settings: Settings) -> float:
    return float(settings.job_timeout_s + CLAIM_MARGIN_S)


def _timeout_s(settings: Settings) -> int:
    return within_turn_timeout(SWEEP_TIMEOUT_S, settings)


def outbox_cron_job(settings: Settings) -> CronJob:
    return cron(
        arq_job(outbox_sweep),
        name=OUTBOX_SWEEP,
        second={30},  # off the curator's second 0
        timeout=_timeout_s(settings),
        max_tries=1,
    )


def outbox_function(settings: Settings) -> Function:
    """For a worker that does not schedule the sweep but may pick up an enqueued one."""
    return func(arq_job(outbox_sweep), name=OUTBOX_SWEEP, timeout=_timeout_s(settings), max_tries=1)
