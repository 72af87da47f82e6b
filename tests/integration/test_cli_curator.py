"""`skillet curator run` through main(), and pin/unpin/restore through a test-only parser."""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from typing import Any

import asyncpg
import pytest

from cli.args import CliError
from cli.curator import add_usage_commands
from cli.main import main
from tests.integration.curator_support import NOW, days_ago, install, states
from tests.integration.support import create_org
from worker.settings import Settings


async def _main(*argv: str) -> int:
    """main() runs its own event loop (asyncio.run): give it a thread of its own."""
    return await asyncio.to_thread(main, list(argv))


def _last_json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


async def test_curator_run_one_org_json_and_dry_run(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45))
    await install(db, org, "mine", created_by="user", last_activity_at=days_ago(45))
    now = NOW.isoformat()

    args = ["curator", "run", "--org", str(org), "--now", now, "--json"]
    assert await _main(*args, "--dry-run") == 0
    dry = _last_json(capsys)
    assert dry["dry_run"] is True and dry["transitioned"] == [
        {"name": "old", "from": "active", "to": "stale"}
    ]
    assert await states(db, org) == {"old": "active", "mine": "active"}

    assert await _main(*args) == 0
    out = _last_json(capsys)
    assert {k: out[k] for k in ("organization_id", "transitioned", "skipped")} == {
        "organization_id": str(org),
        "transitioned": [{"name": "old", "from": "active", "to": "stale"}],
        "skipped": [{"name": "mine", "reason": "not-agent-created"}],
    }
    assert out["dry_run"] is False and out["ran_at"] == now
    assert await states(db, org) == {"old": "stale", "mine": "active"}
    replayed = await db.fetchval(
        "select replayed from curator_runs where organization_id = $1", org
    )
    assert replayed is True


async def test_curator_run_all_orgs_prints_runs(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    orgs = sorted([await create_org(db), await create_org(db)])
    await install(db, orgs[0], "old", last_activity_at=days_ago(120))
    assert await _main("curator", "run", "--now", NOW.isoformat(), "--json") == 0
    out = _last_json(capsys)
    assert [r["organization_id"] for r in out["runs"]] == [str(o) for o in orgs]
    assert out["runs"][0]["transitioned"] == [{"name": "old", "from": "active", "to": "archived"}]
    assert out["runs"][1] == {"organization_id": str(orgs[1]), "transitioned": [], "skipped": []}

    assert await _main("curator", "run", "--now", NOW.isoformat()) == 0
    assert capsys.readouterr().out.strip() == "2 org(s), 0 transitioned; 1 skipped"


def test_curator_run_unknown_org_is_a_one_line_error(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["curator", "run", "--org", str(uuid.uuid4()), "--json"]) == 1
    assert _last_json(capsys)["error"] == "organization_not_found"


def test_curator_run_refuses_a_naive_now(env: Settings) -> None:
    with pytest.raises(SystemExit):
        main(["curator", "run", "--now", "2026-11-30T10:00:00"])


def _usage_parser() -> argparse.ArgumentParser:
    """What cli/skills.py does with `add_usage_commands`, standalone."""
    parser = argparse.ArgumentParser(prog="skillet skills")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true")
    add_usage_commands(parser.add_subparsers(dest="skills_command", required=True), common)
    return parser


async def _run(settings: Settings, *argv: str) -> dict[str, Any]:
    args = _usage_parser().parse_args(argv)
    result: dict[str, Any] = await args.handler(args, settings)
    return result


async def test_pin_unpin_restore_handlers(settings: Settings, db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "frete", state="archived", last_activity_at=days_ago(200))
    pinned = await _run(settings, "pin", "frete", "--org", str(org), "--json")
    assert pinned == {
        "name": "frete",
        "pinned": True,
        "state": "archived",
        "message": "frete pinned (state archived)",
    }
    assert (await _run(settings, "unpin", "frete", "--org", str(org)))["pinned"] is False

    restored = await _run(settings, "restore", "frete", "--org", str(org))
    assert (restored["previous_state"], restored["state"]) == ("archived", "active")
    assert restored["last_activity_at"] is not None
    assert await states(db, org) == {"frete": "active"}

    with pytest.raises(Exception) as caught:
        await _run(settings, "restore", "fantasma", "--org", str(org))
    assert getattr(caught.value, "code", None) == "skill_not_installed"
    assert not isinstance(caught.value, CliError)
