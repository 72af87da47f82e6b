"""Consolidation on real Postgres and S3: links, a proposal, approve/restore, refusals, gates,
and the curator tick (as the worker's role, bound per org) outliving a crash."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import timedelta

import asyncpg
import pytest

from consolidation.decide import ProposalError, approve_proposal, reject_proposal
from consolidation.gates import Pressure
from consolidation.proposal_queries import fetch_proposal
from consolidation.run import ConsolidationConfig, ConsolidationReport, consolidate_org
from consolidation.similarity import Link, SkillText
from core.object_store import ObjectStore, object_key
from core.tenancy import org_connection
from jobs.context import JobContext
from jobs.curator_tick import curator_tick
from skills.catalog import list_skills
from skills.queries import list_installed_skills
from skills.usage import UsageStore
from tests.integration.curator_support import NOW
from tests.integration.support import create_org, publish
from turn.matcher import match_skills
from worker.crons import curator_config
from worker.resources import Resources
from worker.settings import Settings

# Three reads of the absorbed skill's reference (what the reply commits count).
READ_PRAZOS = (
    "insert into skill_file_reads (organization_id, skill_name, path, read_count, last_read_at) "
    "values ($1, 'politica-de-troca', 'references/prazos.md', 3, now())"
)
EAGER = ConsolidationConfig(pressure=Pressure(min_skills=0))  # every org is "under pressure"

TROCA = {
    "troca-de-produto": (
        "Troca de produto comprado na loja: prazos e regras",
        "Explique a troca do produto: até 30 dias, com a nota fiscal, sem uso.",
        ["troca", "trocar produto"],
    ),
    "trocar-produto": (
        "Troca de produtos: prazos e regras da troca",
        "A troca do produto vale por 30 dias com a nota fiscal e sem uso.",
        ["troca", "troca de produto"],
    ),
    "politica-de-troca": (
        "Política de troca de produto: prazos e regras da troca",
        "Troca de produto em até 30 dias com a nota fiscal; o produto sem uso.",
        ["troca", "política de troca"],
    ),
}
OTHERS = {
    "pagamento-pix": (
        "Envia a chave Pix e confirma o pagamento",
        "Mande a chave Pix da loja e peça o comprovante do Pix.",
        ["pix", "chave pix"],
    ),
    "horario-de-funcionamento": (
        "Horário de funcionamento da loja física",
        "A loja abre de segunda a sábado, das 9h às 18h; domingo fechada.",
        ["horário", "que horas abre"],
    ),
}


async def _org(db: asyncpg.Connection, store: ObjectStore, *, mode: str = "review") -> uuid.UUID:
    org = await create_org(db)
    await db.execute("update organizations set consolidation = $2 where id = $1", org, mode)
    for name, (description, body, keywords) in {**TROCA, **OTHERS}.items():
        references = (
            {"references/prazos.md": "Prazo: 30 dias."} if name == "politica-de-troca" else None
        )
        await publish(
            db,
            store,
            org,
            name,
            keywords=keywords,
            description=description,
            body=body,
            references=references,
            created_by="agent",
        )
    # The most used of the pile becomes the umbrella.
    await db.execute(
        "insert into skill_activation_daily (organization_id, skill_name, day, hard_count) "
        "values ($1, 'trocar-produto', $2, 9), ($1, 'troca-de-produto', $2, 2)",
        org,
        NOW.date() - timedelta(days=1),
    )
    return org


async def _consolidate(
    db: asyncpg.Connection, store: ObjectStore, org: uuid.UUID, **kwargs: object
) -> ConsolidationReport:
    config = kwargs.pop("config", EAGER)
    assert isinstance(config, ConsolidationConfig)
    return await consolidate_org(db, store, org, config, now=NOW, **kwargs)  # type: ignore[arg-type]


def _names(skills: Sequence[object]) -> set[str]:
    return {s.name for s in skills}  # type: ignore[attr-defined]


async def test_a_pile_of_near_duplicates_gets_one_proposal_and_approving_it_absorbs_them(
    db: asyncpg.Connection, resources: Resources
) -> None:
    store = resources.store
    org = await _org(db, store)

    dry = await _consolidate(db, store, org, dry_run=True)
    assert dry.ran and [p.id for p in dry.proposals] == [None]
    assert await db.fetchval("select count(*) from skill_links") == 0

    report = await _consolidate(db, store, org)
    out = report.to_json()
    assert out["ran"] is True and out["skipped_reason"] is None
    assert {(x["a"], x["b"]) for x in out["links"]} >= {("troca-de-produto", "trocar-produto")}
    assert all(x["backend"] == "lexical" for x in out["links"])
    [proposal] = out["proposals"]
    assert proposal["umbrella"] == "trocar-produto"
    assert sorted(proposal["absorbs"]) == ["politica-de-troca", "troca-de-produto"]
    assert proposal["index_bytes_after"] < proposal["index_bytes_before"] == out["index_bytes"]
    stored = await db.fetch("select a, b, backend from skill_links where organization_id = $1", org)
    assert {(r["a"], r["b"]) for r in stored} == {(x["a"], x["b"]) for x in out["links"]}

    # Nothing changed for the agent yet: every skill is still installed and active.
    assert len(await list_installed_skills(db, org)) == 5
    await db.execute(READ_PRAZOS, org)
    proposal_id = uuid.UUID(proposal["id"])
    decided = await approve_proposal(
        db,
        UsageStore(lambda: NOW),
        organization_id=org,
        proposal_id=proposal_id,
        actor="test",
        now=NOW,
    )
    assert decided.status == "approved"

    installed = await list_installed_skills(db, org)
    assert _names(installed) == {"trocar-produto", "pagamento-pix", "horario-de-funcionamento"}
    listing = (await list_skills(db, organization_id=org)).to_json()
    by_name = {s["name"]: s for s in listing["installed"]}
    assert by_name["politica-de-troca"]["state"] == "archived"
    assert by_name["politica-de-troca"]["absorbed_into"] == "trocar-produto"
    assert by_name["trocar-produto"]["state"] == "active"
    assert "absorbed_into" not in by_name["trocar-produto"]

    # A message with an absorbed skill's keyword now matches the umbrella.
    matched = match_skills(installed, "oi, qual é a política de troca?").matched
    assert [s.name for s in matched] == ["trocar-produto"]
    umbrella = next(s for s in installed if s.name == "trocar-produto")
    assert "references/politica-de-troca/prazos.md" in umbrella.reference_paths
    moved = await store.get(
        object_key(
            org, "trocar-produto", umbrella.version_id, "references/politica-de-troca/prazos.md"
        ),
        max_bytes=100,
    )
    assert moved.data == b"Prazo: 30 dias."
    body = await store.get(
        object_key(
            org, "trocar-produto", umbrella.version_id, "references/politica-de-troca/SKILL.md"
        ),
        max_bytes=10_000,
    )
    assert "Troca de produto em até 30 dias" in body.data.decode()
    # The moved reference keeps its read count under its new path.
    reads = await db.fetch(
        "select skill_name, path, read_count from skill_file_reads where organization_id = $1 "
        "order by skill_name",
        org,
    )
    assert [(r["skill_name"], r["path"], r["read_count"]) for r in reads] == [
        ("politica-de-troca", "references/prazos.md", 3),
        ("trocar-produto", "references/politica-de-troca/prazos.md", 3),
    ]
    actions = [
        r["action"]
        for r in await db.fetch("select action from audit_log where organization_id = $1", org)
    ]
    assert actions.count("proposal.approve") == 1 and actions.count("skill.absorb") == 2

    restored = await UsageStore(lambda: NOW).restore(db, org, "politica-de-troca")
    assert restored.absorbed_into == "trocar-produto" and restored.record.state == "active"
    assert "politica-de-troca" in _names(await list_installed_skills(db, org))

    # Nothing new from the agent since: the next cycle is skipped by the watermark.
    again = await _consolidate(db, store, org)
    assert (again.ran, again.skipped_reason) == (False, "watermark")


async def test_a_proposal_whose_member_changed_is_refused_and_expires(
    db: asyncpg.Connection, resources: Resources
) -> None:
    store = resources.store
    org = await _org(db, store)
    [proposal] = (await _consolidate(db, store, org)).proposals
    assert proposal.id is not None
    description, body, keywords = TROCA["politica-de-troca"]
    await publish(
        db,
        store,
        org,
        "politica-de-troca",
        keywords=keywords,
        description=description,
        body=body + " Trocas só na loja física.",
        created_by="agent",
    )
    with pytest.raises(ProposalError) as refused:
        await approve_proposal(
            db,
            UsageStore(lambda: NOW),
            organization_id=org,
            proposal_id=proposal.id,
            actor="test",
            now=NOW,
        )
    assert refused.value.code == "proposal_base_moved"
    expired = await fetch_proposal(db, org, proposal.id)
    assert expired is not None and expired.status == "expired"
    assert len(await list_installed_skills(db, org)) == 5  # nothing was absorbed
    outcome = await db.fetchval(
        "select outcome from audit_log where organization_id = $1 and action = 'proposal.approve'",
        org,
    )
    assert outcome == "refused"
    with pytest.raises(ProposalError) as decided:
        await reject_proposal(db, organization_id=org, proposal_id=proposal.id, actor="test")
    assert decided.value.code == "proposal_decided"

    # The members are free again: the next cycle proposes anew on the current versions.
    [fresh] = (await _consolidate(db, store, org)).proposals
    assert fresh.umbrella == "trocar-produto" and fresh.id != proposal.id


async def test_the_gates_skip_an_org_that_is_off_quiet_or_small(
    db: asyncpg.Connection, resources: Resources
) -> None:
    store = resources.store
    off = await _org(db, store, mode="off")
    assert (await _consolidate(db, store, off, force=True)).skipped_reason == "off"
    org = await _org(db, store)
    small = await _consolidate(db, store, org, config=ConsolidationConfig())
    assert (small.ran, small.skipped_reason) == (False, "no_pressure")
    assert small.index_bytes * 2 <= 16_384
    forced = await _consolidate(db, store, org, config=ConsolidationConfig(), force=True)
    assert forced.ran and len(forced.proposals) == 1
    assert (await _consolidate(db, store, org)).skipped_reason == "watermark"
    # A skill in a pending proposal is in no other one, even when forced.
    assert (await _consolidate(db, store, org, force=True)).proposals == ()


async def test_the_tick_consolidates_each_due_org_and_outlives_a_crash(
    db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    store = resources.store
    broken, fine = await _org(db, store), await _org(db, store)
    config = curator_config(settings)
    assert config.consolidation is not None
    eager = dataclasses.replace(config.consolidation, pressure=Pressure(min_skills=0))

    class Failing:
        name = "lexical"
        group_threshold = eager.backend.group_threshold

        async def links(self, skills: Sequence[SkillText]) -> list[Link] | None:
            # Broken for one org only: the tick goes on to the next.
            if any(s.name == "marcador-quebrado" for s in skills):
                raise RuntimeError("similarity blew up")
            return await eager.backend.links(skills)

    await publish(db, store, broken, "marcador-quebrado", keywords=["x"], created_by="agent")
    ctx: JobContext = {
        "curator": dataclasses.replace(
            config, consolidation=dataclasses.replace(eager, backend=Failing())
        ),
        "pool": resources.pool,
        "clock": lambda: NOW,
        "turn_deps": resources.turn_deps,
    }
    summary = await curator_tick(ctx)
    assert summary["status"] == "ran" and summary["runs"] == 2
    assert summary["consolidation"] == {"ran": 1, "skipped": 0, "failed": 1, "proposals": 1}
    reports = {
        r["organization_id"]: r["consolidation"]
        for r in await db.fetch("select organization_id, consolidation from curator_runs")
    }
    assert reports[broken] is None
    assert reports[fine]["proposals"][0]["umbrella"] == "trocar-produto"
    # The worker's role saw only the bound org's rows: the proposal is the fine org's.
    async with org_connection(resources.pool, broken) as conn:
        assert await conn.fetchval("select count(*) from skill_proposals") == 0
    assert (
        await db.fetchval("select count(*) from skill_proposals where organization_id = $1", fine)
        == 1
    )


async def test_user_and_pinned_skills_are_never_merged_and_old_proposals_expire(
    db: asyncpg.Connection, resources: Resources
) -> None:
    store = resources.store
    org = await _org(db, store)
    description, body, keywords = TROCA["troca-de-produto"]
    # The business's own copy of the same skill, and the agent's, pinned by a person.
    await publish(
        db, store, org, "troca-da-loja", keywords=keywords, description=description,
        body=body, created_by="user",
    )  # fmt: skip
    await db.execute(
        "insert into skill_usage (organization_id, skill_name, created_by, pinned) "
        "values ($1, 'politica-de-troca', 'agent', true)",
        org,
    )
    report = await _consolidate(db, store, org)
    linked = {name for x in report.links for name in (x.a, x.b)}
    assert "troca-da-loja" in linked  # associated ...
    [proposal] = report.proposals  # ... but never merged, nor is the pinned one
    assert (proposal.umbrella, proposal.absorbs) == ("trocar-produto", ("troca-de-produto",))

    assert proposal.id is not None
    await db.execute(
        "update skill_proposals set created_at = now() - interval '31 days' where id = $1",
        proposal.id,
    )
    again = await _consolidate(db, store, org, force=True)
    assert again.expired == 1
    expired = await fetch_proposal(db, org, proposal.id)
    assert expired is not None and (expired.status, expired.expired_reason) == (
        "expired",
        "waited",
    )
    [fresh] = again.proposals  # its members were free again for this cycle
    assert fresh.umbrella == "trocar-produto"
