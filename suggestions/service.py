"""Sugestões for one org: its lessons grouped, a group dismissed, a group taught as a draft,
a removed value restored. The org comes from the caller (the key's), never from a body.

SuggestionError (core.errors.SkilletError)
├── suggestion_not_found        no visible group of that id
└── suggestion_value_not_found  no pending suggestion draft of that name, or no removed
                                value of that key on it

A draft made here is a new skill version (created_by 'user': the business's words, never
the agent's) named by a pending skill_drafts row, whatever the org's agent_authoring says:
it is approved by a person like any draft (skills.drafts), never automatically.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import asyncpg

from conversation.handoff.texts import HANDOFF_ACK_DEFAULT, HANDOFF_WAIT_NOTICE_DEFAULT
from core.audit import AuditEntry, insert_audit
from core.errors import SkilletError
from similarity.backend import Embedder
from skills.catalog import catalog_lock
from skills.catalog_queries import fetch_platform_pointed_version
from skills.draft_queries import fetch_pending_draft, insert_draft, update_draft_version
from skills.models import CreatedVia, SkillMatcher
from skills.queries import insert_skill_version, list_installed_skills
from suggestions.draft_content import DraftContent, body_of, draft_content
from suggestions.grouping import LessonGroup, group_lessons
from suggestions.lessons import Lesson, lessons_of
from suggestions.privacy import names_in, profile_names
from suggestions.queries import (
    Dismissal,
    fetch_draft_suggestion,
    fetch_pending_group_draft,
    list_customer_texts,
    list_dismissals,
    list_fixed_texts,
    list_thread_messages,
    update_draft_suggestion,
    upsert_dismissal,
)
from suggestions.question_vectors import similarity_for
from suggestions.similarity import QuestionSimilarity

LESSON_DAYS = 90  # how far back answers are read
MAX_THREAD_MESSAGES = 20_000  # read per listing: bounds the grouping's work
# The newest lessons grouped, off the event loop like the keyword check (about 1 s of one core
# against 50,000 messages): 1,000 of one topic take about 1 s, of many topics far less.
MAX_LESSONS = 1_000
KEYWORD_CHECK_DAYS = 30  # the org's customer messages a draft's keywords are checked on
MAX_CHECKED_MESSAGES = 50_000


class SuggestionError(SkilletError):
    code = "suggestion_error"


async def read_groups(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    now: datetime,
    similarity: QuestionSimilarity | None = None,
    embedder: Embedder | None = None,
) -> list[LessonGroup]:
    """Every group of the org's lessons, newest first, dismissed ones included; grouped by
    `similarity` when given, else by the backend `embedder` is of (lexical without one)."""
    thread = await list_thread_messages(
        conn, organization_id, now - timedelta(days=LESSON_DAYS), MAX_THREAD_MESSAGES
    )
    fixed = [
        HANDOFF_ACK_DEFAULT,
        HANDOFF_WAIT_NOTICE_DEFAULT,
        *await list_fixed_texts(conn, organization_id),
    ]
    lessons: list[Lesson] = []
    start = 0
    for i in range(1, len(thread) + 1):
        if i == len(thread) or thread[i].conversation_id != thread[start].conversation_id:
            lessons.extend(lessons_of(thread[start:i], fixed))
            start = i
    newest = sorted(lessons, key=lambda x: (x.at, str(x.id)))[-MAX_LESSONS:]
    chosen = similarity or await similarity_for(embedder, newest)
    return await asyncio.to_thread(group_lessons, newest, chosen)


async def visible_groups(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    now: datetime,
    similarity: QuestionSimilarity | None = None,
    embedder: Embedder | None = None,
) -> list[LessonGroup]:
    """The groups not dismissed, or joined by a new lesson since they were."""
    groups = await read_groups(conn, organization_id, now, similarity, embedder)
    dismissed = list((await list_dismissals(conn, organization_id)).values())
    return [g for g in groups if not _hidden(g, dismissed)]


def _hidden(group: LessonGroup, dismissed: Sequence[Dismissal]) -> bool:
    """Every lesson of the group was in one dismissed group: nothing new joined it. (Not by
    the group's id alone: once its earliest lesson leaves the window, its id changes.)"""
    lessons = {lesson.id for lesson in group.lessons}
    return any(lessons <= d.lesson_ids for d in dismissed)


async def _group(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    group_id: str,
    now: datetime,
    embedder: Embedder | None,
) -> LessonGroup:
    """The visible group of that id, or holding the person's message of that id (so a reply
    in a conversation's thread can be taught from there)."""
    for group in await visible_groups(conn, organization_id, now, embedder=embedder):
        if group.id == group_id or any(
            group_id in (str(m) for m in lesson.message_ids) for lesson in group.lessons
        ):
            return group
    raise SuggestionError(
        f"Não há sugestão {group_id}: ela foi descartada, mudou de grupo (recarregue a "
        "lista) ou a resposta não vira sugestão (respostas de menos de 20 caracteres, "
        "templates e avisos fixos não entram).",
        code="suggestion_not_found",
    )


async def dismiss_group(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    group_id: str,
    actor: str,
    now: datetime,
    embedder: Embedder | None = None,
) -> LessonGroup:
    group = await _group(conn, organization_id, group_id, now, embedder)
    async with conn.transaction():
        await upsert_dismissal(
            conn,
            organization_id,
            uuid.UUID(group.id),
            [lesson.id for lesson in group.lessons],
            actor,
        )
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                "suggestion.dismiss",
                detail={"group_id": group.id, "lessons": len(group.lessons)},
            ),
        )
    return group


