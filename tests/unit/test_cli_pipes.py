"""cli.pipes tells a stdout nobody reads apart from any other stream."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator

import pytest

from cli.pipes import reader_gone


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):  # the test may have closed it
            os.close(fd)


def test_a_pipe_whose_reader_closed_is_gone(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    with open(write_end, "w", closefd=False) as stream:
        assert not reader_gone(stream)
        os.close(read_end)
        assert reader_gone(stream)


def test_a_stream_without_a_descriptor_is_never_gone() -> None:
    assert not reader_gone(io.StringIO())
