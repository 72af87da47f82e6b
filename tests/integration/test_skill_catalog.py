"""What a turn loads: installed, non-archived skills, fresh after any pointer change."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg

from conversation.holder import ConversationWakeup, run_conversation
from core.tenancy import org_connection
from inbox.store import store_inbound
from skills.queries import delete_skill_pointer
from tests.integration.support import create_org, payload, publish
from worker.resources import Resources


async def _turn(resources: Resources, org: uuid.UUID, text: str) -> tuple[list[str], list[str]]:
    message = payload(org, f"m-{uuid.uuid4()}", text)
    stored = await store_inbound(resources.pool, message, received_at=message.sent_at)
    wakeup = ConversationWakeup(org, stored.conversation_id, stored.inbound_id, message.message_id)
    outcome = await run_conversation(resources.turn_deps, wakeup, job_id="t")
    return [f"{n}@{v}" for n, v in outcome.matched], list(outcome.probes)


async def test_cache_is_reused_while_nothing_changes(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    catalog = resources.turn_deps.catalog
    for _ in range(5):
        await _turn(resources, org, "qual o frete?")
    assert catalog.loads == 1


async def test_turns_that_miss_together_share_one_load(
    db: asyncpg.Connection, resources: Resources
) -> None:
    """A worker's first jobs of an org all miss its catalog at once: one load serves them."""
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    catalog = resources.turn_deps.catalog
    before = catalog.loads

    async def one_turns_read() -> list[str]:
        async with org_connection(resources.pool, org) as conn:
            snapshot = await catalog.get(conn, org)
        return [s.name for s in snapshot.skills]

    seen = await asyncio.gather(*(one_turns_read() for _ in range(4)))
    assert seen == [["frete"]] * 4
    assert catalog.loads == before + 1


async def test_customize_install_uninstall_seen_by_the_next_turn(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    v1 = await publish(db, resources.store, org, "frete", keywords=["frete"])
    assert (await _turn(resources, org, "frete?"))[0] == [f"frete@{v1}"]

    v2 = await publish(db, resources.store, org, "frete", keywords=["frete"], body="novo texto")
    assert (await _turn(resources, org, "frete?"))[0] == [f"frete@{v2}"]

    v3 = await publish(db, resources.store, org, "boleto", keywords=["boleto"])
    assert (await _turn(resources, org, "boleto e frete"))[0] == [
        f"boleto@{v3}",
        f"frete@{v2}",
    ]

    await delete_skill_pointer(db, org, "frete")
    assert (await _turn(resources, org, "boleto e frete"))[0] == [f"boleto@{v3}"]


async def test_archived_skills_are_not_loaded_and_restored_ones_are(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    version = await publish(db, resources.store, org, "frete", keywords=["frete"], probes=["cep"])
    await db.execute(
        "insert into skill_usage (organization_id, skill_name, created_by, state) "
        "values ($1, 'frete', 'agent', 'archived')",
        org,
    )
    assert await _turn(resources, org, "frete pro cep") == ([], [])
    snapshot = await resources.turn_deps.catalog.get(db, org)
    assert "frete" not in snapshot.index_text

    await db.execute("update skill_usage set state = 'active' where organization_id = $1", org)
    assert (await _turn(resources, org, "frete"))[0] == [f"frete@{version}"]


async def test_an_org_never_loads_another_orgs_or_platform_skills(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org_a = await create_org(db, "A")
    org_b = await create_org(db, "B")
    await publish(db, resources.store, org_a, "segredo-a", keywords=["frete"])
    await publish(db, resources.store, None, "catalogo", keywords=["frete"], created_by="platform")
    await publish(db, resources.store, org_b, "frete-b", keywords=["outra"])

    matched, probes = await _turn(resources, org_b, "qual o frete?")
    assert matched == [] and probes == []
    snapshot = await resources.turn_deps.catalog.get(db, org_b)
    assert [s.name for s in snapshot.skills] == ["frete-b"]
    assert "segredo-a" not in snapshot.index_text and "catalogo" not in snapshot.index_text
