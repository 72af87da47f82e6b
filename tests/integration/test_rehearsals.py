"""Rehearsals through the running API as skillet_api: counts on a seeded history (a catalog
skill's intent model included), the period and its bounds, one at a time per org (429), the
approve routes' confirmation (409) and the CLI."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio

from api.keys import Role
from cli.main import main
from core.db import create_pool
from core.object_store import ObjectStore
from rehearsal.changes import Change
from rehearsal.queries import rehearsal_lock_key
from rehearsal.run import run_rehearsal
from skillet_data import CATALOG_DIR
from skills.catalog_seed import load_catalog_package
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.rehearsal_support import (
    bulk_messages,
    conversation,
    customer_messages,
    pending_draft,
    pending_proposal,
)
from tests.integration.support import create_org, publish
from worker.resources import Resources
from worker.settings import Settings

NOW = datetime.now(UTC)


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def _org(db: asyncpg.Connection, store: ObjectStore) -> uuid.UUID:
    """Skills frete (probe: entrega), pix, troca and objecao-preco as the catalog ships it
    (its intent model applies); a month and a half of customer bursts."""
    org = await create_org(db)
    await publish(db, store, org, "frete", keywords=["frete"], probes=["entrega"])
    await publish(db, store, org, "pix", keywords=["pix", "chave pix"])
    await publish(db, store, org, "troca", keywords=["troca", "devolucao"])
    price = load_catalog_package(CATALOG_DIR / "objecao-preco")
    await publish(
        db,
        store,
        org,
        price.name,
        keywords=price.matcher.any_keywords,
        probes=price.matcher.probe_keywords,
        body=price.body,
        description=price.description,
    )
    day = timedelta(days=1)
    talk = await conversation(db, org, "5511900000001")
    for texts, ago in (
        (["qual o valor do frete?"], 1),
        (["vocês aceitam pix?"], 2),
        (["quero fazer uma troca"], 3),
        (["quando chega a entrega?"], 4),  # only frete's probe
        (["faz 3x?"], 5),  # only objecao-preco's intent model
        (["bom dia"], 6),
        (["oi", "dá pra pagar no pix?"], 7),  # one burst, one reply
        (["pix ainda vale?"], 45),  # outside 30 days
    ):
        await customer_messages(db, org, talk, texts, NOW - ago * day)
    # A conversation a person holds: no reply marked it; its run is one burst.
    held = await conversation(db, org, "5511900000002")
    await customer_messages(
        db, org, held, ["boa tarde", "e a troca?"], NOW - 8 * day, answered=False
    )
    return org


async def test_counts_on_the_orgs_own_history(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store)
    viewer = await create_key(db, org, Role.VIEWER)

    gone = await api.call("POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix"})
    assert gone.status == 200, gone.body
    body = gone.body
    assert (body["messages"], body["days"]) == (8, 30)  # 10 messages in 30 days, 8 bursts
    assert (body["gained"], body["lost"], body["moved"], body["probes_served"]) == (0, 2, 0, 0)
    lost = {s["text"]: (s["before"], s["after"]) for s in body["samples"]["lost"]}
    assert lost == {"vocês aceitam pix?": (["pix"], []), "oi\ndá pra pagar no pix?": (["pix"], [])}
    assert body["index_bytes_after"] < body["index_bytes_before"]
    assert all(uuid.UUID(s["message_id"]) for s in body["samples"]["lost"])

    longer = await api.call(
        "POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix", "days": 60}
    )
    assert (longer.body["messages"], longer.body["lost"], longer.body["days"]) == (9, 3, 60)

    intent = await api.call(
        "POST", "/v1/rehearsals", viewer, json_body={"uninstall": "objecao-preco"}
    )
    assert intent.body["lost"] == 1
    assert intent.body["samples"]["lost"][0]["text"] == "faz 3x?"

    typed = {
        "name": "entrega",
        "description": "Prazos de entrega",
        "body": "Entregamos em 3 dias úteis.",
        "keywords": "chega, bom dia",
        "probe_keywords": "",
    }
    new = await api.call("POST", "/v1/rehearsals", viewer, json_body={"skill": typed})
    assert new.status == 200, new.body
    assert (new.body["gained"], new.body["probes_served"], new.body["lost"]) == (2, 1, 0)
    assert {s["text"] for s in new.body["samples"]["gained"]} == {
        "quando chega a entrega?",
        "bom dia",
    }
    # A new version of an installed skill: troca answers to "frete" too -> one moved.
    version = {**typed, "name": "troca", "keywords": "troca, devolucao, frete"}
    moved = await api.call("POST", "/v1/rehearsals", viewer, json_body={"skill": version})
    assert (moved.body["moved"], moved.body["gained"], moved.body["lost"]) == (1, 0, 0)

    await pending_draft(db, org, "frete", ["frete", "entrega"])
    draft = await api.call("POST", "/v1/rehearsals", viewer, json_body={"draft": "frete"})
    assert (draft.body["gained"], draft.body["probes_served"]) == (1, 1)


async def test_refusals_and_bounds(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store)
    viewer = await create_key(db, org, Role.VIEWER)
    call = api.call
    assert (
        await call("POST", "/v1/rehearsals", None, json_body={"uninstall": "pix"})
    ).status == 401
    for days in (0, 91, "30"):
        answer = await call(
            "POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix", "days": days}
        )
        assert answer.status == 422, (days, answer.body)
    both = await call(
        "POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix", "draft": "x"}
    )
    assert (both.status, both.code) == (422, "invalid_input")
    none = await call("POST", "/v1/rehearsals", viewer, json_body={})
    assert (none.status, none.code) == (422, "invalid_input")
    missing = await call("POST", "/v1/rehearsals", viewer, json_body={"uninstall": "nada"})
    assert (missing.status, missing.code) == (404, "skill_not_installed")
    no_draft = await call("POST", "/v1/rehearsals", viewer, json_body={"draft": "nada"})
    assert (no_draft.status, no_draft.code) == (404, "draft_not_found")
    no_proposal = await call(
        "POST", "/v1/rehearsals", viewer, json_body={"proposal": str(uuid.uuid4())}
    )
    assert (no_proposal.status, no_proposal.code) == (404, "proposal_not_found")
    bad = {"name": "Nome Ruim", "description": "d", "body": "b", "keywords": "x"}
    refused = await call("POST", "/v1/rehearsals", viewer, json_body={"skill": bad})
    assert (refused.status, refused.code) == (422, "skill_frontmatter_invalid")
    probes_only = {"name": "so-sonda", "description": "d", "body": "b", "keywords": "",
                   "probe_keywords": "pix"}  # fmt: skip
    refused = await call("POST", "/v1/rehearsals", viewer, json_body={"skill": probes_only})
    assert (refused.status, refused.code) == (422, "skill_frontmatter_invalid")


async def test_one_rehearsal_per_org_at_a_time(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    org = await _org(db, resources.store)
    other = await _org(db, resources.store)
    viewer = await create_key(db, org, Role.VIEWER)
    other_viewer = await create_key(db, other, Role.VIEWER)
    # Another process's rehearsal of the org: its lock, held on a connection of its own.
    holder = await asyncpg.connect(settings.database_url)
    try:
        assert await holder.fetchval("select pg_try_advisory_lock($1)", rehearsal_lock_key(org))
        busy = await api.call("POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix"})
        assert (busy.status, busy.code) == (429, "rehearsal_busy")
        free = await api.call(
            "POST", "/v1/rehearsals", other_viewer, json_body={"uninstall": "pix"}
        )
        assert free.status == 200
        await holder.execute("select pg_advisory_unlock($1)", rehearsal_lock_key(org))
    finally:
        await holder.close()
    again = await api.call("POST", "/v1/rehearsals", viewer, json_body={"uninstall": "pix"})
    assert again.status == 200


async def test_a_huge_history_is_capped_to_the_newest(
    db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, org, "pix", keywords=["pix"])
    # 300 bursts in the period: the newest 100 hold "pix", the older ones do not.
    texts = ["aceita pix?"] * 100 + ["bom dia"] * 200
    await bulk_messages(db, org, texts, NOW - timedelta(minutes=1))

    async def uninstall_pix(conn: asyncpg.Connection, installed: object) -> Change:
        return Change(removes=("pix",))

    pool = await create_pool(settings.database_url, max_size=2, app_role="skillet_api")
    try:
        capped = await run_rehearsal(
            pool, org, uninstall_pix, days=30, now=NOW, max_matched=3, max_messages=150
        )
        whole = await run_rehearsal(pool, org, uninstall_pix, days=30, now=NOW, max_matched=3)
    finally:
        await pool.close()
    assert (capped.outcome.messages, capped.outcome.lost) == (150, 100)
    assert (whole.outcome.messages, whole.outcome.lost) == (300, 100)
    assert len(whole.outcome.lost_samples) == 50  # every lost one listed, up to 50


async def test_approvals_that_lose_messages_ask_for_a_confirmation(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store)
    editor = await create_key(db, org, Role.EDITOR)
    # A draft of pix without its keyword: two bursts would match nothing.
    await pending_draft(db, org, "pix", ["cartao"])
    asked = await api.call("POST", "/v1/drafts/pix/approve", editor)
    assert (asked.status, asked.code) == (409, "confirmation_required"), asked.body
    assert asked.body["reasons"] == ["loses_messages"]
    assert "deixaria de reconhecer 2 mensagens" in asked.body["message"]
    still = await api.call("POST", "/v1/drafts/pix/approve", editor, json_body={"confirm": True})
    assert (still.status, still.code) == (422, "invalid_input")  # "create" or "merge" only
    done = await api.call("POST", "/v1/drafts/pix/approve", editor, json_body={"confirm": "create"})
    assert done.status == 200, done.body
    # A draft that loses nothing needs no confirmation.
    await pending_draft(db, org, "frete", ["frete", "entrega"])
    assert (await api.call("POST", "/v1/drafts/frete/approve", editor)).status == 200
    gone = await api.call("POST", "/v1/drafts/nada/approve", editor)
    assert (gone.status, gone.code) == (404, "draft_not_found")

    # A proposal whose umbrella drops the absorbed skill's keywords: troca's bursts lost.
    proposal = await pending_proposal(db, org, "frete", "troca", ["frete"])
    asked = await api.call("POST", f"/v1/proposals/{proposal}/approve", editor)
    assert (asked.status, asked.code) == (409, "confirmation_required"), asked.body
    assert asked.body["reasons"] == ["loses_messages"]
    rehearsed = await api.call(
        "POST", "/v1/rehearsals", editor, json_body={"proposal": str(proposal)}
    )
    # troca's two bursts, and the entrega burst the approved frete draft had gained.
    assert rehearsed.body["lost"] == asked.body["lost"] == 3
    done = await api.call(
        "POST", f"/v1/proposals/{proposal}/approve", editor, json_body={"confirm": True}
    )
    assert done.status == 200, done.body
    decided = await api.call("POST", f"/v1/proposals/{proposal}/approve", editor)
    assert (decided.status, decided.code) == (409, "proposal_decided")


async def test_the_cli_rehearses(
    db: asyncpg.Connection,
    resources: Resources,
    env: Settings,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    org = await _org(db, resources.store)

    async def cli(*argv: str) -> tuple[int, str, str]:
        code = await asyncio.to_thread(main, list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = await cli(
        "skills", "rehearse", "--org", str(org), "--uninstall", "pix", "--json"
    )
    body = json.loads(out)
    assert (code, body["lost"], body["messages"], body["days"]) == (0, 2, 8, 30)

    skill_md = tmp_path / "SKILL.md"
    skill_md.write_text(
        "---\nname: entrega\ndescription: Prazos\nmetadata:\n"
        '  skillet-keywords: "chega, bom dia"\n---\nEntregamos em 3 dias.\n'
    )
    args = ("skills", "rehearse", "--org", str(org), "--skill-file", str(skill_md))
    code, out, _ = await cli(*args, "--days", "60")
    assert code == 0 and "ganharia 2" in out and "60 dias" in out, out
    code, _, err = await cli(
        "skills", "rehearse", "--org", str(org), "--uninstall", "pix", "--days", "0"
    )
    assert code != 0 and "rehearsal_days_invalid" in err
    with pytest.raises(SystemExit):  # argparse: exactly one change
        await cli("skills", "rehearse", "--org", str(org), "--draft", "a", "--uninstall", "b")
