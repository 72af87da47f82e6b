"""Publish a skill version: store its files, then the immutable row, then move the pointer."""

from __future__ import annotations

import hashlib
import mimetypes
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from core.object_store import ObjectStore, object_key
from skills.models import (
    DEFAULT_FRONTMATTER,
    FileKind,
    ManifestEntry,
    SkillFrontmatter,
    SkillMatcher,
    VersionAuthor,
)
from skills.queries import insert_skill_version, upsert_skill_pointer


@dataclass(frozen=True)
class SkillFile:
    path: str
    data: bytes
    kind: FileKind


@dataclass(frozen=True)
class SkillDraft:
    """Everything a new version holds; validation happened before (parser or tool)."""

    name: str
    description: str
    body: str
    matcher: SkillMatcher
    files: tuple[SkillFile, ...] = ()
    content_sha256: str | None = None
    frontmatter: SkillFrontmatter = DEFAULT_FRONTMATTER
    skill_md: bytes | None = None  # as uploaded; None for the agent's own skills


TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
# Media an asset may be labelled as; anything else (HTML, SVG, scripts, archives) is stored as
# opaque bytes, so an uploaded page or script is never served as active content by a bucket
# someone exposes. skillet itself reads objects back as bytes and never executes them.
_MEDIA_PREFIXES = ("image/", "audio/", "video/")
_MEDIA_TYPES = frozenset({"application/pdf"})
_ACTIVE_MEDIA = frozenset({"image/svg+xml"})


def content_type_of(path: str, kind: FileKind) -> str:
    """The Content-Type an object is stored with (see above)."""
    if kind is not FileKind.ASSET:
        return TEXT_CONTENT_TYPE
    guessed = mimetypes.guess_type(path)[0] or ""
    media = guessed.startswith(_MEDIA_PREFIXES) or guessed in _MEDIA_TYPES
    return guessed if media and guessed not in _ACTIVE_MEDIA else "application/octet-stream"


def manifest_of(files: Sequence[SkillFile]) -> tuple[ManifestEntry, ...]:
    return tuple(
        ManifestEntry(
            path=f.path, size=len(f.data), sha256=hashlib.sha256(f.data).hexdigest(), kind=f.kind
        )
        for f in sorted(files, key=lambda f: f.path)
    )


async def store_skill_files(
    store: ObjectStore, *, organization_id: uuid.UUID | None, draft: SkillDraft
) -> uuid.UUID:
    """Upload the draft's files under a fresh version id; nothing points at it yet."""
    version_id = uuid.uuid4()
    for file in draft.files:
        content_type = content_type_of(file.path, file.kind)
        key = object_key(organization_id, draft.name, version_id, file.path)
        await store.put(key, file.data, content_type)
    return version_id


async def insert_version_and_pointer(
    conn: asyncpg.Connection,
    *,
    version_id: uuid.UUID,
    organization_id: uuid.UUID | None,
    draft: SkillDraft,
    created_by: str,
    forked_from_version_id: uuid.UUID | None = None,
    author: VersionAuthor | None = None,
) -> None:
    """The immutable version row, then the pointer moved to it; the caller owns the
    transaction and has stored every file under `version_id` already. `author`: the API key
    that made it, when one did."""
    await insert_skill_version(
        conn,
        version_id=version_id,
        organization_id=organization_id,
        name=draft.name,
        description=draft.description,
        body=draft.body,
        matcher=draft.matcher,
        manifest=manifest_of(draft.files),
        created_by=created_by,
        forked_from_version_id=forked_from_version_id,
        content_sha256=draft.content_sha256,
        frontmatter=draft.frontmatter,
        skill_md=draft.skill_md,
        author=author,
    )
    await upsert_skill_pointer(conn, organization_id, draft.name, version_id)


async def publish_skill_version(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID | None,
    draft: SkillDraft,
    created_by: str,
    forked_from_version_id: uuid.UUID | None = None,
) -> uuid.UUID:
    """Objects first, then version + pointer in one transaction.

    If any upload fails nothing points at the new version, so turns keep the previous one;
    orphan objects under an unreferenced version id are harmless.
    """
    version_id = await store_skill_files(store, organization_id=organization_id, draft=draft)
    async with conn.transaction():
        await insert_version_and_pointer(
            conn,
            version_id=version_id,
            organization_id=organization_id,
            draft=draft,
            created_by=created_by,
            forked_from_version_id=forked_from_version_id,
        )
    return version_id
