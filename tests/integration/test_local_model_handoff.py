"""The offline `local` model never promises a person it does not call: a customer who asks
for one, in a real turn (the worker's own composition, the agent loop, the tool, the reply
commit), ends up waiting for a person, and the reply says so."""

from __future__ import annotations

import dataclasses
import uuid

import asyncpg

from conversation.holder import ConversationWakeup, run_conversation
from tests.integration.mode_support import RecordingSender
from tests.integration.support import create_org, enqueue, payload
from turn.local_model import HANDOFF_REASON, HANDOFF_REPLY, NO_SKILL_REPLY
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511977771111"
MODE = "select mode, mode_cause, mode_reason from conversations where id = $1"


async def _turn(
    settings: Settings, resources: Resources, db: asyncpg.Connection, org: uuid.UUID, text: str
) -> tuple[list[str], tuple[str, str | None, str | None]]:
    sender = RecordingSender()
    # The conversation's own detector would hand these off before any model runs; it is off
    # here so the request reaches the model, as one the detector misses would.
    deps = dataclasses.replace(
        resources.turn_deps, sender=sender, asks_for_person=lambda text: False
    )
    await enqueue(settings, payload(org, f"m-{uuid.uuid4().hex[:8]}", text, CONTACT))
    conversation = await db.fetchval("select id from conversations where organization_id = $1", org)
    await run_conversation(deps, ConversationWakeup(org, conversation), job_id=uuid.uuid4().hex)
    mode = await db.fetchrow(MODE, conversation)
    return sender.sent, (mode["mode"], mode["mode_cause"], mode["mode_reason"])


async def test_the_local_model_hands_off_when_asked_for_a_person_and_promises_nothing_else(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db, "Padaria")
    sent, mode = await _turn(settings, resources, db, org, "qual o preço do bolo?")
    # Nothing to answer from: it says so and offers a person, promising nothing.
    assert sent == [NO_SKILL_REPLY] and mode[0] == "agent"
    assert "encaminhar" not in NO_SKILL_REPLY

    sent, mode = await _turn(settings, resources, db, org, "Quero falar com um ATENDENTE")
    assert mode == ("waiting", "tool", HANDOFF_REASON)
    assert sent == [HANDOFF_REPLY]
