"""Approve a draft by merging it into the installed skill it is the same thing as: a new
version of that skill whose body gains the draft's text and whose keywords gain the draft's.

The merged SKILL.md goes through the package rules (skills.authoring_rules.check_skill_md:
size, body lines, frontmatter), so a merge that would be too long is refused with the rule's
code and nothing changes. The target's files are copied to the new version (objects first,
then one transaction: version, pointer, the draft decided as approved, usage and audit
`draft.merge`), under the org's catalog lock as every authoring write.
"""

from __future__ import annotations

import uuid

import asyncpg

from core.audit import AuditEntry, insert_audit
from core.object_store import ObjectStore, object_key
from skills.authoring_rules import check_skill_md, render_skill_md
from skills.catalog import catalog_lock
from skills.catalog_queries import fetch_org_pointed_version
from skills.curator.queries import lock_curator_orgs
from skills.draft_queries import DraftStatus, lock_pending_draft, update_draft_decided
from skills.drafts import Decision, DraftError
from skills.models import SkillMatcher
from skills.queries import insert_skill_version, upsert_skill_pointer


def merged_body(body: str, addition: str) -> str:
    return f"{body.rstrip()}\n\n{addition.strip()}\n"


def merged_matcher(target: SkillMatcher, draft: SkillMatcher) -> SkillMatcher:
    return SkillMatcher(
        any_keywords=list(dict.fromkeys([*target.any_keywords, *draft.any_keywords])),
        probe_keywords=list(dict.fromkeys([*target.probe_keywords, *draft.probe_keywords])),
    )


async def merge_draft(
    conn: asyncpg.Connection,
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    into: str,
    actor: str,
) -> Decision:
    """Merge the pending draft `name` into the installed skill `into` (see the docstring)."""
    async with catalog_lock(conn, organization_id):
        target = await fetch_org_pointed_version(conn, organization_id, into)
        if target is None:
            raise DraftError(f"A skill {into} não está instalada.", code="merge_target_missing")
        version_id = uuid.uuid4()
        for entry in target.manifest:  # objects first: nothing names them yet
            await store.copy(
                object_key(organization_id, into, target.version_id, entry.path),
                object_key(organization_id, into, version_id, entry.path),
            )
        async with conn.transaction():
            await lock_curator_orgs(conn, [organization_id])
            draft = await lock_pending_draft(conn, organization_id, name)
            if draft is None:
                raise DraftError(
                    f"Não há rascunho pendente da skill {name}.", code="draft_not_found"
                )
            matcher = merged_matcher(target.matcher, draft.version.matcher)
            body = merged_body(target.body, draft.version.body)
            text = render_skill_md(into, target.description, matcher, body, target.frontmatter)
            parsed = check_skill_md(text, expected_name=into)
            await insert_skill_version(
                conn,
                version_id=version_id,
                organization_id=organization_id,
                name=into,
                description=parsed.description,
                body=parsed.body,
                matcher=parsed.matcher,
                manifest=target.manifest,
                created_by=target.created_by,
                forked_from_version_id=target.forked_from_version_id,
                frontmatter=target.frontmatter,
            )
            await upsert_skill_pointer(conn, organization_id, into, version_id)
            await update_draft_decided(conn, organization_id, draft.id, DraftStatus.APPROVED, actor)
            decision = Decision(name, draft.id, DraftStatus.APPROVED, target.version_id, version_id)
            await insert_audit(
                conn,
                AuditEntry(
                    organization_id,
                    actor,
                    "draft.merge",
                    skill_name=into,
                    before_version_id=target.version_id,
                    after_version_id=version_id,
                    detail={"draft_id": str(draft.id), "draft": name},
                ),
            )
    return decision
