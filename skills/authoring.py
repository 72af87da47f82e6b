"""skill_manage's writes: every change a new immutable version of an agent-authored skill.

Customers talk to the agent; the business decides what it knows. So by the org's
`agent_authoring` mode a write is:
- `review` (default): a *draft*: the version is stored and named by the skill's one pending
  `skill_drafts` row; no pointer moves, so index, matcher and references are unchanged until
  a person approves it (skills.drafts). Later edits build on the pending draft.
- `auto`: published at once (pointer + `patch` usage bump), for a bot whose only user is its
  owner.
- `off`: refused.

Under the org's catalog lock: read what the change builds on (the pending draft, else the
installed version), apply it in memory, check the package limits, store the new version's
files (unchanged ones copied server-side), then version row + draft or pointer in one
transaction. Nothing is deleted. Only skills the agent created may change
(`skill_read_only`); catalog names are reserved (`skill_name_reserved`); at most
`max_pending_drafts` pending drafts per org. Drafts are not curator activity: no usage bump
until a person approves.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from core.object_store import ObjectStore, object_key
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
from skills.catalog import catalog_lock, reactivate_installed_skill
from skills.catalog_queries import (
    PointedVersion,
    fetch_org_pointed_version,
    fetch_platform_pointed_version,
    insert_skill_pointer,
)
from skills.curator.queries import lock_curator_orgs
from skills.draft_queries import (
    AuthoringMode,
    Draft,
    count_pending_drafts,
    fetch_pending_draft,
    insert_draft,
    update_draft_version,
)
from skills.models import FileKind, ManifestEntry, SkillMatcher
from skills.package.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, PackageLimits
from skills.package.skill_md import SkillMd
from skills.publisher import SkillFile, content_type_of, manifest_of
from skills.queries import insert_skill_version, upsert_skill_pointer
from skills.usage import UsageBump, UsageEvent, UsageStore

MAX_PENDING_DRAFTS = 50


@dataclass(frozen=True)
class AuthoringLimits:
    """The agent's caps: the deployment's package limits (skills.package.limits) and how many
    drafts may wait for review."""

    max_pending_drafts: int = MAX_PENDING_DRAFTS
    max_files: int = MAX_FILES  # SKILL.md included, as for an uploaded package
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_file_bytes: int = MAX_FILE_BYTES

    @classmethod
    def of(cls, limits: PackageLimits) -> AuthoringLimits:
        return cls(
            max_files=limits.max_files,
            max_total_bytes=limits.max_total_bytes,
            max_file_bytes=limits.max_file_bytes,
        )


@dataclass(frozen=True)
class AuthoredVersion:
    name: str
    version_id: uuid.UUID
    draft_id: uuid.UUID | None = None  # None: published (auto mode)


@dataclass(frozen=True)
class _Base:
    """What a change builds on: the pending draft's version, else the installed one."""

    current: PointedVersion
    draft: Draft | None


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
    mode: AuthoringMode = AuthoringMode.REVIEW
    limits: AuthoringLimits = AuthoringLimits()
    conversation_id: uuid.UUID | None = None
    # (sha256, size) -> whether the model saw that file content whole in this turn; None: no
    # such check (a person or a test writing directly).
    read_whole: Callable[[str, int], bool] | None = None

    async def create(
        self,
        name: object,
        description: object,
        body: object,
        any_keywords: object,
        probe_keywords: object = None,
    ) -> AuthoredVersion:
        self._require_enabled()
        name = check_name(name)
        matcher = _matcher(any_keywords, probe_keywords)
        text = render_skill_md(name, check_description(description), matcher, _text(body, "body"))
        skill = check_skill_md(text, expected_name=name)
        async with catalog_lock(self.conn, self.organization_id):
            if await fetch_platform_pointed_version(self.conn, name) is not None:
                raise AuthoringError(
                    f"O nome {name} é de uma skill do catálogo da plataforma e está reservado. "
                    "Escolha outro nome.",
                    code="skill_name_reserved",
                )
            if await fetch_org_pointed_version(self.conn, self.organization_id, name):
                raise AuthoringError(
                    f"Já existe uma skill chamada {name}. Escolha outro nome ou use patch.",
                    code="skill_exists",
                )
            if await fetch_pending_draft(self.conn, self.organization_id, name):
                raise AuthoringError(
                    f"Já existe um rascunho da skill {name} aguardando aprovação; "
                    "altere-o com patch, write_file ou remove_file.",
                    code="draft_exists",
                )
            return await self._write(None, _Change(skill, (), ()))

    async def patch(
        self, name: object, old: object, new: object, file_path: object = None
    ) -> AuthoredVersion:
        self._require_enabled()
        async with catalog_lock(self.conn, self.organization_id):
            base = await self._editable(name)
            current = base.current
            if file_path is None or file_path == SKILL_MD:
                text = render_skill_md(
                    current.name,
                    current.description,
                    current.matcher,
                    current.body,
                    current.frontmatter,
                )
                skill = check_skill_md(replace_unique(text, old, new), expected_name=current.name)
                return await self._write(base, _Change(skill, current.manifest, ()))
            path, kind = check_support_path(file_path)
            entry = _entry(current, path)
            stored = await self.store.get(
                object_key(self.organization_id, current.name, current.version_id, path),
                max_bytes=entry.size,
            )
            content = replace_unique(stored.data.decode("utf-8", errors="replace"), old, new)
            return await self._write_file(base, path, kind, content)

    async def write_file(self, name: object, path: object, content: object) -> AuthoredVersion:
        self._require_enabled()
        checked_path, kind = check_support_path(path)
        async with catalog_lock(self.conn, self.organization_id):
            base = await self._editable(name)
            return await self._write_file(base, checked_path, kind, content)

    async def remove_file(self, name: object, path: object) -> AuthoredVersion:
        self._require_enabled()
        checked_path, _ = check_support_path(path)
        async with catalog_lock(self.conn, self.organization_id):
            base = await self._editable(name)
            _entry(base.current, checked_path)
            kept = tuple(e for e in base.current.manifest if e.path != checked_path)
            return await self._write(base, _Change(_skill_of(base.current), kept, ()))

    async def _write_file(
        self, base: _Base, path: str, kind: FileKind, content: object
    ) -> AuthoredVersion:
        data = check_file_content(content, max_bytes=self.limits.max_file_bytes)
        replaced = next((e for e in base.current.manifest if e.path == path), None)
        if (
            replaced is not None
            and self.read_whole is not None
            and not self.read_whole(replaced.sha256, replaced.size)
        ):
            raise AuthoringError(
                f"{path} já existe ({replaced.size} bytes) e write_file o substitui inteiro; "
                "leia-o todo nesta mensagem com skill_view (file_path, draft=true se houver "
                "rascunho, e offset para os trechos seguintes) ou mude só um trecho com "
                "action=patch.",
                code="file_not_read",
            )
        kept = tuple(e for e in base.current.manifest if e.path != path)
        added = (SkillFile(path, data, kind),)
        return await self._write(base, _Change(_skill_of(base.current), kept, added))

    def _require_enabled(self) -> None:
        if self.mode is AuthoringMode.OFF:
            raise AuthoringError(
                "A empresa desativou a criação e a edição de skills pelo agente; "
                "siga a conversa com as skills que existem.",
                code="authoring_off",
            )

    async def _editable(self, name: object) -> _Base:
        checked = check_name(name)
        if self.mode is AuthoringMode.REVIEW:
            draft = await fetch_pending_draft(self.conn, self.organization_id, checked)
            if draft is not None:
                return _Base(draft.version, draft)
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
        return _Base(current, None)

    async def _write(self, base: _Base | None, change: _Change) -> AuthoredVersion:
        manifest = sorted((*change.kept, *manifest_of(change.added)), key=lambda e: e.path)
        self._check_size(change.skill, manifest)
        drafting = self.mode is AuthoringMode.REVIEW
        if drafting and (base is None or base.draft is None):
            await self._check_draft_room()
        version_id = uuid.uuid4()
        current = None if base is None else base.current
        await self._store_files(current, change, version_id)
        skill = change.skill
        async with self.conn.transaction():
            if not drafting:
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
                frontmatter=skill.frontmatter,
            )
            if drafting:
                draft_id = await self._save_draft(base, skill.name, version_id)
                return AuthoredVersion(skill.name, version_id, draft_id)
            if current is None:
                await insert_skill_pointer(self.conn, self.organization_id, skill.name, version_id)
                # A name the curator archived before an uninstall starts afresh.
                await reactivate_installed_skill(self.conn, self.organization_id, skill.name)
            else:
                await upsert_skill_pointer(self.conn, self.organization_id, skill.name, version_id)
            bump = UsageBump(self.organization_id, skill.name, UsageEvent.PATCH)
            await self.usage.record(self.conn, [bump])
        return AuthoredVersion(skill.name, version_id)

    async def _save_draft(self, base: _Base | None, name: str, version_id: uuid.UUID) -> uuid.UUID:
        if base is not None and base.draft is not None:
            if not await update_draft_version(
                self.conn, self.organization_id, base.draft.id, version_id
            ):
                raise AuthoringError(
                    f"O rascunho da skill {name} acabou de ser decidido pela empresa; "
                    "veja a versão atual com skill_view antes de propor outra mudança.",
                    code="draft_decided",
                )
            return base.draft.id
        return await insert_draft(
            self.conn,
            organization_id=self.organization_id,
            name=name,
            version_id=version_id,
            base_version_id=None if base is None else base.current.version_id,
            conversation_id=self.conversation_id,
        )

    async def _check_draft_room(self) -> None:
        pending = await count_pending_drafts(self.conn, self.organization_id)
        if pending >= self.limits.max_pending_drafts:
            raise AuthoringError(
                f"Já há {pending} rascunhos aguardando aprovação da empresa (o limite é "
                f"{self.limits.max_pending_drafts}); não crie outros até que sejam revisados.",
                code="draft_limit_reached",
            )

    def _check_size(self, skill: SkillMd, manifest: Sequence[ManifestEntry]) -> None:
        files = len(manifest) + 1  # SKILL.md
        if files > self.limits.max_files:
            raise AuthoringError(
                f"A skill ficaria com {files} arquivos; o limite é {self.limits.max_files} "
                "(SKILL.md incluído). Remova um arquivo antes de criar outro.",
                code="skill_too_many_files",
            )
        skill_md = render_skill_md(
            skill.name, skill.description, skill.matcher, skill.body, skill.frontmatter
        )
        total = len(skill_md.encode("utf-8")) + sum(e.size for e in manifest)
        if total > self.limits.max_total_bytes:
            raise AuthoringError(
                f"A skill ficaria com {total} bytes; o limite é {self.limits.max_total_bytes} "
                "bytes somando todos os arquivos. Encurte ou remova arquivos.",
                code="skill_too_large",
            )

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
            content_type = content_type_of(file.path, file.kind)
            await self.store.put(
                object_key(org, name, version_id, file.path), file.data, content_type
            )


def _skill_of(current: PointedVersion) -> SkillMd:
    return SkillMd(
        current.name, current.description, current.matcher, current.body, current.frontmatter
    )


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
