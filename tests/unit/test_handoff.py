"""The handoff's pure parts: how people's messages read in the agent's history, and the
handoff_to_human tool (one call hands off, a second changes nothing)."""

from __future__ import annotations

import uuid

from conversation.handoff.texts import PERSON_MARK, PHONE_MARK, HistoryTurn, history_turn
from tests.tool_support import reference_context
from turn.model import ToolCall
from turn.tools.registry import default_registry


def test_people_read_as_the_business_marked_and_the_agent_as_itself() -> None:
    assert history_turn("inbound", "oi") == HistoryTurn("user", "oi")
    assert history_turn("outbound", "Olá!") == HistoryTurn("assistant", "Olá!")
    assert history_turn("person", "Sou a Ana.") == HistoryTurn(
        "assistant", f"{PERSON_MARK} Sou a Ana."
    )
    assert history_turn("phone", "Já vou.") == HistoryTurn("assistant", f"{PHONE_MARK} Já vou.")


async def test_a_second_handoff_in_the_same_turn_is_a_no_op() -> None:
    context = reference_context(None, uuid.uuid4(), [])  # type: ignore[arg-type]
    registry = default_registry()
    first = await registry.execute(
        context, ToolCall("1", "handoff_to_human", {"reason": "quer desconto"})
    )
    second = await registry.execute(context, ToolCall("2", "handoff_to_human", {"reason": "x"}))
    assert first.error_code is None and second.error_code is None
    assert context.ledger.handoff_reason == "quer desconto"
    refused = await registry.execute(context, ToolCall("3", "handoff_to_human", {}))
    assert refused.error_code == "tool_arguments_invalid"
