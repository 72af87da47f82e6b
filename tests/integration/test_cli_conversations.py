"""`skillet conversations ...` and the agent's handoff texts from the shell: the CLI takes a
conversation over, replies (delivered by a real burst worker), gives it back, and sets what
the agent says when a customer asks for a person."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid

import asyncpg
import pytest

from cli.main import main
from conversation.holder import ConversationWakeup, run_conversation
from tests.integration.mode_support import AGENT_REPLY, CountingModel, RecordingSender
from tests.integration.support import enqueue, payload, run_burst
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511977770000"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


async def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    return await asyncio.to_thread(_run, capsys, *args)


async def test_the_cli_takes_over_replies_and_gives_back(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert (await _cli(capsys, "orgs", "create", "--name", "Padaria", "--id", org))[0] == 0
    model, sender = CountingModel(), RecordingSender()
    await enqueue(env, payload(uuid.UUID(org), "m1", "oi", CONTACT))
    await run_burst(env, model=model, sender=sender)
    code, listed = await _cli(capsys, "conversations", "list", "--org", org)
    assert code == 0
    [item] = listed["conversations"]  # type: ignore[misc]
    conversation = item["id"]
    assert item["mode"] == "agent" and item["last_message"]["author"] == "agent"

    code, taken = await _cli(capsys, "conversations", "takeover", conversation, "--org", org)
    assert code == 0 and (taken["mode"], taken["held_by"]) == ("human", "cli")
    await enqueue(env, payload(uuid.UUID(org), "m2", "tem pão?", CONTACT))
    await run_burst(env, model=model, sender=sender)
    assert sender.sent == [AGENT_REPLY]
    code, shown = await _cli(capsys, "conversations", "show", conversation, "--org", org)
    assert code == 0 and shown["unanswered"] == 1
    code, waiting = await _cli(capsys, "conversations", "list", "--org", org, "--mode", "human")
    assert code == 0 and len(waiting["conversations"]) == 1  # type: ignore[arg-type]

    code, sent = await _cli(
        capsys, "conversations", "reply", conversation, "--org", org, "--text", "Tem sim!"
    )
    assert code == 0 and sent["author"] == "person"
    await run_burst(env, model=model, sender=sender)
    assert sender.sent == [AGENT_REPLY, "Tem sim!"]
    code, refused = await _cli(
        capsys, "conversations", "reply", conversation, "--org", org, "--text", "  "
    )
    assert code == 1 and refused["error"] == "reply_text_invalid"

    await enqueue(env, payload(uuid.UUID(org), "m3", "e bolo?", CONTACT))
    await run_burst(env, model=model, sender=sender)
    code, back = await _cli(
        capsys, "conversations", "release", conversation, "--org", org, "--answer-pending"
    )
    assert code == 0 and back["mode"] == "agent"
    await run_burst(env, model=model, sender=sender)
    assert sender.sent[-1] == AGENT_REPLY and len(model.requests) == 2
    code, missing = await _cli(capsys, "conversations", "show", str(uuid.uuid4()), "--org", org)
    assert code == 1 and missing["error"] == "conversation_not_found"
    actions = await db.fetch("select actor, action from audit_log order by id")
    assert [tuple(r) for r in actions] == [
        ("cli", "conversation.takeover"),
        ("cli", "conversation.reply"),
        ("cli", "conversation.release"),
    ]


async def test_the_agents_handoff_acknowledgement_is_a_setting(
    env: Settings,
    db: asyncpg.Connection,
    capsys: pytest.CaptureFixture[str],
    resources: Resources,
) -> None:
    org = str(uuid.uuid4())
    assert (await _cli(capsys, "orgs", "create", "--name", "Padaria", "--id", org))[0] == 0
    code, agent = await _cli(
        capsys, "agents", "add", "--org", org, "--name", "Bia", "--prompt", "Você é a Bia."
    )
    assert code == 0 and agent["handoff_ack"] is None
    code, changed = await _cli(
        capsys,
        "agents", "set", "--agent", str(agent["id"]),
        "--handoff-ack", " Já chamo alguém! ",
        "--handoff-wait-notice", "Ainda chamando...",
    )  # fmt: skip
    assert code == 0
    assert (changed["handoff_ack"], changed["handoff_wait_notice"]) == (
        "Já chamo alguém!",
        "Ainda chamando...",
    )
    code, bad = await _cli(
        capsys, "agents", "set", "--agent", str(agent["id"]), "--handoff-ack", " "
    )
    assert code == 1 and bad["error"] == "invalid_handoff_text"

    sender = RecordingSender()
    deps = dataclasses.replace(
        resources.turn_deps, sender=sender, asks_for_person=lambda text: "pessoa" in text
    )
    await enqueue(env, payload(uuid.UUID(org), "m1", "quero uma pessoa", CONTACT))
    conversation = await db.fetchval("select id from conversations")
    await run_conversation(deps, ConversationWakeup(uuid.UUID(org), conversation), job_id="j1")
    assert sender.sent == ["Já chamo alguém!"]
