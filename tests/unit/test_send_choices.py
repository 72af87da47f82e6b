"""send_choices and the choices' values: Meta's limits as tool errors the model reads, one set
a turn, nothing recorded for a refused call; the interactive bodies; WAHA's numbered text and
how a reply is read as a choice; a hostile call bounded at the door."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from channels.interactive import interactive_message, refusal_reason
from delivery.outbound_choices import (
    Choice,
    OutboundChoices,
    chosen_marker,
    history_note,
    marker_choice,
    offered_in,
    read_choice,
)
from tests.tool_support import reference_context
from tests.unit.test_reference_tool import MemoryStore
from turn.model import ToolCall
from turn.tools.base import ToolContext, ToolResult
from turn.tools.registry import default_registry

ORG = uuid.UUID("11111111-1111-4111-8111-111111111111")
SLOTS = [{"id": f"s{i}", "title": f"Sexta {i}h"} for i in range(1, 4)]


def _context() -> ToolContext:
    return reference_context(MemoryStore({}), ORG, [])


async def _call(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    return await default_registry().execute(context, ToolCall("c1", "send_choices", arguments))


async def test_three_choices_are_recorded_once_as_buttons() -> None:
    context = _context()
    result = await _call(context, {"text": "Qual horário?", "choices": SLOTS})
    assert result.error_code is None and "botões" in result.content
    recorded = context.ledger.choices
    assert recorded is not None and not recorded.as_list
    assert [c.id for c in recorded.choices] == ["s1", "s2", "s3"]
    again = await _call(context, {"text": "Outra?", "choices": SLOTS[:1]})
    assert again.error_code == "choices_already_sent"
    assert context.ledger.choices is recorded


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"text": "x", "choices": []}, "too_many_choices"),
        (
            {"text": "x", "choices": [{"id": f"r{i}", "title": f"T{i}"} for i in range(11)]},
            "too_many_choices",
        ),
        (
            {"text": "x", "choices": [{"id": "a", "title": "Um título de vinte e um"}]},
            "choice_title_too_long",
        ),
        (
            {"text": "x", "choices": [{"id": f"r{i}", "title": "x" * 25} for i in range(4)]},
            "choice_title_too_long",
        ),
        (
            {"text": "x", "choices": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]},
            "duplicate_choice_id",
        ),
        (
            {"text": "x", "choices": [{"id": "a", "title": "Sim"}, {"id": "b", "title": " sim"}]},
            "duplicate_choice_title",
        ),
        ({"text": "x" * 1025, "choices": SLOTS}, "choice_text_invalid"),
        ({"text": "x", "choices": [{"id": "i" * 201, "title": "A"}]}, "choice_id_invalid"),
        (
            {"text": "x", "choices": [{"id": "a", "title": "A", "description": "d"}]},
            "choice_description_not_allowed",
        ),
        (
            {
                "text": "x",
                "choices": [
                    {"id": f"r{i}", "title": f"T{i}", "description": "d" * 73} for i in range(4)
                ],
            },
            "choice_description_too_long",
        ),
        (
            {
                "text": "x",
                "choices": [{"id": f"r{i}", "title": f"T{i}"} for i in range(4)],
                "button": "b" * 21,
            },
            "choice_button_too_long",
        ),
    ],
)
async def test_each_rule_is_a_tool_error_and_nothing_is_recorded(
    arguments: dict[str, Any], code: str
) -> None:
    context = _context()
    result = await _call(context, arguments)
    assert result.error_code == code, result.content
    assert result.content.startswith(f"[erro {code}]")
    assert context.ledger.choices is None


async def test_a_thousand_rows_are_refused_at_the_door() -> None:
    context = _context()
    rows = [{"id": f"r{i}", "title": "x" * 30} for i in range(1000)]
    result = await _call(context, {"text": "x", "choices": rows})
    assert result.error_code == "tool_arguments_invalid"
    assert "lista longa demais" in result.content and len(result.content) < 500
    assert context.ledger.choices is None


def test_buttons_and_lists_are_metas_interactive_bodies() -> None:
    buttons = OutboundChoices("Qual?", (Choice("s1", "Sexta 14h"), Choice("s2", "Sábado 9h")))
    assert interactive_message("5511", buttons)["interactive"] == {
        "type": "button",
        "body": {"text": "Qual?"},
        "action": {
            "buttons": [
                {"type": "reply", "reply": {"id": "s1", "title": "Sexta 14h"}},
                {"type": "reply", "reply": {"id": "s2", "title": "Sábado 9h"}},
            ]
        },
    }
    rows = tuple(Choice(f"r{i}", f"Dia {i}", "manhã" if i else None) for i in range(4))
    listed = interactive_message("5511", OutboundChoices("Qual dia?", rows))
    assert listed["type"] == "interactive"
    action = listed["interactive"]["action"]
    assert action["button"] == "Ver opções"
    assert action["sections"][0]["rows"][0] == {"id": "r0", "title": "Dia 0"}
    assert action["sections"][0]["rows"][1] == {
        "id": "r1",
        "title": "Dia 1",
        "description": "manhã",
    }


def test_metas_refusal_is_told_in_portuguese() -> None:
    assert refusal_reason(131009, "HTTP 400").startswith(
        "As opções não foram enviadas: um valor das opções não é aceito"
    )
    assert "(erro 131051)" in refusal_reason(131051, "")


OFFERED = OutboundChoices(
    "Qual?", (Choice("s1", "Quinta 10h"), Choice("s2", "Sexta 14h"), Choice("s3", "Sábado"))
)


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [
        ("2", "s2"),
        (" 3. ", "s3"),
        ("1)", "s1"),
        ("sexta  14H", "s2"),
        ("Sábado", "s3"),
        ("4", None),
        ("0", None),
        ("2 por favor", None),
        ("quero a sexta", None),
        ("2" * 500, None),
    ],
)
def test_a_reply_is_read_as_a_choice_only_when_it_is_just_the_number_or_title(
    reply: str, chosen: str | None
) -> None:
    found = read_choice(reply, OFFERED)
    assert (found.id if found else None) == chosen


def test_the_numbered_text_and_the_marker_round_trip() -> None:
    assert OFFERED.numbered_text() == (
        "Qual?\n\n1. Quinta 10h\n2. Sexta 14h\n3. Sábado\n\nResponda com o número da opção."
    )
    marker = chosen_marker("Sexta 14h", "s2")
    assert marker == "[escolheu: «Sexta 14h» (id: s2)]"
    assert marker_choice(marker) == Choice("s2", "Sexta 14h")
    assert marker_choice("Sexta 14h") is None
    assert OutboundChoices.from_json(OFFERED.as_json()) == OFFERED


def test_a_hostile_tap_is_cut_at_the_door() -> None:
    from tests.whatsapp_payloads import cloud_delivery, cloud_message, cloud_value
    from webhook.cloud_api import parse_cloud_api

    huge = {"type": "list_reply", "list_reply": {"id": "i" * 1_000_000, "title": "t" * 1_000_000}}
    delivery = parse_cloud_api(
        cloud_delivery(cloud_value("111", [cloud_message("m1", "interactive", huge)])),
        datetime.now(UTC),
    )
    [text] = [t.text for t in delivery.texts]
    assert len(text) < 400 and text.startswith("[escolheu: «ttt")
    assert marker_choice(text) is not None  # still one well-formed mark


def test_the_stored_note_round_trips_and_the_last_business_message_decides() -> None:
    from conversation.choice_reading import last_offered

    body = "Qual?" + history_note(OFFERED)
    assert body.endswith(
        "[opções: «Quinta 10h» (id: s1) · «Sexta 14h» (id: s2) · «Sábado» (id: s3)]"
    )
    found = offered_in(body)
    assert found is not None and found.choices == OFFERED.choices and found.text == "Qual?"
    assert offered_in("Qual?") is None
    assert last_offered([("outbound", body), ("inbound", "hmm")]) == found
    assert last_offered([("outbound", body), ("person", "Oi, sou a Ana")]) is None
    hostile = OutboundChoices("x", (Choice("a) (id: b", "t» (id: z) · «u"),))
    [only] = offered_in("x" + history_note(hostile)).choices  # type: ignore[union-attr]
    assert only == Choice("a› ‹id: b", "t› (id: z) · ‹u")


def test_the_console_reads_taps_and_offers_without_ids() -> None:
    from api.console.attendance_view import readable

    body = "Qual?" + history_note(OFFERED)
    assert readable(body) == "Qual?\n\nOpções: Quinta 10h · Sexta 14h · Sábado"
    assert readable(body[:20]) == "Qual?"  # a preview cut inside the options
    assert readable(chosen_marker("Sexta 14h", "s2")) == "Escolheu: Sexta 14h"
    assert readable("2") == "2"


def test_the_commit_puts_the_files_first_then_the_choices_with_their_note() -> None:
    from conversation.queries import ReplyCommit, TurnCounts
    from delivery.outbound_file import FileMessage, OutboundFile

    file = OutboundFile(
        "s", "assets/a.pdf", "k", "application/pdf", FileMessage.DOCUMENT, 9, "a.pdf"
    )
    commit = ReplyCommit(
        organization_id=ORG,
        conversation_id=ORG,
        channel="whatsapp",
        batch_ids=[],
        first_received_at=datetime.now(UTC),
        body="Oi",
        counts=TurnCounts(),
        at=datetime.now(UTC),
        lease_token=None,
        files=[file],
        choices=OFFERED,
    )
    parts = commit.parts()
    assert parts is not None and [sorted(p) for p in parts][1] == ["choices", "note"]
    assert parts[0] == file.as_json() and parts[1]["note"] == history_note(OFFERED)
    assert ReplyCommit(**{**commit.__dict__, "files": (), "choices": None}).parts() is None
