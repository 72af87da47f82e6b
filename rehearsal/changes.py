"""A change to an org's installed skills, as a rehearsal tries it: the skills it installs
(new, or a new version of one by that name) and the names it takes out.

`changed_set` is pure; `resolve_*` read what a draft or a proposal would install. A typed
skill (`typed_skill`) becomes a SKILL.md and goes through the package's own rules, so it is
refused (SkillPackageError, the package's code) exactly as an upload of it would be.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import asyncpg

from rehearsal.errors import draft_not_found, proposal_not_found, skill_not_installed
from rehearsal.queries import fetch_pending_proposal
from skills.draft_queries import fetch_pending_draft
from skills.models import LoadedSkill
from skills.package.skill_md import KEYWORDS_KEY, PROBE_KEYWORDS_KEY, SkillMd, parse_skill_md

# A typed skill is not stored: it stands in the set under a version id of its own.
UNSAVED_VERSION_ID = uuid.UUID(int=0)


@dataclass(frozen=True)
class Change:
    installs: tuple[LoadedSkill, ...] = ()
    removes: tuple[str, ...] = ()


def changed_set(installed: Sequence[LoadedSkill], change: Change) -> tuple[LoadedSkill, ...]:
    """`installed` with `change` applied, sorted by name as the loader sorts it."""
    out = {s.name: s for s in installed if s.name not in change.removes}
    for skill in change.installs:
        out[skill.name] = skill
    return tuple(out[name] for name in sorted(out))


def uninstall(installed: Sequence[LoadedSkill], name: str) -> Change:
    if all(s.name != name for s in installed):
        raise skill_not_installed(name)
    return Change(removes=(name,))


async def resolve_draft(conn: asyncpg.Connection, organization_id: uuid.UUID, name: str) -> Change:
    """What approving the pending draft `name` would install."""
    draft = await fetch_pending_draft(conn, organization_id, name)
    if draft is None:
        raise draft_not_found(name)
    v = draft.version
    skill = LoadedSkill(
        version_id=v.version_id,
        name=draft.name,
        description=v.description,
        body=v.body,
        matcher=v.matcher,
        manifest=v.manifest,
        created_by=v.created_by,
    )
    return Change(installs=(skill,))


async def resolve_proposal(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal_id: uuid.UUID
) -> Change:
    """What approving the pending proposal would do: the umbrella's new version, the
    absorbed skills archived."""
    found = await fetch_pending_proposal(conn, organization_id, proposal_id)
    if found is None:
        raise proposal_not_found(proposal_id)
    return Change(installs=(found.umbrella,), removes=found.absorbed)


def skill_md_text(
    name: str, description: str, body: str, keywords: str, probe_keywords: str
) -> str:
    """A SKILL.md of these fields (keywords in the package's comma-separated syntax); the
    values are JSON strings, which YAML reads as they are."""
    lines = ["---", f"name: {_quoted(name)}", f"description: {_quoted(description)}"]
    if keywords.strip() or probe_keywords.strip():
        lines += ["metadata:", f"  {KEYWORDS_KEY}: {_quoted(keywords)}"]
        if probe_keywords.strip():
            lines.append(f"  {PROBE_KEYWORDS_KEY}: {_quoted(probe_keywords)}")
    return "\n".join([*lines, "---", body])


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def typed_skill(
    name: str, description: str, body: str, keywords: str, probe_keywords: str
) -> Change:
    """A new skill or a new version, typed field by field, checked by the package rules."""
    text = skill_md_text(name, description, body, keywords, probe_keywords)
    return Change(installs=(_loaded(parse_skill_md(text.encode("utf-8"))),))


def skill_file(raw: bytes) -> Change:
    """A SKILL.md file's skill (the CLI's --skill-file), checked by the package rules."""
    return Change(installs=(_loaded(parse_skill_md(raw)),))


def _loaded(parsed: SkillMd) -> LoadedSkill:
    return LoadedSkill(
        version_id=UNSAVED_VERSION_ID,
        name=parsed.name,
        description=parsed.description,
        body=parsed.body,
        matcher=parsed.matcher,
    )


# Reads what a change installs or takes out, on the rehearsal's connection, with the
# installed set at hand (rehearsal.run calls it under the org's lock).
ChangeOf = Callable[[asyncpg.Connection, tuple[LoadedSkill, ...]], Awaitable[Change]]


def requested_change(
    organization_id: uuid.UUID,
    *,
    draft: str | None = None,
    proposal: uuid.UUID | None = None,
    typed: Change | None = None,
    uninstalled: str | None = None,
) -> ChangeOf:
    """The one change asked for (the caller checks that exactly one is given)."""

    async def read(conn: asyncpg.Connection, installed: tuple[LoadedSkill, ...]) -> Change:
        if typed is not None:
            return typed
        if draft is not None:
            return await resolve_draft(conn, organization_id, draft)
        if proposal is not None:
            return await resolve_proposal(conn, organization_id, proposal)
        assert uninstalled is not None
        return uninstall(installed, uninstalled)

    return read
