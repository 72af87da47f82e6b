"""One org's consolidation cycle: gates, associate, distill; for the tick and the CLI.

Under the org's catalog lock (session-level, as authoring takes it: no skill_manage write
interleaves, except during a model's rewrite, below), in this order:
1. expire pending proposals that waited 30 days or whose member changed;
2. the gates (consolidation.gates): `off`, `watermark`, `no_pressure`;
3. associate: the backend's links among the org's non-archived skills; stored links are
   kept when both versions are unchanged, added when new, recomputed (updated or dropped)
   when either skill got a new version;
4. distill: average-linkage groups of the agent's unpinned skills that are in no pending
   proposal, at most `max_proposals` proposals. When the org's agent has a real model, it
   may rewrite each umbrella's body (consolidation.rewrite: one call each,
   temperature 0, `rewrite_budget_s` in all, the deterministic body kept on any failure);
   the catalog lock is released during those calls, and a plan whose member meanwhile
   joined another pending proposal is dropped. Each umbrella version's files are copied
   (server-side) before the transaction, so an orphaned object is the worst a crash leaves;
5. one transaction under the org's curator lock: links, proposal versions and rows, the
   watermark and the report. A member whose pointer moved since step 3 drops its proposal.
A dry run stops before any write (no expiry, no links, no proposals, no watermark).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import structlog

from consolidation.backends import LexicalBackend, SimilarityBackend
from consolidation.distill import Limits, TooLarge, UmbrellaPlan, plan_umbrella
from consolidation.gates import Pressure, skip_reason
from consolidation.grouping import Candidate, Group, average_groups
from consolidation.link_queries import StoredLink, delete_links, list_links, upsert_links
from consolidation.measure import VectorBackend, VersionText, ensure_vectors, measure
from consolidation.proposal_queries import (
    Member,
    Proposal,
    expire_proposals,
    insert_proposal,
    list_pending_member_names,
)
from consolidation.queries import (
    CycleSkill,
    fetch_agent_model,
    fetch_consolidated_at,
    fetch_consolidation_mode,
    fetch_last_agent_change,
    list_cycle_skills,
    upsert_org_consolidation,
)
from consolidation.rewrite import KEPT, MAX_REWRITES, ask_model
from consolidation.similarity import Link, SkillText
from core.object_store import ObjectStore, object_key
from similarity.backend import SimilarityFailed
from similarity.vector_queries import list_stored_ids
from skills.catalog import catalog_lock
from skills.catalog_queries import (
    fetch_org_pointed_version,
    lock_skill_catalog,
    unlock_skill_catalog,
)
from skills.curator.errors import OrganizationNotFound
from skills.curator.queries import lock_curator_orgs
from skills.models import LoadedSkill
from skills.publisher import content_type_of
from skills.queries import insert_skill_version
from turn.errors import ModelNotConfigured
from turn.model import Model
from turn.providers.registry import ModelRegistry
from turn.skill_index import render_skill_index

log = structlog.get_logger(__name__)

MAX_PROPOSALS = 10  # per org per cycle: bounds the cycle's time and a reviewer's queue
PROPOSAL_MAX_AGE = timedelta(days=30)
# One rewrite call's timeout, and all of a cycle's together: inside the tick's per-org bound
# (consolidation.tick.ORG_TIMEOUT_S, 60 s), with room for the cycle's own work.
REWRITE_TIMEOUT_S = 20.0
REWRITE_BUDGET_S = 40.0


@dataclass(frozen=True)
class ConsolidationConfig:
    pressure: Pressure = dataclasses.field(default_factory=Pressure)
    limits: Limits = dataclasses.field(default_factory=Limits)
    max_proposals: int = MAX_PROPOSALS
    proposal_max_age: timedelta = PROPOSAL_MAX_AGE
    backend: SimilarityBackend = dataclasses.field(default_factory=LexicalBackend)
    # The agents' models (the worker's registry); None: no rewrite, the deterministic body.
    models: ModelRegistry | None = None
    rewrite_timeout_s: float = REWRITE_TIMEOUT_S
    rewrite_budget_s: float = REWRITE_BUDGET_S


@dataclass(frozen=True)
class ProposalSummary:
    id: uuid.UUID | None  # None in a dry run
    umbrella: str
    absorbs: tuple[str, ...]
    index_bytes_before: int
    index_bytes_after: int
    rewrite: str = KEPT  # which body it carries (consolidation.rewrite)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": None if self.id is None else str(self.id),
            "umbrella": self.umbrella,
            "absorbs": list(self.absorbs),
            "index_bytes_before": self.index_bytes_before,
            "index_bytes_after": self.index_bytes_after,
            "rewrite": self.rewrite,
        }


@dataclass(frozen=True)
class ConsolidationReport:
    organization_id: uuid.UUID
    ran: bool
    skipped_reason: str | None
    index_bytes: int
    links: tuple[Link, ...] = ()
    proposals: tuple[ProposalSummary, ...] = ()
    not_proposed: tuple[dict[str, Any], ...] = ()  # {"umbrella", "absorbs", "reason"}
    expired: int = 0
    backend: str | None = None
    dry_run: bool = False
    fallback_from: str | None = None  # the backend that failed, when `backend` is lexical

    def to_json(self) -> dict[str, Any]:
        return {
            "organization_id": str(self.organization_id),
            "ran": self.ran,
            "skipped_reason": self.skipped_reason,
            "index_bytes": self.index_bytes,
            "links": [link.to_json() for link in self.links],
            "proposals": [p.to_json() for p in self.proposals],
            "not_proposed": list(self.not_proposed),
            "expired": self.expired,
            "backend": self.backend,
            "fallback_from": self.fallback_from,
            "dry_run": self.dry_run,
        }


@dataclass(frozen=True)
class _Planned:
    group: Group
    plan: UmbrellaPlan
    summary: ProposalSummary


def index_bytes(skills: Sequence[CycleSkill]) -> int:
    """Bytes of the skill index these skills render (turn.skill_index), as every prompt has."""
    loaded = [
        LoadedSkill(s.version.version_id, s.version.name, s.version.description) for s in skills
    ]
    return len(render_skill_index(loaded).encode("utf-8"))


def skill_text(skill: CycleSkill) -> SkillText:
    v = skill.version
    return SkillText(v.name, v.description, v.body, v.matcher.any_keywords)


def version_texts(skills: Sequence[CycleSkill]) -> list[VersionText]:
    return [VersionText(s.version.version_id, skill_text(s)) for s in skills]


async def _embed_unlocked(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    config: ConsolidationConfig,
    now: datetime,
) -> None:
    """A vector backend's missing vectors, before the catalog lock: a cold cycle (hundreds of
    skills to embed, seconds to a minute) holds no lock an author or a turn waits on. A
    version written meanwhile is embedded under the lock (one or two texts). A failure is
    left for the cycle to meet again and fall back from (consolidation.measure)."""
    if not isinstance(config.backend, VectorBackend):
        return
    embedder = config.backend.embedder
    skills = await list_cycle_skills(conn, organization_id, now.date())
    live = version_texts([s for s in skills if s.state != "archived"])
    ids = [v.version_id for v in live]
    stored = await list_stored_ids(conn, ids, embedder.name, embedder.model_id)
    missing = [v for v in live if v.version_id not in stored]
    if not missing:
        return  # a warm cycle: nothing to embed, no vector read twice
    try:
        await ensure_vectors(conn, organization_id, missing, embedder)
    except SimilarityFailed:
        return


async def consolidate_org(
    conn: asyncpg.Connection,
    store: ObjectStore,
    organization_id: uuid.UUID,
    config: ConsolidationConfig,
    *,
    now: datetime,
    force: bool = False,
    dry_run: bool = False,
) -> ConsolidationReport:
    """One cycle for one org (see the module docstring); raises OrganizationNotFound."""
    mode = await fetch_consolidation_mode(conn, organization_id)
    if mode is None:
        raise OrganizationNotFound(f"organization {organization_id} does not exist")
    await _embed_unlocked(conn, organization_id, config, now)
    async with catalog_lock(conn, organization_id):
        expired = 0
        if not dry_run:
            async with conn.transaction():
                await lock_curator_orgs(conn, [organization_id])
                expired = await expire_proposals(
                    conn, organization_id, config.proposal_max_age.total_seconds()
                )
        skills = await list_cycle_skills(conn, organization_id, now.date())
        live = [s for s in skills if s.state != "archived"]
        size = index_bytes(live)
        reason = skip_reason(
            mode,
            last_agent_change_at=await fetch_last_agent_change(conn, organization_id),
            consolidated_at=await fetch_consolidated_at(conn, organization_id),
            index_bytes=size,
            agent_skills=sum(1 for s in live if s.version.created_by == "agent"),
            pressure=config.pressure,
            force=force,
        )
        skipped = ConsolidationReport(
            organization_id, False, None, size, expired=expired, dry_run=dry_run
        )
        if reason is not None:
            return dataclasses.replace(skipped, skipped_reason=str(reason))
        return await _cycle(conn, store, organization_id, config, live, skipped, dry_run=dry_run)


async def _cycle(
    conn: asyncpg.Connection,
    store: ObjectStore,
    organization_id: uuid.UUID,
    config: ConsolidationConfig,
    live: Sequence[CycleSkill],
    base: ConsolidationReport,
    *,
    dry_run: bool,
) -> ConsolidationReport:
    measured = await measure(conn, organization_id, version_texts(live), config.backend)
    links = measured.links
    backend_name = measured.backend
    report = dataclasses.replace(
        base, ran=True, links=links, backend=backend_name, fallback_from=measured.fallback_from
    )
    pending = await list_pending_member_names(conn, organization_id)
    planned, refused = _plan(live, links, pending, config, measured.group_threshold)
    report = dataclasses.replace(report, not_proposed=tuple(refused))
    if dry_run:
        return dataclasses.replace(report, proposals=tuple(p.summary for p in planned))
    model = await _agent_model(conn, organization_id, config)
    if model is not None and planned:
        planned = await _rewritten_unlocked(conn, organization_id, model, planned, live, config)
    versions = {}
    for item in planned:
        versions[item.group.umbrella] = await _store_files(store, organization_id, item.plan)
    by_name = {s.version.name: s for s in live}
    async with conn.transaction():
        await lock_curator_orgs(conn, [organization_id])
        await _write_links(conn, organization_id, links, by_name, backend_name)
        written = []
        for item in planned:
            if not await _members_unchanged(conn, organization_id, item.group, by_name):
                continue
            proposal = _proposal(item, versions[item.group.umbrella], by_name, backend_name)
            plan = item.plan
            await insert_skill_version(
                conn,
                version_id=proposal.version_id,
                organization_id=organization_id,
                name=plan.skill.name,
                description=plan.skill.description,
                body=plan.skill.body,
                matcher=plan.skill.matcher,
                manifest=plan.manifest,
                created_by="agent",  # still the agent's: the curator keeps judging it
                frontmatter=plan.skill.frontmatter,
                created_via="consolidation",
            )
            await insert_proposal(conn, organization_id, proposal)
            written.append(dataclasses.replace(item.summary, id=proposal.id))
        report = dataclasses.replace(report, proposals=tuple(written))
        await upsert_org_consolidation(conn, organization_id, report.to_json())
    log.info(
        "consolidation.ran",
        org=str(organization_id),
        links=len(links),
        backend=backend_name,
        fallback_from=measured.fallback_from,
        embedded=measured.embedded,
        proposals=len(report.proposals),
        not_proposed=len(report.not_proposed),
    )
    return report


def _plan(
    live: Sequence[CycleSkill],
    links: Sequence[Link],
    pending: set[str],
    config: ConsolidationConfig,
    group_threshold: float,
) -> tuple[list[_Planned], list[dict[str, Any]]]:
    candidates = [
        Candidate(s.version.name, s.uses_30d, s.last_activity_at)
        for s in live
        if s.version.created_by == "agent" and not s.pinned and s.version.name not in pending
    ]
    by_name = {s.version.name: s for s in live}
    before = index_bytes(live)
    planned: list[_Planned] = []
    refused: list[dict[str, Any]] = []
    for group in average_groups(candidates, links, group_threshold):
        if len(planned) >= config.max_proposals:
            break
        absorbed = [by_name[n].version for n in group.absorbs]
        try:
            plan = plan_umbrella(by_name[group.umbrella].version, absorbed, config.limits)
        except TooLarge as exc:
            refused.append(
                {
                    "umbrella": group.umbrella,
                    "absorbs": list(group.absorbs),
                    "reason": "too_large",
                    "rule": exc.rule,
                }
            )
            continue
        gone = set(group.absorbs)
        after = index_bytes([s for s in live if s.version.name not in gone])
        summary = ProposalSummary(None, group.umbrella, group.absorbs, before, after)
        planned.append(_Planned(group, plan, summary))
    return planned, refused


async def _agent_model(
    conn: asyncpg.Connection, organization_id: uuid.UUID, config: ConsolidationConfig
) -> Model | None:
    """The org's agent's model when it is a real one: not the worker's default (`local`, the
    only SKILLET_MODEL there is) nor `local` itself."""
    agent = await fetch_agent_model(conn, organization_id)
    if config.models is None or agent is None:
        return None
    provider, name = agent
    if not provider or provider == "local":
        return None
    try:
        return config.models.resolve(provider, name)
    except ModelNotConfigured as exc:
        log.warning("consolidation.rewrite_no_model", org=str(organization_id), error=str(exc))
        return None


async def _rewritten_unlocked(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    model: Model,
    planned: Sequence[_Planned],
    live: Sequence[CycleSkill],
    config: ConsolidationConfig,
) -> list[_Planned]:
    """The rewrites, with the org's catalog lock released meanwhile: the calls take seconds
    and authoring must not wait on them. What changed meanwhile is caught on the way back: a
    member now in another pending proposal drops its plan here, a member whose pointer moved
    drops it at the write (_members_unchanged)."""
    await unlock_skill_catalog(conn, organization_id)
    try:
        planned = await _rewritten(organization_id, model, planned, live, config)
    finally:
        await lock_skill_catalog(conn, organization_id)
    pending = await list_pending_member_names(conn, organization_id)
    return [p for p in planned if not pending & {p.group.umbrella, *p.group.absorbs}]


async def _rewritten(
    organization_id: uuid.UUID,
    model: Model,
    planned: Sequence[_Planned],
    live: Sequence[CycleSkill],
    config: ConsolidationConfig,
) -> list[_Planned]:
    """Each plan with the model's body where the model gave a valid one (see rewrite.py)."""
    by_name = {s.version.name: s.version for s in live}
    deadline = time.monotonic() + config.rewrite_budget_s
    out: list[_Planned] = []
    for index, item in enumerate(planned):
        left_s = deadline - time.monotonic()
        if index >= MAX_REWRITES or left_s <= 0:
            out.append(item)  # the budget is spent: the deterministic body (KEPT) stands
            continue
        group = item.group
        result = await ask_model(
            model,
            by_name[group.umbrella],
            [by_name[n] for n in group.absorbs],
            item.plan,
            config.limits,
            min(config.rewrite_timeout_s, left_s),
        )
        log.info("consolidation.rewrite", org=str(organization_id), umbrella=group.umbrella,
                 rewrite=result.note)  # fmt: skip
        summary = dataclasses.replace(item.summary, rewrite=result.note)
        out.append(dataclasses.replace(item, plan=result.plan, summary=summary))
    return out


