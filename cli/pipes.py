"""A CLI whose reader went away (`skillet status | head -1`) stops quietly, like Unix tools.

Python ignores SIGPIPE, so a write to a pipe nobody reads raises BrokenPipeError; left alone
it prints a traceback, and the interpreter's final flush prints "Exception ignored ..." on
top. The CLI instead exits EXIT_CLOSED_PIPE with nothing on stderr: what a shell reports
for a writer that SIGPIPE ended (`set -o pipefail` sees it, as with `yes | head -1`).
"""

from __future__ import annotations

import os
import select
import signal
import sys
from typing import TextIO

EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE  # 141


def reader_gone(stream: TextIO) -> bool:
    """True when `stream` is a pipe whose reading end is closed (a write would fail EPIPE).

    Tells a closed stdout apart from a BrokenPipeError of a network socket, which is a
    service failure. A stream without a file descriptor (test capture) is never gone.
    """
    try:
        fd = stream.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return False


def quiet_exit() -> int:
    """Point every std stream whose reader is gone at /dev/null (so the interpreter's last
    flush has nowhere to fail), and give the exit code."""
    for stream in (sys.stdout, sys.stderr):
        if reader_gone(stream):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, stream.fileno())
            finally:
                os.close(devnull)
    return EXIT_CLOSED_PIPE
