"""The skill editor's writes: a new version from the form's fields (or a whole SKILL.md),
one file added, replaced or removed, and a rollback. The organization id and the author come
from the trusted caller (the key, the CLI flag), never from the content.

Every write goes through the package rules of a .zip upload (skills.edit_package): the new
SKILL.md and every file the version will hold, the base version's carried over, are parsed as
one upload, so a refusal has the package's code and pt-BR message and nothing is written.

Concurrency: each write names the version it started from (`base_version_id`). It is checked
once before objects are stored (to refuse early) and again, with the org's pointer row locked
(`select ... for update`), in the transaction that inserts the version and moves the pointer:
two editors starting from one version cannot both win; the second gets `skill_base_moved` with
the version the pointer names now. A new skill has no base: its pointer is insert-only, so a
concurrent creation of the same name is `skill_already_installed`.

A catalog skill the org has not installed is edited from the catalog's current version (its
id is the base): the install (a fork, `created_via` 'catalog', files copied to the org's
prefix) and the edit are two versions written in one transaction, so the history shows the
catalog's text the edit started from and a rollback can return to it.

Versions written here are the business's: `created_by` 'user' (the curator and consolidation
judge only the agent's), `created_via` 'editor', and the key that wrote them. Objects are
stored before the transaction (skills.publisher): a refusal or a lost race leaves only
unreferenced objects. Each write is audited in its transaction (actions `skill.edit`,
`skill.file_put`, `skill.file_delete`, `skill.rollback`); like the import's, it is activity,
so a skill the curator left stale or archived is active again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from core.audit import AuditEntry, insert_audit
from core.object_store import ObjectStore
from skills.catalog import draft_of, reactivate_installed_skill, require_organization
from skills.catalog_errors import SkillAlreadyInstalled, SkillNotInstalled
from skills.catalog_queries import (
    insert_skill_pointer,
)
from skills.curator.queries import lock_curator_orgs
from skills.edit_base import (
    EditBase,
    base_files,
    base_of,
    copy_fork,
    insert_fork_row,
    skill_md_of,
)
from skills.edit_errors_fields import field_of
from skills.edit_package import package_of, render_edit_skill_md
from skills.editing_errors import (
    EditRefused,
    SkillBaseMoved,
    SkillFileNotFound,
    SkillNameMismatch,
    SkillVersionNotFound,
)
from skills.editing_queries import (
    fetch_skill_version,
    lock_skill_pointer,
)
from skills.models import DEFAULT_FRONTMATTER, CreatedVia, VersionAuthor
from skills.package import SkillPackage, SkillPackageError
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.publisher import store_skill_files
from skills.queries import insert_skill_version, upsert_skill_pointer


@dataclass(frozen=True)
class SkillEdit:
    """The editor's form: keywords in the package's comma-separated `skillet-keywords` form."""

    description: str
    body: str
    keywords: str = ""
    probe_keywords: str = ""


@dataclass(frozen=True)
class Editor:
    """Who writes: `actor` for the audit log (a key's prefix, or 'cli'); `author` for the
    version (the key's prefix and name; None from the CLI)."""

    actor: str
    author: VersionAuthor | None = None


@dataclass(frozen=True)
class EditResult:
    name: str
    version_id: uuid.UUID
    base_version_id: uuid.UUID | None
    created: bool  # the org had no pointer of this name (new, or installed from the catalog)
    forked_from_version_id: uuid.UUID | None = None
    reactivated_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version_id": str(self.version_id),
            "base_version_id": _str(self.base_version_id),
            "created": self.created,
            "forked_from_version_id": _str(self.forked_from_version_id),
            "reactivated_from": self.reactivated_from,
        }


def _str(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def _package(
    skill_md: bytes, files: Sequence[tuple[str, bytes]], limits: PackageLimits
) -> SkillPackage:
    try:
        return package_of(skill_md, files, limits=limits)
    except SkillPackageError as exc:
        raise EditRefused(exc, field_of(exc)) from exc


async def publish_edit(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    base_version_id: uuid.UUID | None,
    edit: SkillEdit,
    editor: Editor,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> EditResult:
    """A new version of `name` from the form's fields, the base's files and its other
    frontmatter fields carried over; a new skill when `base_version_id` is None."""
    await require_organization(conn, organization_id)
    base = await base_of(conn, organization_id, name, base_version_id, allow_fork=True)
    frontmatter = base.version.frontmatter if base.version is not None else None
    skill_md = render_edit_skill_md(
        name=name,
        description=edit.description,
        keywords=edit.keywords,
        probe_keywords=edit.probe_keywords,
        body=edit.body,
        frontmatter=frontmatter or DEFAULT_FRONTMATTER,
    )
    files = await base_files(store, organization_id, base, limits)
    package = _package(skill_md, files, limits)
    return await _publish(conn, store, organization_id, base, package, editor, "skill.edit", {})


async def publish_skill_md(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    base_version_id: uuid.UUID | None,
    skill_md: bytes,
    editor: Editor,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> EditResult:
    """A new version of `name` from a whole SKILL.md (`skillet skills edit`), the base's
    files carried over; its frontmatter's name must be `name`."""
    await require_organization(conn, organization_id)
    base = await base_of(conn, organization_id, name, base_version_id, allow_fork=True)
    files = await base_files(store, organization_id, base, limits)
    package = _package(skill_md, files, limits)
    if package.name != name:
        raise SkillNameMismatch(name, package.name)
    return await _publish(conn, store, organization_id, base, package, editor, "skill.edit", {})


async def put_skill_file(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    base_version_id: uuid.UUID,
    path: str,
    data: bytes,
    editor: Editor,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> EditResult:
    """A new version with the file at `path` added or replaced (its kind decided by the
    package rules: folder first, then content)."""
    await require_organization(conn, organization_id)
    base = await base_of(conn, organization_id, name, base_version_id, allow_fork=False)
    assert base.version is not None
    files = [f for f in await base_files(store, organization_id, base, limits) if f[0] != path]
    replaced = len(files) < len(base.version.manifest)
    package = _package(skill_md_of(base.version), [*files, (path, data)], limits)
    detail = {"path": path, "size": len(data), "replaced": replaced}
    return await _publish(
        conn, store, organization_id, base, package, editor, "skill.file_put", detail
    )


async def delete_skill_file(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    base_version_id: uuid.UUID,
    path: str,
    editor: Editor,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> EditResult:
    """A new version without the file at `path`."""
    await require_organization(conn, organization_id)
    base = await base_of(conn, organization_id, name, base_version_id, allow_fork=False)
    assert base.version is not None
    if path not in {e.path for e in base.version.manifest}:
        raise SkillFileNotFound(name, path)
    files = [f for f in await base_files(store, organization_id, base, limits) if f[0] != path]
    package = _package(skill_md_of(base.version), files, limits)
    return await _publish(
        conn, store, organization_id, base, package, editor, "skill.file_delete", {"path": path}
    )


async def _publish(
    conn: asyncpg.Connection,
    store: ObjectStore,
    organization_id: uuid.UUID,
    base: EditBase,
    package: SkillPackage,
    editor: Editor,
    action: str,
    detail: dict[str, object],
) -> EditResult:
    """Objects, then (pointer locked and checked) version rows, pointer, usage and audit."""
    draft = draft_of(package)
    version_id = await store_skill_files(store, organization_id=organization_id, draft=draft)
    fork_id = await copy_fork(store, organization_id, base)
    name = package.name
    async with conn.transaction():
        await lock_curator_orgs(conn, [organization_id])
        pointed = await lock_skill_pointer(conn, organization_id, name)
        if pointed != base.pointer:
            if base.version is None:
                raise SkillAlreadyInstalled(name)
            raise SkillBaseMoved(name, pointed)
        if fork_id is not None and base.version is not None:
            await insert_fork_row(conn, organization_id, base.version, fork_id, editor.author)
        await insert_skill_version(
            conn,
            version_id=version_id,
            organization_id=organization_id,
            name=name,
            description=draft.description,
            body=draft.body,
            matcher=draft.matcher,
            manifest=package.manifest,
            created_by="user",
            content_sha256=draft.content_sha256,
            frontmatter=draft.frontmatter,
            skill_md=draft.skill_md,
            created_via=CreatedVia.EDITOR,
            author=editor.author,
        )
        if pointed is None:
            if not await insert_skill_pointer(conn, organization_id, name, version_id):
                raise SkillAlreadyInstalled(name)
        else:
            await upsert_skill_pointer(conn, organization_id, name, version_id)
        previous = await reactivate_installed_skill(conn, organization_id, name)
        result = EditResult(
            name,
            version_id,
            None if base.version is None else base.version.version_id,
            created=pointed is None,
            forked_from_version_id=base.version.version_id if base.fork and base.version else None,
            reactivated_from=previous,
        )
        audit_detail = {**detail, "created": result.created}
        if result.forked_from_version_id is not None:
            audit_detail["forked_from_version_id"] = str(result.forked_from_version_id)
        await _audit(conn, organization_id, editor, action, name, pointed, version_id, audit_detail)
    return result


async def rollback_skill(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    name: str,
    version_id: uuid.UUID,
    base_version_id: uuid.UUID,
    editor: Editor,
) -> EditResult:
    """Point `name` back at an older published version of the same skill and org."""
    await require_organization(conn, organization_id)
    async with conn.transaction():
        await lock_curator_orgs(conn, [organization_id])
        if await fetch_skill_version(conn, organization_id, name, version_id) is None:
            raise SkillVersionNotFound(name)
        pointed = await lock_skill_pointer(conn, organization_id, name)
        if pointed is None:
            raise SkillNotInstalled(name)
        if pointed != base_version_id:
            raise SkillBaseMoved(name, pointed)
        await upsert_skill_pointer(conn, organization_id, name, version_id)
        previous = await reactivate_installed_skill(conn, organization_id, name)
        await _audit(conn, organization_id, editor, "skill.rollback", name, pointed, version_id, {})
    return EditResult(name, version_id, pointed, created=False, reactivated_from=previous)


async def _audit(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    editor: Editor,
    action: str,
    name: str,
    before: uuid.UUID | None,
    after: uuid.UUID,
    detail: dict[str, object],
) -> None:
    await insert_audit(
        conn,
        AuditEntry(
            organization_id,
            editor.actor,
            action,
            skill_name=name,
            before_version_id=before,
            after_version_id=after,
            detail=detail,
        ),
    )
