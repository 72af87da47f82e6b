"""Per-worker cache of each org's installed skills, validated against the DB on every turn."""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass

import asyncpg

from skills.models import LoadedSkill
from skills.queries import fetch_catalog_revision, list_installed_skills
from turn.matcher import CompiledMatcher, compile_matcher
from turn.skill_index import render_skill_index


@dataclass(frozen=True)
class CatalogSnapshot:
    """An org's installed set at one revision, with everything derived from it precomputed."""

    revision: int
    skills: tuple[LoadedSkill, ...]
    index_text: str
    matcher: CompiledMatcher


class SkillCatalogCache:
    """One primary-key read per turn (the holder's burst read carries it); the full load only
    when the org's revision moved.

    Triggers bump `skill_catalog_revisions` in the same transaction as any pointer or state
    change, so a change committed before a turn starts is seen by that turn on every worker.
    Turns of one org that miss at the same time (a worker's first jobs, a publish) share one
    load: the load and the matcher's compilation cost tens of milliseconds for a large catalog.
    """

    def __init__(self, max_orgs: int = 1024) -> None:
        self._max_orgs = max_orgs
        self._entries: OrderedDict[uuid.UUID, CatalogSnapshot] = OrderedDict()
        # The load under way per org; None as its result: it failed (each waiter loads).
        self._loading: dict[uuid.UUID, asyncio.Future[CatalogSnapshot | None]] = {}
        self.loads = 0

    async def get(self, conn: asyncpg.Connection, organization_id: uuid.UUID) -> CatalogSnapshot:
        revision = await fetch_catalog_revision(conn, organization_id)
        cached = self.cached(organization_id, revision)
        if cached is not None:
            return cached
        pending = self._loading.get(organization_id)
        if pending is not None:
            shared = await asyncio.shield(pending)
            if shared is not None and shared.revision >= revision:
                return shared
        return await self._load_once(conn, organization_id)

    async def _load_once(
        self, conn: asyncpg.Connection, organization_id: uuid.UUID
    ) -> CatalogSnapshot:
        done: asyncio.Future[CatalogSnapshot | None] = asyncio.get_running_loop().create_future()
        self._loading[organization_id] = done
        snapshot: CatalogSnapshot | None = None
        try:
            snapshot = await self._load(conn, organization_id)
        finally:
            done.set_result(snapshot)
            if self._loading.get(organization_id) is done:
                del self._loading[organization_id]
        self._entries[organization_id] = snapshot
        self._entries.move_to_end(organization_id)
        while len(self._entries) > self._max_orgs:
            self._entries.popitem(last=False)
        return snapshot

    def cached(self, organization_id: uuid.UUID, revision: int) -> CatalogSnapshot | None:
        """The snapshot at `revision` (read by the caller, e.g. with the holder's burst), if
        this worker has it; None: load it with `get`."""
        cached = self._entries.get(organization_id)
        if cached is None or cached.revision != revision:
            return None
        self._entries.move_to_end(organization_id)
        return cached

    async def _load(self, conn: asyncpg.Connection, organization_id: uuid.UUID) -> CatalogSnapshot:
        # Revision and rows from one snapshot, so a cached entry never pairs new rows with
        # an old revision (or the reverse).
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            revision = await fetch_catalog_revision(conn, organization_id)
            skills = tuple(await list_installed_skills(conn, organization_id))
        self.loads += 1
        return CatalogSnapshot(
            revision=revision,
            skills=skills,
            index_text=render_skill_index(skills),
            matcher=compile_matcher(skills),
        )
