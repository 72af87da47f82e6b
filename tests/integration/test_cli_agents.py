"""`skillet agents add|list|set`: who answers, with which persona and model."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import asyncpg
import pytest

from cli.main import main
from tests.integration.support import enqueue, payload, result_of, run_burst
from turn.model import ModelRequest, ModelResponse
from worker.settings import Settings


class RecordingModel:
    def __init__(self) -> None:
        self.prefixes: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.prefixes.append(request.prefix)
        return ModelResponse(text="oi!")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def _org(capsys: pytest.CaptureFixture[str]) -> str:
    org = str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Padaria", "--id", org)[0] == 0
    return org


async def test_an_agent_added_and_changed_by_the_cli_answers_the_next_turn(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    org = await asyncio.to_thread(_org, capsys)
    code, agent = await asyncio.to_thread(
        _run, capsys, "agents", "add", "--org", org, "--name", "Bia", "--prompt", "Você é a Bia."
    )
    assert code == 0 and agent["model_provider"] is None
    model = RecordingModel()
    await enqueue(env, payload(uuid.UUID(org), "m1", "oi"))
    await run_burst(env, model=model)
    assert "Você é a Bia." in model.prefixes[0]

    persona = tmp_path / "persona.md"
    persona.write_text("Você é a Bia, da Padaria Pão Quente.\n", encoding="utf-8")
    agent_id = str(agent["id"])
    code, changed = await asyncio.to_thread(
        _run, capsys, "agents", "set", "--agent", agent_id, "--prompt-file", str(persona)
    )
    assert code == 0 and changed["system_prompt"] == "Você é a Bia, da Padaria Pão Quente."
    await enqueue(env, payload(uuid.UUID(org), "m2", "oi"))
    await run_burst(env, model=model)
    assert "Padaria Pão Quente" in model.prefixes[1]

    # On the `local` provider the worker's built-in model answers, not the default one.
    code, local = await asyncio.to_thread(
        _run, capsys, "agents", "set", "--agent", agent_id, "--model-provider", "local"
    )
    assert code == 0 and (local["model_provider"], local["model_name"]) == ("local", None)
    [job] = await enqueue(env, payload(uuid.UUID(org), "m3", "oi"))
    await run_burst(env, model=model)
    assert len(model.prefixes) == 2
    assert (await result_of(env, job))["usage"]["model"] == "local"

    code, listed = await asyncio.to_thread(_run, capsys, "agents", "list", "--org", org)
    assert code == 0 and [a["id"] for a in listed["agents"]] == [agent_id]  # type: ignore[attr-defined]
    code, back = await asyncio.to_thread(
        _run, capsys, "agents", "set", "--agent", agent_id, "--default-model"
    )
    assert code == 0 and back["model_provider"] is None

    code, seeing = await asyncio.to_thread(
        _run, capsys, "agents", "set", "--agent", agent_id, "--vision", "on"
    )
    assert code == 0 and seeing["vision"] is True and seeing["model_provider"] is None
    code, blind = await asyncio.to_thread(
        _run, capsys, "agents", "set", "--agent", agent_id, "--vision", "off"
    )
    assert code == 0 and blind["vision"] is False


def test_bad_agent_input_is_refused_with_what_to_fix(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = _org(capsys)
    add = ["agents", "add", "--org", org, "--name", "Bia", "--prompt", "Você é a Bia."]
    cases = {
        "invalid_model": [*add, "--model-provider", "gemini"],
        "organization_not_found": ["agents", "add", "--org", str(uuid.uuid4()), *add[4:]],
        "invalid_prompt": ["agents", "add", "--org", org, "--name", "Bia", "--prompt", "   "],
        "invalid_name": ["agents", "add", "--org", org, "--name", "", "--prompt", "x"],
    }
    for error, args in cases.items():
        code, refused = _run(capsys, *args)
        assert (code, refused["error"]) == (1, error), args
    _, named = _run(capsys, *add, "--model-provider", "anthropic")
    assert named["error"] == "invalid_model" and "--model-name" in str(named["message"])
    code, agent = _run(capsys, *add)
    agent_id = str(agent["id"])
    assert code == 0
    _, nothing = _run(capsys, "agents", "set", "--agent", agent_id)
    assert nothing["error"] == "nothing_to_change"
    _, missing = _run(capsys, "agents", "set", "--agent", str(uuid.uuid4()), "--name", "X")
    assert missing["error"] == "agent_not_found"
    _, unnamed = _run(capsys, "agents", "set", "--agent", agent_id, "--model-name", "gpt-4.1")
    assert unnamed["error"] == "invalid_model"  # a model name needs a provider
    # Refusals changed nothing.
    _, listed = _run(capsys, "agents", "list", "--org", org)
    assert [(a["name"], a["model_provider"]) for a in listed["agents"]] == [("Bia", None)]  # type: ignore[attr-defined]
