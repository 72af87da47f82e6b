"""`skillet orgs set --consolidation`, `curator consolidate` and `curator proposals` via main()."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import pytest

from cli.main import main
from tests.integration.test_consolidation import _org
from worker.resources import Resources
from worker.settings import Settings


async def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    """main() runs its own event loop (asyncio.run): give it a thread of its own."""
    code = await asyncio.to_thread(main, [*argv, "--json"])
    lines = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(lines[-1]) if lines else None


async def test_opt_in_consolidate_and_decide_from_the_cli(
    env: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    org = str(await _org(db, resources.store, mode="off"))
    code, out = await _run(capsys, "curator", "consolidate", "--org", org, "--force")
    assert code == 0 and (out["ran"], out["skipped_reason"]) == (False, "off")

    code, out = await _run(capsys, "orgs", "set", "--org", org, "--consolidation", "review")
    assert code == 0 and out["consolidation"] == "review"
    assert out["changed"] == ["consolidation: off -> review"]
    audit = await db.fetchval(
        "select detail from audit_log where action = 'settings.consolidation'"
    )
    assert audit == {"from": "off", "to": "review"}

    # Five small skills: under every gate of the defaults.
    code, out = await _run(capsys, "curator", "consolidate", "--org", org)
    assert out["skipped_reason"] == "no_pressure"
    monkeypatch.setenv("SKILLET_CONSOLIDATE_MIN_SKILLS", "2")
    code, dry = await _run(capsys, "curator", "consolidate", "--org", org, "--dry-run")
    assert code == 0 and dry["ran"] is True and dry["proposals"][0]["id"] is None
    assert set(dry) >= {
        "organization_id",
        "ran",
        "skipped_reason",
        "index_bytes",
        "links",
        "proposals",
    }
    assert set(dry["links"][0]) == {"a", "b", "score", "backend"}
    code, out = await _run(capsys, "curator", "consolidate", "--org", org)
    [proposal] = out["proposals"]
    assert set(proposal) == {
        "id",
        "umbrella",
        "absorbs",
        "index_bytes_before",
        "index_bytes_after",
        "rewrite",
    }
    assert proposal["rewrite"] == "kept_deterministic"  # the org's agent has no real model

    code, listed = await _run(capsys, "curator", "proposals", "list", "--org", org)
    assert [p["id"] for p in listed["proposals"]] == [proposal["id"]]
    code, shown = await _run(capsys, "curator", "proposals", "show", proposal["id"], "--org", org)
    assert code == 0 and "## Skills incorporadas" in shown["diff"]["skill_md"]
    assert {m["name"]: m["uses_30d"] for m in shown["members"]}["trocar-produto"] == 9

    code, approved = await _run(
        capsys, "curator", "proposals", "approve", proposal["id"], "--org", org
    )
    assert code == 0 and approved["status"] == "approved"
    code, again = await _run(capsys, "curator", "proposals", "reject", proposal["id"], "--org", org)
    assert code != 0 and again["error"] == "proposal_decided"

    code, listing = await _run(capsys, "skills", "list", "--org", org)
    states = {s["name"]: (s["state"], s.get("absorbed_into")) for s in listing["installed"]}
    assert states["politica-de-troca"] == ("archived", "trocar-produto")
    assert states["trocar-produto"] == ("active", None)

    code, restored = await _run(capsys, "skills", "restore", "politica-de-troca", "--org", org)
    assert code == 0 and restored["absorbed_into"] == "trocar-produto"
    assert "absorbed into trocar-produto" in restored["message"]
