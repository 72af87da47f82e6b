"""The Atendimento pages' values: how long a conversation waited, why, who wrote each
message, and which buttons a conversation's state leaves to offer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from api.console import attendance_view as view

NOW = datetime(2026, 3, 2, 15, 0, tzinfo=UTC)
ME = "skt_aaaaaaaa"
ALL = {"takeover_route": True, "release_route": True, "reply_route": True}


@pytest.mark.parametrize(
    ("ago", "text"),
    [
        (timedelta(seconds=30), "há menos de 1 min"),
        (timedelta(minutes=12, seconds=59), "há 12 min"),
        (timedelta(hours=1), "há 1 h"),
        (timedelta(hours=2, minutes=5), "há 2 h 5 min"),
        (timedelta(days=1, hours=3), "há 1 dia"),
        (timedelta(days=3), "há 3 dias"),
        (-timedelta(seconds=5), "há menos de 1 min"),  # a clock a little behind the DB's
    ],
)
def test_how_long_it_waited_reads_as_a_person_says_it(ago: timedelta, text: str) -> None:
    assert view.waited((NOW - ago).isoformat(), NOW) == text


def test_why_names_the_cause_and_the_agents_own_reason() -> None:
    assert view.why({"mode_cause": "customer", "mode_reason": "x"}) == "pedido do cliente"
    assert view.why({"mode_cause": "phone", "mode_reason": None}) == "celular da empresa"
    assert view.why({"mode_cause": "console", "mode_reason": None}) == "console"
    called = {"mode_cause": "tool", "mode_reason": "quer negociar o preço"}
    assert view.why(called) == "o agente chamou: quer negociar o preço"


def _message(**fields: Any) -> dict[str, Any]:
    base = {"id": "m", "direction": "outbound", "kind": "text", "body": "oi"}
    return base | {"created_at": NOW.isoformat(), "delivery": None} | fields


def test_each_author_is_told_apart_and_an_agent_reply_lists_its_skills() -> None:
    customer = view.message_item(_message(direction="inbound", author="customer"))
    assert (customer["label"], customer["unanswered"]) == ("Cliente", True)
    person = view.message_item(_message(author="person", author_key_prefix=ME))
    assert person["label"] == f"Atendente ({ME})"
    assert view.message_item(_message(author="phone"))["label"] == "Celular da empresa"
    skills = [{"name": "frete", "version_id": "0d3f5a7e-1111-2222-3333-444455556666"}]
    agent = view.message_item(
        _message(author="agent", skills=skills, delivery={"status": "failed", "error": "x"})
    )
    assert (agent["label"], agent["skills"]) == ("Agente", ["frete · 0d3f5a7e"])
    assert agent["delivery"] == "falhou — o WhatsApp não entregou a mensagem e não disse o motivo"


@pytest.mark.parametrize(
    ("kind", "body", "shown"),
    [
        ("text", "oi", None),
        ("audio", "Oi, vocês entregam?", "áudio"),  # a transcript: the kind says it was spoken
        ("image", "[imagem] essa cor?", None),  # the description names it already
        ("document", "[documento] tabela.pdf (3 KB)", None),
        ("location", "-23.5, -46.6 Loja", "localização"),
    ],
)
def test_a_messages_kind_is_shown_in_portuguese_once(
    kind: str, body: str, shown: str | None
) -> None:
    assert view.message_item(_message(kind=kind, body=body))["kind"] == shown


def _conversation(mode: str, held_by: str | None) -> dict[str, Any]:
    return {"mode": mode, "held_by": held_by}


@pytest.mark.parametrize(
    ("mode", "held_by", "admin", "offered"),
    [
        ("agent", None, False, {"takeover", "reply"}),
        ("waiting", None, False, {"takeover", "release", "reply"}),
        ("human", ME, False, {"release", "reply"}),
        # Someone else's: an editor is told why only an admin may take it or give it back.
        ("human", "skt_bbbbbbbb", False, {"other_note"}),
        ("human", "skt_bbbbbbbb", True, {"force", "release"}),
        ("human", "phone", False, {"phone_note"}),
        ("human", "phone", True, {"force", "release"}),
    ],
)
def test_the_buttons_follow_the_conversations_state(
    mode: str, held_by: str | None, admin: bool, offered: set[str]
) -> None:
    offers = view.offers(_conversation(mode, held_by), ME, admin=admin, can=ALL)
    assert {name for name, shown in offers.items() if shown} == offered


def test_a_key_the_gate_refuses_is_offered_nothing() -> None:
    viewer = dict.fromkeys(ALL, False)
    offers = view.offers(_conversation("waiting", None), ME, admin=False, can=viewer)
    assert not any(offers.values())


def test_an_agent_reply_lists_the_files_it_sent_with_their_own_delivery() -> None:
    files = [
        {"filename": "tabela.pdf", "kind": "document", "status": "sent"},
        {"filename": "foto.png", "kind": "image", "status": "failed"},
    ]
    agent = view.message_item(_message(author="agent", files=files))
    assert agent["files"] == ["tabela.pdf (documento) · enviada", "foto.png (imagem) · falhou"]
    assert view.message_item(_message(author="agent"))["files"] == []
