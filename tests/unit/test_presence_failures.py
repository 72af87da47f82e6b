"""A read mark that fails is a metric and a log line, never an error a turn sees (pure: a
closed port stands in for a channel that does not answer, an in-process pool that cannot
connect for a database that is down)."""

from __future__ import annotations

import uuid
from typing import Any

import aiohttp
from structlog.testing import capture_logs

from channels.cloud_api import CloudApiConfig, CloudApiSender
from channels.credential_queries import SendCredentials
from channels.http import RetryPolicy
from channels.presence import ChannelPresence, PresenceConfig
from channels.presence_queries import ReadNumber
from channels.waha import WahaConfig, WahaSender
from delivery.contract import Route
from delivery.presence import Reading

NUMBER = ReadNumber(Route("cloud_api", "123456"), SendCredentials(access_token="token"))


class _Unreachable:
    """A pool whose every acquire fails as a dead database's would."""

    def acquire(self) -> Any:
        raise ConnectionRefusedError("database down")


async def test_a_failed_read_mark_is_counted_and_logged_and_never_raised() -> None:
    failures: list[tuple[str, str]] = []
    async with aiohttp.ClientSession() as http:
        policy = RetryPolicy(max_attempts=1)
        presence = ChannelPresence(
            _Unreachable(),
            CloudApiSender(http, CloudApiConfig("http://127.0.0.1:9", None), policy),
            WahaSender(http, WahaConfig("http://127.0.0.1:9", None), policy),
            PresenceConfig(timeout_s=1.0),
            on_failure=lambda kind, call: failures.append((kind, call)),
        )
        with capture_logs() as logs:
            burst = Reading(uuid.uuid4(), uuid.uuid4(), "5511", "wamid.x", NUMBER)
            typing = presence.reading(burst)
            typing.stop()
            typing.stop()  # once is enough
            presence.mark_read(uuid.uuid4(), uuid.uuid4())  # a person opens one: no database
            await presence.aclose()
    assert sorted(failures) == [("cloud_api", "reading"), ("unknown", "read")]
    assert sorted(e["call"] for e in logs if e["event"] == "presence.failed") == [
        "read",
        "reading",
    ]


async def test_both_settings_off_start_nothing() -> None:
    async with aiohttp.ClientSession() as http:
        policy = RetryPolicy(max_attempts=1)
        presence = ChannelPresence(
            _Unreachable(),
            CloudApiSender(http, CloudApiConfig("http://127.0.0.1:9", None), policy),
            WahaSender(http, WahaConfig("http://127.0.0.1:9", None), policy),
            PresenceConfig(read_receipts=False, typing_indicator=False),
        )
        presence.reading(Reading(uuid.uuid4(), uuid.uuid4(), "5511", "wamid.x")).stop()
        presence.mark_read(uuid.uuid4(), uuid.uuid4())
        assert presence._tasks == set()
