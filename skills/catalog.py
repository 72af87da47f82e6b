"""An org's skills as a user manages them: import a package, install from the catalog,
uninstall, list. The organization id always comes from the trusted caller, never a package.

Writes of one owner (an org, or the platform catalog) run under that owner's Postgres
advisory lock (skills.catalog_queries.lock_skill_catalog), so "is it unchanged / already
installed?" and the write that follows see the same state even with concurrent callers. The
transaction that moves an org's pointer also takes the curator's org lock, so a pointer change
and a curator pass never interleave.
Objects are always stored before the version row and pointer (skills.publisher), so a
failure half-way leaves the previous version installed and the pointer unmoved.
With an `actor` (the admin API passes its key's prefix), each change writes its audit row
in the transaction that moves the pointer, so the row stands or falls with the change.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import asyncpg

from core.audit import AuditEntry, insert_audit
from core.object_store import ObjectStore, object_key
from skills.catalog_errors import (
    CatalogSkillNotFound,
    OrganizationNotFound,
    SkillAlreadyInstalled,
    SkillNotInstalled,
)
from skills.catalog_models import (
    CatalogSkill,
    ImportResult,
    ImportStatus,
    InstalledSkill,
    InstallResult,
    SkillListing,
    SkillSource,
    skill_source,
)
from skills.catalog_queries import (
    PointedVersion,
    fetch_org_pointed_version,
    fetch_organization_exists,
    fetch_platform_pointed_version,
    insert_skill_pointer,
    list_catalog_skill_names,
    list_catalog_skills_not_installed,
    list_org_skills,
    lock_skill_catalog,
    unlock_skill_catalog,
)
from skills.curator.queries import lock_curator_orgs
from skills.export.archive import exported_verbatim
from skills.models import VersionAuthor
from skills.package import PackageLimits, SkillPackage, parse_skill_package
from skills.package.limits import DEFAULT_LIMITS
from skills.publisher import SkillDraft, SkillFile, insert_version_and_pointer, store_skill_files
from skills.queries import delete_skill_pointer, insert_skill_version
from skills.usage_queries import reactivate_usage

__all__ = [
    "CatalogSkill",
    "ImportResult",
    "ImportStatus",
    "InstallResult",
    "InstalledSkill",
    "SkillListing",
    "SkillSource",
    "catalog_lock",
    "draft_of",
    "import_skill_package",
    "install_catalog_skill",
    "list_skills",
    "publish_package",
    "reactivate_installed_skill",
    "skill_source",
    "uninstall_skill",
]


def same_content(current: PointedVersion, package: SkillPackage) -> bool:
    """Whether importing `package` over `current` changes nothing ("unchanged").

    Same bytes (SKILL.md as uploaded and every file) always are. When `current`'s export
    is not its stored SKILL.md byte for byte (a version stored before skill_versions kept
    skill_md, the agent's own, or one uploaded with our legacy `matcher`: skills.export.archive
    renders those), the same parsed content and files are too, so exporting and re-importing any
    version is "unchanged"."""
    if current.content_sha256 == package.content_sha256:
        return True
    if current.skill_md is not None and exported_verbatim(current.skill_md):
        return False
    return (
        current.name,
        current.description,
        current.body,
        current.matcher,
        current.frontmatter,
        current.manifest,
    ) == (
        package.name,
        package.description,
        package.body,
        package.matcher,
        package.frontmatter,
        package.manifest,
    )


def draft_of(package: SkillPackage) -> SkillDraft:
    return SkillDraft(
        name=package.name,
        description=package.description,
        body=package.body,
        matcher=package.matcher,
        files=tuple(SkillFile(f.path, f.data, f.kind) for f in package.files),
        content_sha256=package.content_sha256,
        frontmatter=package.frontmatter,
        skill_md=package.skill_md,
    )


@contextlib.asynccontextmanager
async def catalog_lock(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None
) -> AsyncIterator[None]:
    """Hold the owner's catalog lock for the block (session-level: no transaction held open
    while objects upload; released even if the block fails)."""
    await lock_skill_catalog(conn, organization_id)
    try:
        yield
    finally:
        # A broken connection already took its session lock with it: do not mask the error.
        with contextlib.suppress(asyncpg.InterfaceError, asyncpg.PostgresConnectionError, OSError):
            await unlock_skill_catalog(conn, organization_id)


async def _lock_against_curator(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None
) -> None:
    """A pointer change and a curator pass over the same org never interleave (the curator
    reads each installed version's provenance, then writes states). Transaction-scoped."""
    if organization_id is not None:
        await lock_curator_orgs(conn, [organization_id])


async def require_organization(conn: asyncpg.Connection, organization_id: uuid.UUID) -> None:
    if not await fetch_organization_exists(conn, organization_id):
        raise OrganizationNotFound(organization_id)


async def fetch_pointed_version(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None, name: str
) -> PointedVersion | None:
    if organization_id is None:
        return await fetch_platform_pointed_version(conn, name)
    return await fetch_org_pointed_version(conn, organization_id, name)


async def publish_package(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID | None,
    package: SkillPackage,
    created_by: str,
    actor: str | None = None,
    author: VersionAuthor | None = None,
) -> ImportResult:
    """A new version + pointer, unless the owner's current version has the same content.

    Either way an org's import is activity: a skill the curator made stale or archived is
    active again (its pointer and state change together)."""
    async with catalog_lock(conn, organization_id):
        current = await fetch_pointed_version(conn, organization_id, package.name)
        before = None if current is None else current.version_id
        if current is not None and same_content(current, package):
            async with conn.transaction():
                await _lock_against_curator(conn, organization_id)
                previous = await _reactivate(conn, organization_id, package.name)
                result = ImportResult(
                    package.name, current.version_id, ImportStatus.UNCHANGED, previous
                )
                await _audit_import(conn, organization_id, actor, before, result)
            return result
        draft = draft_of(package)
        # Objects first: if an upload fails, nothing points at the new version.
        version_id = await store_skill_files(store, organization_id=organization_id, draft=draft)
        async with conn.transaction():
            await _lock_against_curator(conn, organization_id)
            await insert_version_and_pointer(
                conn,
                version_id=version_id,
                organization_id=organization_id,
                draft=draft,
                created_by=created_by,
                author=author,
            )
            previous = await _reactivate(conn, organization_id, package.name)
            result = ImportResult(package.name, version_id, ImportStatus.IMPORTED, previous)
            await _audit_import(conn, organization_id, actor, before, result)
    return result


async def _audit_import(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID | None,
    actor: str | None,
    before: uuid.UUID | None,
    result: ImportResult,
) -> None:
    detail: dict[str, object] = {"status": str(result.status)}
    if result.reactivated_from is not None:
        detail["reactivated_from"] = result.reactivated_from
    await _audit(
        conn, organization_id, actor, "skill.import", result.name, before, result.version_id, detail
    )


async def _audit(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID | None,
    actor: str | None,
    action: str,
    name: str,
    before: uuid.UUID | None,
    after: uuid.UUID | None,
    detail: dict[str, object] | None = None,
) -> None:
    """One audit row in the caller's transaction; nothing without an actor (the CLI, the
    catalog seed) or for the platform catalog."""
    if actor is None or organization_id is None:
        return
    entry = AuditEntry(
        organization_id,
        actor,
        action,
        skill_name=name,
        before_version_id=before,
        after_version_id=after,
        detail=detail or {},
    )
    await insert_audit(conn, entry)


async def reactivate_installed_skill(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> str | None:
    """Installing, importing or approving the org's skill `name` is activity: a usage row the
    curator left 'stale' or 'archived' (perhaps by an earlier install of that name) is active
    again, so the next turn loads it. Returns the state it left, or None when there was
    nothing to change (no usage row yet, or already active).

    Call it in the transaction that moves the org's pointer, so pointer and state change
    together. It takes the org's curator lock (transaction-scoped; taking it twice is fine),
    so a curator pass cannot undo it mid-way. Without an open transaction it opens its own.
    """
    async with conn.transaction():
        await lock_curator_orgs(conn, [organization_id])
        return await reactivate_usage(conn, organization_id, name)


async def _reactivate(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None, name: str
) -> str | None:
    if organization_id is None:
        return None  # platform skills have no usage of their own
    return await reactivate_installed_skill(conn, organization_id, name)


async def import_skill_package(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    data: bytes,
    actor: str | None = None,
    limits: PackageLimits = DEFAULT_LIMITS,
    author: VersionAuthor | None = None,
) -> ImportResult:
    """Parse an uploaded .zip and publish it as the org's `name` (a customize if installed).

    Raises SkillPackageError before touching storage or the database when the package is
    refused, and OrganizationNotFound before storing anything for an unknown org.
    """
    package = parse_skill_package(data, limits=limits)
    await require_organization(conn, organization_id)
    return await publish_package(
        conn,
        store,
        organization_id=organization_id,
        package=package,
        created_by="user",
        actor=actor,
        author=author,
    )


async def install_catalog_skill(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    actor: str | None = None,
    author: VersionAuthor | None = None,
) -> InstallResult:
    """Fork-on-install: a new org version copied from the catalog's, objects copied server-side
    to the org's prefix, then version + pointer in one transaction. Refused if the org already
    has `name` (installed, customized or archived). Like an import, an install is activity:
    a usage row left stale/archived under that name (reactivate_installed_skill) is active."""
    await require_organization(conn, organization_id)
    async with catalog_lock(conn, organization_id):
        if await fetch_org_pointed_version(conn, organization_id, name) is not None:
            raise SkillAlreadyInstalled(name)
        platform = await fetch_platform_pointed_version(conn, name)
        if platform is None:
            raise CatalogSkillNotFound(name, await list_catalog_skill_names(conn))
        version_id = uuid.uuid4()
        for entry in platform.manifest:
            await store.copy(
                object_key(None, name, platform.version_id, entry.path),
                object_key(organization_id, name, version_id, entry.path),
            )
        previous = await _insert_fork(conn, organization_id, platform, version_id, actor, author)
    return InstallResult(name, version_id, platform.version_id, previous)


async def _insert_fork(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    platform: PointedVersion,
    version_id: uuid.UUID,
    actor: str | None,
    author: VersionAuthor | None = None,
) -> str | None:
    """Version, pointer, usage state and audit row in one transaction; the state the usage
    left."""
    async with conn.transaction():
        await _lock_against_curator(conn, organization_id)
        await insert_skill_version(
            conn,
            version_id=version_id,
            organization_id=organization_id,
            name=platform.name,
            description=platform.description,
            body=platform.body,
            matcher=platform.matcher,
            manifest=platform.manifest,
            created_by="user",
            forked_from_version_id=platform.version_id,
            content_sha256=platform.content_sha256,
            frontmatter=platform.frontmatter,
            skill_md=platform.skill_md,
            author=author,
        )
        # Insert-only: a pointer that appeared anyway (a writer that skipped the lock) wins,
        # and this transaction, version row included, rolls back.
        if not await insert_skill_pointer(conn, organization_id, platform.name, version_id):
            raise SkillAlreadyInstalled(platform.name)
        previous = await reactivate_installed_skill(conn, organization_id, platform.name)
        detail: dict[str, object] = {"forked_from_version_id": str(platform.version_id)}
        if previous is not None:
            detail["reactivated_from"] = previous
        await _audit(
            conn, organization_id, actor, "skill.install", platform.name, None, version_id, detail
        )
        return previous


async def uninstall_skill(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    name: str,
    actor: str | None = None,
) -> None:
    """Delete the org's pointer only: gone from the next turn; versions and objects stay."""
    await require_organization(conn, organization_id)
    async with conn.transaction():
        await _lock_against_curator(conn, organization_id)
        current = await fetch_org_pointed_version(conn, organization_id, name)
        if current is None or not await delete_skill_pointer(conn, organization_id, name):
            raise SkillNotInstalled(name)
        await _audit(
            conn, organization_id, actor, "skill.uninstall", name, current.version_id, None
        )


async def list_skills(conn: asyncpg.Connection, *, organization_id: uuid.UUID) -> SkillListing:
    await require_organization(conn, organization_id)
    installed = tuple(
        InstalledSkill(
            name=r.name,
            description=r.description,
            version_id=r.version_id,
            source=skill_source(r.created_by, r.forked_from_version_id),
            updated_at=r.updated_at,
            state=r.state,
            absorbed_into=r.absorbed_into,
        )
        for r in await list_org_skills(conn, organization_id)
    )
    catalog = tuple(
        CatalogSkill(r.name, r.description)
        for r in await list_catalog_skills_not_installed(conn, organization_id)
    )
    return SkillListing(installed, catalog)
