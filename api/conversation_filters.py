"""The conversations list's query string (`?q=`, `?mode=`, `?held_by=`, `?unanswered=`) read
strictly into a conversation.person_queries.ConversationFilter; anything else is refused with
its own code before a query runs.

- `q`: 2 to 100 characters once trimmed (422 `invalid_search`), searched in names, numbers
  and what customers wrote (conversation.search);
- `mode`: agent, waiting or human (400 `invalid_mode`, as before);
- `held_by`: `me` (the caller: a person, or the key), `phone` (the business's phone) or a
  person's id (422 `invalid_held_by`);
- `unanswered`: `true` keeps those with customer messages no one answered, `false` or absent
  all of them (422 `invalid_unanswered`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from api.errors import ApiError
from api.people_queries import person_actor
from api.routing import Principal
from conversation.mode import ConversationMode
from conversation.person_queries import ConversationFilter
from conversation.search import MAX_CHARS, MIN_CHARS, SearchPatterns, search_patterns
from core.text import unstorable

MODES = tuple(ConversationMode)
PHONE_HOLDER = "phone"


def conversation_filter(query: Mapping[str, str], principal: Principal) -> ConversationFilter:
    patterns = _search(query.get("q"))
    return ConversationFilter(
        mode=_mode(query.get("mode")),
        held_by=_held_by(query.get("held_by"), principal),
        unanswered=_unanswered(query.get("unanswered")),
        text_pattern=None if patterns is None else patterns.regex,
        number_pattern=None if patterns is None else patterns.number,
    )


def _mode(mode: str | None) -> str | None:
    if mode is not None and mode not in MODES:
        raise ApiError(400, "invalid_mode", "`mode` deve ser agent, waiting ou human.")
    return mode


def _search(raw: str | None) -> SearchPatterns | None:
    if raw is None:
        return None
    text = raw.strip()  # the query string is bounded by the server's request line
    if not MIN_CHARS <= len(text) <= MAX_CHARS or unstorable(text):
        raise ApiError(
            422,
            "invalid_search",
            f"A busca precisa ter de {MIN_CHARS} a {MAX_CHARS} caracteres "
            "(um nome, um número ou um trecho de mensagem).",
        )
    return search_patterns(text)


def _held_by(raw: str | None, principal: Principal) -> str | None:
    if raw is None:
        return None
    if raw == "me":
        return principal.prefix
    if raw == PHONE_HOLDER:
        return PHONE_HOLDER
    try:
        return person_actor(uuid.UUID(raw))
    except ValueError:
        raise ApiError(
            422,
            "invalid_held_by",
            "`held_by` deve ser me, phone ou o id de uma pessoa da equipe.",
        ) from None


def _unanswered(raw: str | None) -> bool:
    if raw is None or raw == "false":
        return False
    if raw == "true":
        return True
    raise ApiError(422, "invalid_unanswered", "`unanswered` deve ser true ou false.")
