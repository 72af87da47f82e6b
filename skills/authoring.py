"""skill_manage's writes: every change a new immutable version of an agent-authored skill.

Under the org's catalog lock: read the current version, apply the change in memory, store the
new version's files (unchanged ones copied server-side), then version row + pointer + a
`patch` usage bump in one transaction. The previous version stays; nothing is deleted.
Only skills the agent created may change (`skill_read_only` otherwise).
"""

from __future__ import annotations

import mimetypes
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from skills.authoring_rules import (
    SKILL_MD,
    AuthoringError,
    check_description,
    check_file_content,
    check_name,
    check_skill_md,
    check_support_path,
    render_skill_md,
    replace_unique,
)
from skills.catalog import catalog_lock
from skills.catalog_queries import PointedVersion, fetch_org_pointed_version, insert_skill_pointer
from skills.curator_queries import lock_curator_orgs
from skills.models import FileKind, ManifestEntry, SkillMatcher
from skills.package_skill_md import SkillMd
from skills.publisher import SkillFile, manifest_of
from skills.queries import insert_skill_version, upsert_skill_pointer
from skills.storage import ObjectStore, object_key
from skills.usage import UsageBump, UsageEvent, UsageStore


@dataclass(frozen=True)
class AuthoredVersion:
    name: str
    version_id: uuid.UUID


@dataclass(frozen=True)
class _Change:
    """The next version: its SKILL.md fields, files kept from the current one, files new."""

    skill: SkillMd
    kept: tuple[ManifestEntry, ...]
    added: tuple[SkillFile, ...]


