"""Which running jobs of a queue no live worker owns: pure, values in, values out.

arq marks a running job with `arq:in-progress:{job_id}` (TTL: the longest job timeout +
10 s); a worker killed mid-job leaves that key behind, and the job re-runs only once it
expires. Each live worker's heartbeat (worker.heartbeat) lists the jobs it was running when
written. A job is orphaned when no live heartbeat lists it and it is older than the oldest
live heartbeat (a younger one may simply not be listed yet). Its age comes from the key's
remaining TTL and the full TTL the workers report, so it needs no clock shared with them;
a beat's age does (`now_s - seen_at`), hence CLOCK_SLACK_S.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.heartbeat import WorkerBeat

CLOCK_SLACK_S = 1.0  # the beat's own write, and clocks of hosts that differ a little


@dataclass(frozen=True)
class RunningJob:
    job_id: str
    ttl_ms: int | None  # remaining TTL of its in-progress key; None: no expiry or unknown


def orphaned_jobs(
    running: Sequence[RunningJob], beats: Sequence[WorkerBeat], now_s: float
) -> tuple[str, ...]:
    """Job ids no live worker owns, in `running`'s order."""
    if not beats:
        return tuple(job.job_id for job in running)  # nobody alive runs anything
    owned = {job_id for beat in beats for job_id in beat.job_ids}
    full_ttls = [b.in_progress_ttl_s for b in beats if b.in_progress_ttl_s is not None]
    if not full_ttls:
        return ()  # workers that do not report their jobs: no way to tell
    full_ttl_s = max(full_ttls)
    oldest_beat_age_s = max(now_s - b.seen_at for b in beats)
    orphaned = []
    for job in running:
        if job.job_id in owned or job.ttl_ms is None:
            continue
        age_s = full_ttl_s - job.ttl_ms / 1000
        if age_s > oldest_beat_age_s + CLOCK_SLACK_S:
            orphaned.append(job.job_id)
    return tuple(orphaned)
