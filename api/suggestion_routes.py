"""Routes of Sugestões: people's answers grouped by question (list, dismiss), a group taught
as a draft ("Ensinar o agente"), and a value privacy removed from such a draft restored.
The work is suggestions.service's; questions are shown redacted (suggestions.privacy)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.pagination import encode_cursor, parse_limit, read_cursor, time_id_keyset
from api.routing import Principal, Reply, deps_of, org_db
from consolidation.measure import VectorBackend
from similarity.backend import Embedder
from skills.models import LoadedSkill
from skills.queries import list_installed_skills
from suggestions.closest import closest_skill
from suggestions.draft_content import MAX_BODY_ANSWERS
from suggestions.grouping import LessonGroup
from suggestions.privacy import redact_question
from suggestions.service import (
    customer_names,
    dismiss_group,
    restore_value,
    teach_group,
    visible_groups,
)

MAX_SHOWN_QUESTIONS = 20  # per group on a page (the group may hold more)


def _now() -> datetime:
    return datetime.now(UTC)


def group_json(group: LessonGroup, closest: dict[str, object] | None) -> dict[str, Any]:
    names = customer_names(group.lessons)
    questions = [
        {
            "conversation_id": str(lesson.conversation_id),
            "message_id": str(q.message_id),
            "text": redact_question(q.text, names)[0],
        }
        for lesson in group.lessons
        for q in lesson.questions
    ][-MAX_SHOWN_QUESTIONS:]
    answers = [
        {
            "text": lesson.answer,
            "author": lesson.author,
            "conversation_id": str(lesson.conversation_id),
        }
        for lesson in group.lessons[-MAX_BODY_ANSWERS:]
    ]
    return {
        "id": group.id,
        "questions": questions,
        "answers": answers,
        "conversations": len({lesson.conversation_id for lesson in group.lessons}),
        "last_seen_at": group.lessons[-1].at.isoformat(),
        "closest": closest,
    }


def _closest(groups: Sequence[LessonGroup], installed: Sequence[LoadedSkill]) -> list[Any]:
    found = []
    for group in groups:
        questions = [q.text for lesson in group.lessons for q in lesson.questions]
        near = closest_skill(questions, installed)
        found.append(None if near is None else near.to_json())
    return found


def _embedder(request: web.Request) -> Embedder | None:
    """The similarity backend in use, for grouping questions (None: lexical)."""
    backend = deps_of(request).similarity
    return backend.embedder if isinstance(backend, VectorBackend) else None


async def list_suggestions_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    after = read_cursor("suggestions", request.query, time_id_keyset)
    async with org_db(request, principal) as conn:
        groups = await visible_groups(
            conn, principal.organization_id, _now(), embedder=_embedder(request)
        )
        if after is not None:
            at, ident = after
            groups = [g for g in groups if (g.lessons[-1].at, uuid.UUID(g.id)) < (at, ident)]
        page = groups[:limit]
        installed = await list_installed_skills(conn, principal.organization_id)
    hints = _closest(page, installed)
    more = len(groups) > limit
    last = page[-1] if page else None
    cursor = (
        encode_cursor("suggestions", [last.lessons[-1].at.isoformat(), last.id])
        if more and last is not None
        else None
    )
    return {
        "items": [group_json(g, h) for g, h in zip(page, hints, strict=True)],
        "next": cursor,
    }


async def count_suggestions(request: web.Request, principal: Principal) -> int:
    async with org_db(request, principal) as conn:
        found = await visible_groups(
            conn, principal.organization_id, _now(), embedder=_embedder(request)
        )
        return len(found)


async def dismiss_suggestion_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        group = await dismiss_group(
            conn,
            principal.organization_id,
            request.match_info["id"],
            principal.prefix,
            _now(),
            _embedder(request),
        )
    return {"id": group.id, "dismissed": True}


async def draft_suggestion_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        taught = await teach_group(
            conn,
            principal.organization_id,
            request.match_info["id"],
            principal.prefix,
            _now(),
            _embedder(request),
        )
    return {"draft": taught.name}


class RestoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str


async def restore_suggestion_value_route(request: web.Request, principal: Principal) -> Reply:
    body = await read_json(request, RestoreBody)
    async with org_db(request, principal) as conn:
        record = await restore_value(
            conn,
            principal.organization_id,
            request.match_info["name"],
            body.key,
            principal.prefix,
            _now(),
        )
    return {"name": request.match_info["name"], "suggestion": record}
