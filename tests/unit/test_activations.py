"""Unit tests of turn.activations: batched, fire-and-forget, bounded at shutdown."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence

import pytest
from structlog.testing import capture_logs

from turn.activation_queries import ActivationRow
from turn.activations import ActivationRecorder

ORG = uuid.uuid4()


def rows(count: int, start: int = 0) -> list[ActivationRow]:
    return [
        ActivationRow(ORG, f"skill-{i:03d}", uuid.uuid4(), "hard", f"job-{i}")
        for i in range(start, start + count)
    ]


class FakeWriter:
    """Keeps every batch it was given; fails the calls whose numbers are in `fail_calls`."""

    def __init__(self, fail_calls: Sequence[int] = ()) -> None:
        self.fail_calls = set(fail_calls)
        self.calls = 0
        self.batches: list[list[ActivationRow]] = []

    async def __call__(self, batch: Sequence[ActivationRow]) -> None:
        self.calls += 1
        if self.calls in self.fail_calls:
            raise ConnectionError("postgres went away")
        self.batches.append(list(batch))

    @property
    def written(self) -> list[ActivationRow]:
        return [row for batch in self.batches for row in batch]


class HangingWriter:
    """A database that never answers."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def __call__(self, batch: Sequence[ActivationRow]) -> None:
        self.started.set()
        await asyncio.Event().wait()


@pytest.fixture
async def recorders() -> AsyncIterator[list[ActivationRecorder]]:
    """Recorders made by a test; closed afterwards so no background task outlives it."""
    made: list[ActivationRecorder] = []
    yield made
    for recorder in made:
        await recorder.close(timeout_s=0.1)


def start(recorders: list[ActivationRecorder], writer: object, **kwargs: int) -> ActivationRecorder:
    recorder = ActivationRecorder(writer, **kwargs)  # type: ignore[arg-type]
    recorders.append(recorder)
    recorder.start()
    return recorder


async def test_rows_recorded_quickly_are_written_in_batches_exactly_once(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = start(recorders, writer, batch_size=4)
    recorded = rows(10)
    for row in recorded:
        recorder.record([row])
    await asyncio.wait_for(recorder.flush(), 5)

    assert writer.written == recorded  # each row once, in recording order
    assert writer.calls < len(recorded)
    assert all(1 <= len(batch) <= 4 for batch in writer.batches)
    assert [len(b) for b in writer.batches] == [4, 4, 2]
    assert (recorder.stats.written, recorder.stats.batches) == (10, 3)
    assert (recorder.stats.failed, recorder.stats.dropped) == (0, 0)


async def test_a_lingering_batch_collects_rows_recorded_one_turn_at_a_time(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = ActivationRecorder(writer, batch_size=200, linger_s=0.5)  # type: ignore[arg-type]
    recorders.append(recorder)
    recorder.start()
    recorded = rows(5)
    for row in recorded:  # one row per turn, turns a few ms apart
        recorder.record([row])
        await asyncio.sleep(0.005)
    await asyncio.wait_for(recorder.flush(), 5)
    assert writer.batches == [recorded]


async def test_an_idle_recorder_writes_a_single_row_without_waiting_for_a_full_batch(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = start(recorders, writer, batch_size=200)
    only = rows(1)
    recorder.record(only)
    await asyncio.wait_for(recorder.flush(), 5)
    assert writer.batches == [only]


async def test_record_never_raises_when_the_writer_fails_and_later_batches_still_go(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter(fail_calls=[1])
    recorder = start(recorders, writer, batch_size=10)
    with capture_logs() as logs:
        recorder.record(rows(3))
        await asyncio.wait_for(recorder.flush(), 5)
    assert recorder.stats.failed == 3
    assert recorder.stats.written == 0
    assert any(e["event"] == "activations.write_failed" and e["rows"] == 3 for e in logs)

    later = rows(2, start=3)
    recorder.record(later)
    await asyncio.wait_for(recorder.flush(), 5)
    assert writer.written == later
    assert (recorder.stats.written, recorder.stats.failed) == (2, 3)


async def test_a_full_queue_drops_and_counts_instead_of_raising(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = ActivationRecorder(writer, batch_size=10, max_pending=3)
    recorders.append(recorder)
    recorded = rows(5)
    with capture_logs() as logs:
        recorder.record(recorded)  # nothing drains yet: the background task is not started
    assert recorder.stats.dropped == 2
    assert any(
        e["event"] == "activations.dropped" and e["reason"] == "queue_full" and e["rows"] == 2
        for e in logs
    )

    recorder.start()
    await asyncio.wait_for(recorder.flush(), 5)
    assert writer.written == recorded[:3]
    assert recorder.stats.written == 3


async def test_close_flushes_the_rows_still_pending(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = start(recorders, writer, batch_size=3)
    recorded = rows(7)
    recorder.record(recorded)
    await recorder.close(timeout_s=5)
    assert writer.written == recorded
    assert recorder.stats.written == 7
    assert recorder.stats.dropped == 0


async def test_close_with_a_hanging_writer_returns_and_counts_pending_rows_as_dropped(
    recorders: list[ActivationRecorder],
) -> None:
    writer = HangingWriter()
    recorder = start(recorders, writer, batch_size=2)
    recorder.record(rows(5))
    await asyncio.wait_for(writer.started.wait(), 5)
    # Generous outer bound: the point is that close() returns, not how fast.
    await asyncio.wait_for(recorder.close(timeout_s=0.2), 10)
    # Two rows are inside the hung write, three never left the queue.
    assert recorder.stats.dropped >= 3
    assert recorder.stats.written == 0


async def test_close_accounts_for_every_recorded_row(
    recorders: list[ActivationRecorder],
) -> None:
    writer = HangingWriter()
    recorder = start(recorders, writer, batch_size=2)
    recorder.record(rows(5))
    await asyncio.wait_for(writer.started.wait(), 5)
    await asyncio.wait_for(recorder.close(timeout_s=0.2), 10)
    stats = recorder.stats
    assert stats.written + stats.failed + stats.dropped == 5


async def test_record_after_close_is_dropped_not_written(
    recorders: list[ActivationRecorder],
) -> None:
    writer = FakeWriter()
    recorder = start(recorders, writer)
    await recorder.close(timeout_s=1)
    with capture_logs() as logs:
        recorder.record(rows(4))
    assert recorder.stats.dropped == 4
    assert any(e["event"] == "activations.dropped" and e["reason"] == "closed" for e in logs)
    await asyncio.sleep(0)
    assert writer.calls == 0
