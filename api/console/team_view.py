"""What the conversation page adds for the team, as plain values (pure): internal notes in
the thread, in their own colour, and the quick replies the reply box offers on "/".

A note reads like a message of the thread (the page's script draws both alike) with the
author `note`; it is merged into the thread by its time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from api.console.moments import Clock


def note_item(note: dict[str, Any], clock: Clock) -> dict[str, Any]:
    """One note (GET /v1/conversations/{id}/notes) as a thread item, its time in the org's
    zone (`clock`)."""
    person = note.get("author_person")
    who = person["name"] if person else note["author"]
    return {
        "id": note["id"],
        "author": "note",
        "label": f"Nota interna · {who} (só a equipe vê)",
        "text": note["text"],
        "kind": None,
        "at": clock.moment(note["created_at"]),
        "delivery": None,
        "unanswered": False,
        "teach": False,
        "skills": [],
        "media": None,
        "files": [],
        "quote": None,
        "reactions": None,
    }


def with_notes(
    messages: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    message_item: Callable[[dict[str, Any]], dict[str, Any]],
    clock: Clock,
) -> list[dict[str, Any]]:
    """Messages and notes in one thread, oldest first (a note after a message of the same
    instant); each turned into its thread item."""
    timed = [(datetime.fromisoformat(m["created_at"]), 0, i) for i, m in enumerate(messages)]
    timed += [(datetime.fromisoformat(n["created_at"]), 1, i) for i, n in enumerate(notes)]
    timed.sort()
    return [
        message_item(messages[i]) if source == 0 else note_item(notes[i], clock)
        for _, source, i in timed
    ]


def quick_reply_option(item: dict[str, Any]) -> dict[str, str]:
    return {"title": item["title"], "text": item["text"]}


HOLDER_ROLES = ("editor", "admin")


def transfer_choices(people: list[dict[str, Any]], held_by: str | None) -> list[dict[str, str]]:
    """Who a conversation may be passed to: the org's active editors and admins (GET
    /v1/people), but not the one who holds it now."""
    return [
        {"id": p["id"], "name": p["name"]}
        for p in people
        if p["active"] and p["role"] in HOLDER_ROLES and f"person:{p['id']}" != held_by
    ]