@dataclass(frozen=True)
class SkillAuthor:
    """The authoring operations for one org (the org comes from the job, never the model)."""

    conn: asyncpg.Connection
    store: ObjectStore
    usage: UsageStore
    organization_id: uuid.UUID

    async def create(
        self,
        name: object,
        description: object,
        body: object,
        any_keywords: object,
        probe_keywords: object = None,
    ) -> AuthoredVersion:
        name = check_name(name)
        matcher = _matcher(any_keywords, probe_keywords)
        text = render_skill_md(name, check_description(description), matcher, _text(body, "body"))
        skill = check_skill_md(text, expected_name=name)
        async with catalog_lock(self.conn, self.organization_id):
            if await fetch_org_pointed_version(self.conn, self.organization_id, name):
                raise AuthoringError(
                    f"Já existe uma skill chamada {name}. Escolha outro nome ou use patch.",
                    code="skill_exists",
                )
            return await self._write(None, _Change(skill, (), ()))

    async def patch(
        self, name: object, old: object, new: object, file_path: object = None
    ) -> AuthoredVersion:
        async with catalog_lock(self.conn, self.organization_id):
            current = await self._editable(name)
            if file_path is None or file_path == SKILL_MD:
                text = render_skill_md(
                    current.name, current.description, current.matcher, current.body
                )
                skill = check_skill_md(replace_unique(text, old, new), expected_name=current.name)
                return await self._write(current, _Change(skill, current.manifest, ()))
            path, kind = check_support_path(file_path)
            entry = _entry(current, path)
            stored = await self.store.get(
                object_key(self.organization_id, current.name, current.version_id, path),
                max_bytes=entry.size,
            )
            content = replace_unique(stored.data.decode("utf-8", errors="replace"), old, new)
            return await self._write_file(current, path, kind, content)

    async def write_file(self, name: object, path: object, content: object) -> AuthoredVersion:
        checked_path, kind = check_support_path(path)
        async with catalog_lock(self.conn, self.organization_id):
            current = await self._editable(name)
            return await self._write_file(current, checked_path, kind, content)

    async def remove_file(self, name: object, path: object) -> AuthoredVersion:
        checked_path, _ = check_support_path(path)
        async with catalog_lock(self.conn, self.organization_id):
            current = await self._editable(name)
            _entry(current, checked_path)
            kept = tuple(e for e in current.manifest if e.path != checked_path)
            return await self._write(current, _Change(_skill_of(current), kept, ()))

    async def _write_file(
        self, current: PointedVersion, path: str, kind: FileKind, content: object
    ) -> AuthoredVersion:
        data = check_file_content(content)
        kept = tuple(e for e in current.manifest if e.path != path)
        added = (SkillFile(path, data, kind),)
        return await self._write(current, _Change(_skill_of(current), kept, added))

    async def _editable(self, name: object) -> PointedVersion:
        checked = check_name(name)
        current = await fetch_org_pointed_version(self.conn, self.organization_id, checked)
        if current is None:
            raise AuthoringError(
                f"A skill {checked} não está instalada; crie-a com action=create.",
                code="skill_not_found",
            )
        if current.created_by != "agent":
            raise AuthoringError(
                f"A skill {checked} foi instalada pela empresa e é somente leitura; "
                "crie uma skill nova se precisar de outra versão.",
                code="skill_read_only",
            )
        return current

    async def _write(self, current: PointedVersion | None, change: _Change) -> AuthoredVersion:
        version_id = uuid.uuid4()
        await self._store_files(current, change, version_id)
        manifest = sorted((*change.kept, *manifest_of(change.added)), key=lambda e: e.path)
        skill = change.skill
        async with self.conn.transaction():
            await lock_curator_orgs(self.conn, [self.organization_id])
            await insert_skill_version(
                self.conn,
                version_id=version_id,
                organization_id=self.organization_id,
                name=skill.name,
                description=skill.description,
                body=skill.body,
                matcher=skill.matcher,
                manifest=manifest,
                created_by="agent",
                forked_from_version_id=None,
            )
            if current is None:
                await insert_skill_pointer(self.conn, self.organization_id, skill.name, version_id)
            else:
                await upsert_skill_pointer(self.conn, self.organization_id, skill.name, version_id)
            bump = UsageBump(self.organization_id, skill.name, UsageEvent.PATCH)
            await self.usage.record(self.conn, [bump])
        return AuthoredVersion(skill.name, version_id)

    async def _store_files(
        self, current: PointedVersion | None, change: _Change, version_id: uuid.UUID
    ) -> None:
        name, org = change.skill.name, self.organization_id
        if current is not None:
            for entry in change.kept:  # server-side copies: the bytes never pass through us
                await self.store.copy(
                    object_key(org, name, current.version_id, entry.path),
                    object_key(org, name, version_id, entry.path),
                )
        for file in change.added:
            content_type = mimetypes.guess_type(file.path)[0] or "text/plain"
            await self.store.put(
                object_key(org, name, version_id, file.path), file.data, content_type
            )


def _skill_of(current: PointedVersion) -> SkillMd:
    return SkillMd(current.name, current.description, current.matcher, current.body)


def _entry(current: PointedVersion, path: str) -> ManifestEntry:
    for entry in current.manifest:
        if entry.path == path:
            return entry
    listed = ", ".join(e.path for e in current.manifest) or "nenhum"
    raise AuthoringError(
        f"A skill {current.name} não tem o arquivo {path}. Arquivos: {listed}.",
        code="skill_file_not_found",
    )


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise AuthoringError(f"O campo '{field}' precisa ser texto.", code="skill_field_invalid")
    return value


def _keywords(value: object, field: str, *, required: bool) -> list[str]:
    if value is None and not required:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str) or (required and not value):
        raise AuthoringError(
            f"'{field}' precisa ser uma lista de palavras-chave"
            + (" com pelo menos uma." if required else "."),
            code="skill_keywords_invalid",
        )
    return [_text(k, field) for k in value]


def _matcher(any_keywords: object, probe_keywords: object) -> SkillMatcher:
    return SkillMatcher(
        any_keywords=_keywords(any_keywords, "any_keywords", required=True),
        probe_keywords=_keywords(probe_keywords, "probe_keywords", required=False),
    )