def customer_names(lessons: Sequence[Lesson]) -> list[str]:
    """The group's customers' names: their WhatsApp profile names and the names they gave
    for themselves ("meu nome é Joana"), each once."""
    names = [n for lesson in lessons for n in profile_names(lesson.contact_name)]
    names += [n for lesson in lessons for q in lesson.questions for n in names_in(q.text)]
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class TaughtDraft:
    name: str
    made: bool  # False: the group's pending draft made before (a second click)


async def teach_group(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    group_id: str,
    actor: str,
    now: datetime,
    embedder: Embedder | None = None,
) -> TaughtDraft:
    """A pending draft from the group ("Ensinar o agente"); no model call. A group with a
    pending draft already gets that one back (a double click makes one draft)."""
    group = await _group(conn, organization_id, group_id, now, embedder)
    existing = await fetch_pending_group_draft(conn, organization_id, group.id)
    if existing is not None:
        return TaughtDraft(existing, made=False)
    question_ids = [q.message_id for lesson in group.lessons for q in lesson.questions]
    others = await list_customer_texts(
        conn,
        organization_id,
        now - timedelta(days=KEYWORD_CHECK_DAYS),
        question_ids,
        MAX_CHECKED_MESSAGES,
    )
    names = customer_names(group.lessons)
    async with catalog_lock(conn, organization_id):
        taken = {s.name for s in await list_installed_skills(conn, organization_id)}
        content = await asyncio.to_thread(
            partial(draft_content, group.lessons, others, names=names, taken=taken)
        )
        name = content.name
        n = 2
        while (
            await fetch_platform_pointed_version(conn, name) is not None
            or await fetch_pending_draft(conn, organization_id, name) is not None
        ):
            name = f"{content.name[:44]}-{n}"
            n += 1
        version_id = uuid.uuid4()
        async with conn.transaction():
            await _insert_version(conn, organization_id, name, content, version_id)
            draft_id = await insert_draft(
                conn,
                organization_id=organization_id,
                name=name,
                version_id=version_id,
                base_version_id=None,
                conversation_id=group.lessons[-1].conversation_id,
            )
            record = _record(group, content, restored=[])
            await update_draft_suggestion(conn, organization_id, draft_id, record)
            await insert_audit(
                conn,
                AuditEntry(
                    organization_id,
                    actor,
                    "suggestion.draft",
                    skill_name=name,
                    after_version_id=version_id,
                    detail={"group_id": group.id, "draft_id": str(draft_id)},
                ),
            )
    return TaughtDraft(name, made=True)


async def _insert_version(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    name: str,
    content: DraftContent,
    version_id: uuid.UUID,
) -> None:
    await insert_skill_version(
        conn,
        version_id=version_id,
        organization_id=organization_id,
        name=name,
        description=content.description,
        body=content.body,
        matcher=SkillMatcher(content.keywords),
        created_by="user",
        created_via=CreatedVia.SUGGESTION,
    )


def _record(group: LessonGroup, content: DraftContent, restored: list[str]) -> dict[str, Any]:
    return {
        "group_id": group.id,
        "lesson_ids": [str(lesson.id) for lesson in group.lessons],
        "removed": [r.to_json() for r in content.removed],
        "kept": [r.to_json() for r in content.kept],
        "restored": restored,
        "unmatched": list(content.unmatched),
        "keywords_outside_matches": content.outside_matches,
        "keywords_outside_budget": content.budget,
    }


async def restore_value(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    name: str,
    key: str,
    actor: str,
    now: datetime,
) -> dict[str, Any]:
    """Put a value privacy removed back into the draft's body: a new draft version (the
    keywords stay as they were: a removed value never becomes one)."""
    found = await fetch_draft_suggestion(conn, organization_id, name)
    if found is None or key not in {r["key"] for r in found[1].get("removed", [])}:
        raise SuggestionError(
            f"O rascunho {name} não tem o valor removido {key!r} para restaurar.",
            code="suggestion_value_not_found",
        )
    draft_id, record = found
    lesson_ids = {uuid.UUID(i) for i in record["lesson_ids"]}
    lessons = [
        lesson
        for group in await read_groups(conn, organization_id, now)
        for lesson in group.lessons
        if lesson.id in lesson_ids
    ]
    restored = sorted({*record.get("restored", []), key})
    body, removed, kept = body_of(
        sorted(lessons, key=lambda x: (x.at, str(x.id))), customer_names(lessons), restored
    )
    draft = await fetch_pending_draft(conn, organization_id, name)
    if draft is None:
        raise SuggestionError(
            f"Não há rascunho pendente {name}.", code="suggestion_value_not_found"
        )
    version_id = uuid.uuid4()
    async with conn.transaction():
        await insert_skill_version(
            conn,
            version_id=version_id,
            organization_id=organization_id,
            name=name,
            description=draft.version.description,
            body=body,
            matcher=draft.version.matcher,
            created_by="user",
            created_via=CreatedVia.SUGGESTION,
        )
        await update_draft_version(conn, organization_id, draft_id, version_id)
        record = {
            **record,
            "removed": [r.to_json() for r in removed],
            "kept": [r.to_json() for r in kept],
            "restored": restored,
        }
        await update_draft_suggestion(conn, organization_id, draft_id, record)
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                "suggestion.restore",
                skill_name=name,
                before_version_id=draft.version.version_id,
                after_version_id=version_id,
                detail={"key": key},
            ),
        )
    return record
