"""Usage recorded by real turns, and archiving/restoring seen by the very next turn."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg

from core.clock import system_clock
from skills.catalog import (
    ImportStatus,
    import_skill_package,
    install_catalog_skill,
    list_skills,
    uninstall_skill,
)
from skills.catalog_seed import DEFAULT_CATALOG_DIR, seed_catalog
from skills.curator.run import run_curator
from skills.usage import UsageStore
from tests.integration.curator_support import options, states
from tests.integration.support import create_org, enqueue, payload, publish, result_of, run_burst
from tests.package_builders import skill_zip
from worker.resources import Resources
from worker.settings import Settings


async def _seed(db: asyncpg.Connection, resources: Resources) -> uuid.UUID:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "segunda-via",
        keywords=["segunda via"],
        probes=["pagamento"],
        references={"references/prazos.md": "Reemissão sem custo em até 30 dias."},
        created_by="agent",
    )
    await publish(db, resources.store, org, "frete", keywords=["frete"], created_by="agent")
    return org


async def _turn(settings: Settings, org: uuid.UUID, text: str) -> dict[str, object]:
    [job] = await enqueue(settings, payload(org, f"m-{uuid.uuid4()}", text))
    await run_burst(settings)  # uses and views are counted by each reply's commit
    result: dict[str, object] = await result_of(settings, job)
    return result


async def test_hard_match_is_a_use_and_a_served_reference_is_a_view(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _seed(db, resources)
    before = datetime.now(UTC)
    result = await _turn(settings, org, "segunda via, por favor")
    assert result["tools"] == ["read_skill_reference"]
    await _turn(settings, org, "qual o frete?")
    await _turn(settings, org, "meu pagamento caiu?")  # a probe only: not a use
    rows = await db.fetch(
        "select skill_name, use_count, view_count, patch_count, last_used_at, last_viewed_at, "
        "last_activity_at, created_by from skill_usage where organization_id = $1 "
        "order by skill_name",
        org,
    )
    got = {r["skill_name"]: (r["use_count"], r["view_count"], r["patch_count"]) for r in rows}
    assert got == {"frete": (1, 0, 0), "segunda-via": (1, 1, 0)}
    # The read is counted per file too, in the same commit, never in a skill version.
    reads = await db.fetch(
        "select skill_name, path, read_count, last_read_at from skill_file_reads "
        "where organization_id = $1",
        org,
    )
    assert [(r["skill_name"], r["path"], r["read_count"]) for r in reads] == [
        ("segunda-via", "references/prazos.md", 1)
    ]
    assert reads[0]["last_read_at"] >= before
    for row in rows:
        assert row["created_by"] == "agent"
        assert row["last_activity_at"] >= before
        assert row["last_activity_at"] == max(
            t for t in (row["last_used_at"], row["last_viewed_at"]) if t is not None
        )
    # The view never lands in skill_activations (its trigger column is hard|probe).
    triggers = await db.fetch(
        "select trigger, count(*) from skill_activations where organization_id = $1 "
        "group by trigger order by trigger",
        org,
    )
    assert [(r["trigger"], r["count"]) for r in triggers] == [("hard", 2), ("probe", 1)]


async def test_an_archived_skill_leaves_the_next_turn_and_restore_brings_it_back(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _seed(db, resources)
    first = await _turn(settings, org, "qual o frete?")
    assert [m["name"] for m in first["matched"]] == ["frete"]  # type: ignore[attr-defined]

    # 100 days later the curator archives both (frete used then, segunda-via never: untouched).
    report = await run_curator(db, org, options(datetime.now(UTC) + timedelta(days=100)))
    assert [t.to_json() for t in report.transitioned] == [
        {"name": "frete", "from": "active", "to": "archived"}
    ]
    gone = await _turn(settings, org, "qual o frete?")
    assert gone["matched"] == []

    await UsageStore(system_clock).restore(db, org, "frete")
    assert await states(db, org) == {"frete": "active"}
    back = await _turn(settings, org, "qual o frete?")
    assert [m["name"] for m in back["matched"]] == ["frete"]  # type: ignore[attr-defined]


async def test_importing_an_archived_skill_again_brings_it_back_to_the_next_turn(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _seed(db, resources)
    await _turn(settings, org, "qual o frete?")
    await run_curator(db, org, options(datetime.now(UTC) + timedelta(days=100)))
    assert await states(db, org) == {"frete": "archived"}
    assert (await _turn(settings, org, "qual o frete?"))["matched"] == []

    # The business uploads its own version: it answers from the next turn on.
    package = skill_zip("frete", keywords=["frete"], body="Frete grátis acima de R$ 200.")
    result = await import_skill_package(db, resources.store, organization_id=org, data=package)
    assert (result.status, result.reactivated_from) == (ImportStatus.IMPORTED, "archived")
    assert await states(db, org) == {"frete": "active"}
    back = await _turn(settings, org, "qual o frete?")
    assert [m["name"] for m in back["matched"]] == ["frete"]  # type: ignore[attr-defined]

    # The same upload again changes nothing: no new version, nothing to reactivate.
    again = await import_skill_package(db, resources.store, organization_id=org, data=package)
    assert (again.status, again.reactivated_from) == (ImportStatus.UNCHANGED, None)


async def test_installing_from_the_catalog_over_an_archived_usage_row_is_active_at_once(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    # The org's own agent-authored "agendamento" goes idle, is archived, then uninstalled.
    org = await create_org(db)
    await publish(db, resources.store, org, "agendamento", keywords=["marcar"], created_by="agent")
    await _turn(settings, org, "quero marcar um horário")
    await run_curator(db, org, options(datetime.now(UTC) + timedelta(days=100)))
    assert await states(db, org) == {"agendamento": "archived"}
    await uninstall_skill(db, organization_id=org, name="agendamento")

    # The platform's skill of the same name, installed later, answers from the next turn on.
    await seed_catalog(db, resources.store, DEFAULT_CATALOG_DIR)
    installed = await install_catalog_skill(
        db, resources.store, organization_id=org, name="agendamento"
    )
    assert installed.reactivated_from == "archived"
    assert await states(db, org) == {"agendamento": "active"}
    listing = await list_skills(db, organization_id=org)
    assert [(s.name, s.state) for s in listing.installed] == [("agendamento", "active")]
    back = await _turn(settings, org, "Oi, queria marcar uma consulta pra amanhã")
    assert [m["name"] for m in back["matched"]] == ["agendamento"]  # type: ignore[attr-defined]
