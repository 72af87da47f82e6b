"""The conversation page's team parts, pure: notes merged into the thread by time in their
own kind, and whom a conversation may be passed to."""

from __future__ import annotations

from typing import Any

from api.console import team_view
from api.console.moments import Clock


def _at(minute: int) -> str:
    return f"2026-12-03T12:{minute:02d}:00+00:00"


def test_notes_join_the_thread_by_time_after_a_message_of_the_same_instant() -> None:
    messages = [{"id": "m1", "created_at": _at(1)}, {"id": "m2", "created_at": _at(3)}]
    notes = [
        {"id": "n1", "created_at": _at(1), "text": "VIP", "author": "cli", "author_person": None},
        {
            "id": "n2",
            "created_at": _at(2),
            "text": "ligar amanhã",
            "author": "person:1",
            "author_person": {"id": "1", "name": "Ana"},
        },
    ]

    def shown(message: dict[str, Any]) -> dict[str, Any]:
        return {"id": message["id"], "author": "customer"}

    clock = Clock()
    thread = team_view.with_notes(messages, notes, shown, clock)
    assert [item["id"] for item in thread] == ["m1", "n1", "n2", "m2"]
    assert thread[1]["author"] == "note" and thread[1]["delivery"] is None
    assert thread[2]["label"] == "Nota interna · Ana (só a equipe vê)"
    assert thread[2]["at"] == clock.moment(_at(2))  # the org's zone, like the messages


def test_a_conversation_goes_only_to_another_active_editor_or_admin() -> None:
    people = [
        {"id": "a", "name": "Ana", "role": "editor", "active": True},
        {"id": "b", "name": "Bruno", "role": "admin", "active": True},
        {"id": "c", "name": "Carla", "role": "viewer", "active": True},
        {"id": "d", "name": "Davi", "role": "editor", "active": False},
    ]
    assert team_view.transfer_choices(people, "person:a") == [{"id": "b", "name": "Bruno"}]
    assert [p["name"] for p in team_view.transfer_choices(people, "skt_x")] == ["Ana", "Bruno"]
