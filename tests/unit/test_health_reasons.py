"""`skillet health` says in a few words why no worker answered, never a library repr."""

from __future__ import annotations

import json

import aiohttp
import pytest

from cli.status import unreachable_reason

NOT_JSON = "the answer is not JSON (is that port a skillet worker's?)"


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (TimeoutError(), "no answer within 2.5 s"),
        (aiohttp.ServerTimeoutError("Timeout on reading data"), "no answer within 2.5 s"),
        (aiohttp.ServerDisconnectedError(), "the connection closed without an answer"),
        (aiohttp.InvalidURL("http://:x/healthz"), "not a valid URL (check --host and --port)"),
        (json.JSONDecodeError("Expecting value", "<html>", 0), NOT_JSON),
        (
            aiohttp.ClientPayloadError("Response payload is not completed\nsecond line"),
            "ClientPayloadError: Response payload is not completed",
        ),
    ],
)
def test_each_failure_has_one_short_line(exc: BaseException, reason: str) -> None:
    assert unreachable_reason(exc, 2.5) == reason
