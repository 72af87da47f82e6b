"""worker.job_owners: which running jobs no live worker owns, on a table of fixed values."""

from __future__ import annotations

import json

import pytest

from worker.heartbeat import WorkerBeat
from worker.job_owners import RunningJob, orphaned_jobs

NOW_S = 1_000_000.0
FULL_TTL_S = 310.0  # a 300 s job timeout + arq's 10 s


def _beat(
    *job_ids: str, age_s: float = 2.0, ttl_s: float | None = FULL_TTL_S, worker: str = "w1"
) -> WorkerBeat:
    return WorkerBeat(
        worker, "h", 1, NOW_S - 100, NOW_S - age_s, len(job_ids), False, True, None,
        job_ids=job_ids, in_progress_ttl_s=ttl_s,
    )  # fmt: skip


def _running(job_id: str, age_s: float) -> RunningJob:
    """A job whose in-progress key was set `age_s` ago."""
    return RunningJob(job_id, int((FULL_TTL_S - age_s) * 1000))


@pytest.mark.parametrize(
    ("running", "beats", "orphaned"),
    [
        ([_running("a", 60)], [], ("a",)),  # nobody alive
        ([_running("a", 60)], [_beat("a")], ()),  # its worker lists it
        ([_running("a", 60)], [_beat()], ("a",)),  # live workers, none lists it: killed owner
        ([_running("a", 60)], [_beat(), _beat("a", worker="w2")], ()),
        ([_running("a", 1)], [_beat(age_s=2)], ()),  # started after the beat: not listed yet
        ([_running("a", 3.5)], [_beat(age_s=2)], ("a",)),  # older than beat + clock slack
        ([_running("a", 2.5)], [_beat(age_s=2)], ()),  # within the clock slack: not yet
        ([_running("a", 60)], [_beat(ttl_s=None)], ()),  # an older worker: cannot tell
        ([RunningJob("a", None)], [_beat()], ()),  # a key without expiry: cannot tell
        ([RunningJob("a", None)], [], ("a",)),
        (
            [_running("a", 60), _running("b", 60), _running("c", 0.5)],
            [_beat("b", age_s=1), _beat(age_s=9, worker="w2")],
            ("a",),  # c may be w1's or w2's newest job
        ),
    ],
)
def test_orphaned_jobs(
    running: list[RunningJob], beats: list[WorkerBeat], orphaned: tuple[str, ...]
) -> None:
    assert orphaned_jobs(running, beats, NOW_S) == orphaned


def test_a_beat_with_its_jobs_round_trips_and_an_older_beat_still_reads() -> None:
    beat = _beat("j1", "j2")
    assert WorkerBeat.from_json(json.dumps(beat.to_json())) == beat
    old = {k: v for k, v in beat.to_json().items() if k not in {"job_ids", "in_progress_ttl_s"}}
    read = WorkerBeat.from_json(json.dumps(old))
    assert (read.job_ids, read.in_progress_ttl_s) == ((), None)
