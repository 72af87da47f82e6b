"""Hostile webhook deliveries over real HTTP (real Postgres and Redis behind the webhook): what
the parser cannot read is acknowledged with 200 and recorded as skipped, never a 500 that the
provider would retry until it gives up and the message is lost."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from structlog.testing import capture_logs

from core.channel_kind import ChannelKind
from tests.integration.conftest import database_url, db, s3_server, settings  # noqa: F401
from tests.integration.support import create_org
from tests.integration.webhook_support import connect_number, queued_payloads, running_webhook
from tests.whatsapp_payloads import (
    cloud_delivery,
    cloud_message,
    cloud_status,
    cloud_text,
    cloud_value,
    waha_event,
)
from webhook.events import UNPARSEABLE
from worker.settings import Settings

pytestmark = pytest.mark.integration

SESSION = "loja-a"
PHONE_NUMBER_ID = "111"
NO_COLON_VCARD = "BEGIN:VCARD\nVERSION:3.0\nFN;CHARSET=UTF-8\nTEL:+5511988880000\nEND:VCARD"


@pytest.fixture
async def org(db: asyncpg.Connection) -> AsyncIterator[object]:  # noqa: F811
    organization_id = await create_org(db, "Loja A")
    await connect_number(db, organization_id, ChannelKind.WAHA, SESSION)
    await connect_number(db, organization_id, ChannelKind.CLOUD_API, PHONE_NUMBER_ID)
    yield organization_id


def _vcard_event(message_id: str) -> dict[str, Any]:
    return waha_event(
        SESSION, message_id, "", data={"type": "vcard"}, extra={"vCards": [NO_COLON_VCARD]}
    )


async def test_vcard_line_without_colon_is_acknowledged_and_queued(
    settings: Settings,  # noqa: F811
    org: object,
) -> None:
    async with running_webhook(settings) as hook:
        answer = await hook.post_waha(_vcard_event("false_5511@c.us_v1"))
    # Was: IndexError in the parser -> 500 -> WAHA retried until it gave up.
    assert answer.status == 200
    assert (answer.body["enqueued"], answer.body["unparseable"]) == (1, 0)
    [queued] = await queued_payloads(settings)
    assert (queued["kind"], queued["text"]) == ("contacts", "[contato]")


async def test_a_parser_failure_is_a_200_and_a_skipped_unparseable_event(
    settings: Settings,  # noqa: F811
    org: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def old_vcard_names(cards: list[str]) -> list[str]:
        # What the parser did before: the part after ':' of a line that has none.
        return [line.split(":", 1)[1] for card in cards for line in card.splitlines()]

    monkeypatch.setattr("webhook.waha.vcard_names", old_vcard_names)
    document = cloud_delivery(
        cloud_value(
            PHONE_NUMBER_ID,
            [
                cloud_text("wamid.1", "oi"),
                cloud_message("wamid.2", "location", {"latitude": [], "longitude": {}}),
            ],
        )
    )
    with capture_logs() as logs:
        async with running_webhook(settings) as hook:
            waha = await hook.post_waha(_vcard_event("false_5511@c.us_v2"))
            cloud = await hook.post_cloud(document)
    assert waha.status == 200
    assert {k: waha.body[k] for k in ("enqueued", "skipped", "unparseable")} == {
        "enqueued": 0,
        "skipped": 1,
        "unparseable": 1,
    }
    assert cloud.status == 200 and cloud.body["enqueued"] == 2  # the rest of a batch counts
    skipped = [e for e in logs if e["event"] == "webhook.skipped"]
    assert [(e["reason"], e["log_level"]) for e in skipped] == [(UNPARSEABLE, "warning")]
    assert skipped[0]["detail"].startswith("IndexError at test_hostile_webhook.py:")
    assert [p["message_id"] for p in await queued_payloads(settings)] == ["wamid.1", "wamid.2"]


# --- fuzz: mutated deliveries never get a 500 -------------------------------------------------

_HOSTILE_VALUES: list[Any] = [
    None, True, 0, -1, 2**63, 1e308, float("nan"), "", " ", "\x00", "\ud800", "a\x00b",
    "\u2028", "FN", "FN;X", "x" * 5_000, [], {}, [[[[[]]]]], {"a": {"b": {"c": []}}},
    ["FN;CHARSET=UTF-8"], {"type": []}, "message", "text", "vcard", "failed", "loja-a", "111",
]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _mutated(seed: Any, rng: random.Random) -> Any:
    document = copy.deepcopy(seed)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(document))
        value = copy.deepcopy(rng.choice(_HOSTILE_VALUES))
        if not path:
            document = value
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = value
    return document


def _encoded(document: Any) -> bytes:
    # ensure_ascii keeps lone surrogates as \ud800 escapes; NaN is what Python's json accepts.
    return json.dumps(document).encode()


async def test_mutated_deliveries_never_get_a_500(
    settings: Settings,  # noqa: F811
    org: object,
) -> None:
    rng = random.Random(20_261_130)  # the same deliveries on every run
    waha_seeds = [
        waha_event(SESSION, "m1", "oi"),
        _vcard_event("m2"),
        waha_event(SESSION, "m3", "", extra={"location": {"latitude": 1, "longitude": 2}}),
    ]
    cloud_seeds = [
        cloud_delivery(
            cloud_value(
                PHONE_NUMBER_ID,
                [cloud_text("w1", "oi"), cloud_message("w2", "contacts", [{"name": {}}])],
                statuses=[cloud_status("out1", "failed")],
            )
        )
    ]
    statuses: dict[int, int] = {}
    async with running_webhook(settings) as hook:
        for round_number in range(80):
            waha = _mutated(rng.choice(waha_seeds), rng)
            cloud = _mutated(rng.choice(cloud_seeds), rng)
            for answer in (
                await hook.post_waha(raw=_encoded(waha)),
                await hook.post_cloud(raw=_encoded(cloud)),
            ):
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                assert answer.status == 200, (round_number, answer.body, waha, cloud)
    assert statuses == {200: 160}


async def test_hostile_profile_names_are_bounded_cleaned_and_never_a_500(
    settings: Settings,  # noqa: F811
    db: asyncpg.Connection,  # noqa: F811
    org: object,
) -> None:
    """A name of 200,000 characters, of controls only, of the wrong type, a flood of contact
    entries: the message is stored, the name kept clean and at most 256 characters, or none."""
    message = cloud_text("wamid.hostile-name", "oi", sender="5511944443333")
    value = cloud_value(PHONE_NUMBER_ID, [message], profile_names={"5511944443333": None})
    flood = [{"profile": {"name": "Falso"}, "wa_id": str(5511900000000 + n)} for n in range(2000)]
    value["contacts"] = [
        *flood,
        {"profile": {"name": "\u202e" * 10 + "Ana" + "x" * 200_000}, "wa_id": "5511944443333"},
    ]
    lonely = cloud_text("wamid.hostile-name-2", "oi", sender="5511944442222")
    controls = cloud_value(PHONE_NUMBER_ID, [lonely], profile_names={"5511944442222": None})
    controls["contacts"] = [{"profile": {"name": "\x00\x01\u200f\u2066"}, "wa_id": "5511944442222"}]
    long_one = cloud_text("wamid.hostile-name-3", "oi", sender="5511944440000")
    long_name = "\u202e" * 10 + "Ana" + "x" * 200_000
    long_value = cloud_value(
        PHONE_NUMBER_ID, [long_one], profile_names={"5511944440000": long_name}
    )
    wrong = waha_event(SESSION, "false_hostile_name", "oi", sender="5511944441111@c.us")
    wrong["payload"]["_data"] = {"notifyName": {"$gt": ""}, "pushName": ["Ana"]}
    async with running_webhook(settings) as hook:
        for answer in (
            await hook.post_cloud(cloud_delivery(value)),
            await hook.post_cloud(cloud_delivery(controls)),
            await hook.post_cloud(cloud_delivery(long_value)),
            await hook.post_waha(wrong),
        ):
            assert answer.status == 200 and answer.body["enqueued"] == 1, answer.body
    names = dict(await db.fetch("select contact_id, contact_name from conversations"))
    # Past the first 100 contact entries none is read: the flood names no one, the real
    # sender's entry (the 2001st) is not reached; nothing else is stored for them.
    assert names.pop("5511944440000") == "Ana" + "x" * 253  # overrides gone, 256 kept
    assert names == {"5511944443333": None, "5511944442222": None, "5511944441111": None}
