"""Scheduling of the conversation sweep (`jobs.conversation_sweep`): every 15 s, a timeout no
longer than a turn's, and how old a waiting message must be before it is woken."""

from __future__ import annotations

from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from jobs.context import arq_job
from jobs.conversation_sweep import CONVERSATION_SWEEP, conversation_sweep
from worker.curator_cron import within_turn_timeout
from worker.settings import Settings

SWEEP_TIMEOUT_S = 30
# Past the coalescing window: a job deferred by it is not yet late.
SWEEP_SLACK_S = 5.0
SWEEP_SECONDS = {7, 22, 37, 52}  # off the curator's 0 and the outbox sweep's 30


def sweep_after_s(settings: Settings) -> float:
    return settings.coalesce_ms / 1000 + SWEEP_SLACK_S


def _timeout_s(settings: Settings) -> int:
    return within_turn_timeout(SWEEP_TIMEOUT_S, settings)


def conversation_cron_job(settings: Settings) -> CronJob:
    return cron(
        arq_job(conversation_sweep),
        name=CONVERSATION_SWEEP,
        second=SWEEP_SECONDS,
        timeout=_timeout_s(settings),
        max_tries=1,
    )


def conversation_function(settings: Settings) -> Function:
    """For a worker that does not schedule the sweep but may pick up an enqueued one."""
    return func(
        arq_job(conversation_sweep),
        name=CONVERSATION_SWEEP,
        timeout=_timeout_s(settings),
        max_tries=1,
    )
