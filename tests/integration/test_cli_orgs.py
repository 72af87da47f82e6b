"""`skillet orgs list` and `orgs set` with any subset of its options, each change audited."""

from __future__ import annotations

import json
import uuid

import asyncpg
import pytest

from cli.main import main
from worker.settings import Settings


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def test_list_shows_every_org_oldest_first(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Padaria", "--id", first)[0] == 0
    assert _run(capsys, "orgs", "create", "--name", "Clínica", "--id", second)[0] == 0

    code, listed = _run(capsys, "orgs", "list")

    assert code == 0
    orgs = listed["organizations"]
    assert isinstance(orgs, list)
    assert [(o["id"], o["name"], o["agent_authoring"]) for o in orgs] == [
        (first, "Padaria", "review"),
        (second, "Clínica", "review"),
    ]
    assert main(["orgs", "list"]) == 0
    assert f"{second}  Clínica  agent_authoring=review" in capsys.readouterr().out


def test_set_changes_only_the_options_given_and_audits_each(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Padaria", "--id", org)[0] == 0

    code, shown = _run(capsys, "orgs", "set", "--org", org)
    assert code == 0 and shown["changed"] == [] and shown["name"] == "Padaria"

    code, renamed = _run(capsys, "orgs", "set", "--org", org, "--name", "Padaria Pão Quente")
    assert code == 0
    assert (renamed["name"], renamed["agent_authoring"]) == ("Padaria Pão Quente", "review")

    code, both = _run(
        capsys, "orgs", "set", "--org", org, "--agent-authoring", "auto", "--name", "Pão Quente"
    )
    assert code == 0
    assert (both["name"], both["agent_authoring"]) == ("Pão Quente", "auto")
    assert both["previous"] == {"name": "Padaria Pão Quente", "agent_authoring": "review"}

    code, audit = _run(capsys, "audit", "--org", org)
    entries = audit["entries"]
    assert code == 0 and isinstance(entries, list)
    assert [(e["action"], e["detail"]) for e in reversed(entries)] == [
        ("settings.name", {"from": "Padaria", "to": "Padaria Pão Quente"}),
        ("settings.name", {"from": "Padaria Pão Quente", "to": "Pão Quente"}),
        ("settings.agent_authoring", {"from": "review", "to": "auto"}),
    ]


def test_set_refuses_an_unknown_org_and_a_bad_name(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    code, refused = _run(capsys, "orgs", "set", "--org", str(uuid.uuid4()), "--name", "X")
    assert code == 1 and refused["error"] == "organization_not_found"
    with pytest.raises(SystemExit):
        main(["orgs", "set", "--org", str(uuid.uuid4()), "--name", "   "])


def test_set_turns_satisfaction_on_with_its_buttons_and_refuses_a_long_one(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Salão", "--id", org)[0] == 0
    code, changed = _run(
        capsys,
        "orgs", "set", "--org", org, "--satisfaction", "on",
        "--satisfaction-buttons", "Amei", "Ok", "Não gostei",
    )  # fmt: skip
    assert code == 0
    assert changed["previous"]["satisfaction"] == "off"
    assert changed["previous"]["satisfaction_buttons"] == ["😀 Ótimo", "😐 Ok", "🙁 Ruim"]
    assert "satisfaction: off -> on" in changed["changed"]
    code, refused = _run(
        capsys, "orgs", "set", "--org", org, "--satisfaction-buttons", "x" * 21, "b", "c"
    )
    assert code == 1 and refused["error"] == "satisfaction_buttons_invalid"