async def _store_files(
    store: ObjectStore, organization_id: uuid.UUID, plan: UmbrellaPlan
) -> uuid.UUID:
    """The umbrella version's objects under a fresh id (no row names it yet)."""
    version_id = uuid.uuid4()
    umbrella = plan.skill.name
    for copy in plan.copies:
        await store.copy(
            object_key(organization_id, copy.source_name, copy.source_version_id, copy.source_path),
            object_key(organization_id, umbrella, version_id, copy.entry.path),
        )
    for file in plan.added:
        await store.put(
            object_key(organization_id, umbrella, version_id, file.path),
            file.data,
            content_type_of(file.path, file.kind),
        )
    return version_id


async def _members_unchanged(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    group: Group,
    by_name: dict[str, CycleSkill],
) -> bool:
    for name in (group.umbrella, *group.absorbs):
        current = await fetch_org_pointed_version(conn, organization_id, name)
        if current is None or current.version_id != by_name[name].version.version_id:
            return False
    return True


def _proposal(
    item: _Planned, version_id: uuid.UUID, by_name: dict[str, CycleSkill], backend: str
) -> Proposal:
    group = item.group
    umbrella = by_name[group.umbrella]
    members = [
        Member(group.umbrella, "umbrella", umbrella.version.version_id, umbrella.uses_30d, None)
    ]
    for name, score in zip(group.absorbs, group.scores, strict=True):
        skill = by_name[name]
        members.append(Member(name, "absorbed", skill.version.version_id, skill.uses_30d, score))
    summary = item.summary
    return Proposal(
        id=uuid.uuid4(),
        umbrella=group.umbrella,
        version_id=version_id,
        backend=backend,
        status="pending",
        index_bytes_before=summary.index_bytes_before,
        index_bytes_after=summary.index_bytes_after,
        created_at=datetime.now(UTC),  # not stored: the row's default stamps it
        decided_at=None,
        decided_by=None,
        expired_reason=None,
        members=tuple(members),
        rewrite=summary.rewrite,
    )


async def _write_links(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    links: Sequence[Link],
    by_name: dict[str, CycleSkill],
    backend: str,
) -> None:
    """Dedupe against stored links, extend them, recompute those whose skill changed."""

    def version(name: str) -> uuid.UUID:
        return by_name[name].version.version_id

    stored = {
        (x.a, x.b): x for x in await list_links(conn, organization_id) if x.backend == backend
    }
    fresh = {(x.a, x.b) for x in links}
    writes = [
        StoredLink(x.a, x.b, version(x.a), version(x.b), x.score, backend)
        for x in links
        if (old := stored.get((x.a, x.b))) is None
        or (old.a_version_id, old.b_version_id) != (version(x.a), version(x.b))
    ]
    drifted = [
        old
        for key, old in stored.items()
        if key not in fresh
        and old.a in by_name
        and old.b in by_name
        and (old.a_version_id, old.b_version_id) != (version(old.a), version(old.b))
    ]
    await upsert_links(conn, organization_id, writes)
    await delete_links(conn, organization_id, drifted)
