"""The providers' stream accumulators on recorded-shape event sequences (pure, no HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from turn.errors import ModelResponseInvalid
from turn.model import ModelResponse, ToolCall
from turn.providers import anthropic, openai_compat
from turn.providers.anthropic_stream import AnthropicStream
from turn.providers.openai_stream import OpenAIStream
from turn.providers.sse import SseEvent, SseParser
from turn.providers.streaming import StreamInterrupted, StreamLimits


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """A stream's bytes: (event name or None, JSON value or raw string) per event."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        text = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {text}\n\n")
    return "".join(out).encode()


def run_openai(stream: bytes) -> ModelResponse:
    acc = OpenAIStream()
    for event in SseParser().feed(stream):
        acc.add(event)
    return openai_compat.parse_response(acc.body(), requested_model="asked")


def run_anthropic(stream: bytes) -> ModelResponse:
    acc = AnthropicStream()
    for event in SseParser().feed(stream):
        acc.add(event)
    return anthropic.parse_response(acc.body(), requested_model="asked")


# OpenAI-compatible


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "smol", "choices": [choice]}


USAGE = {
    "id": "c1",
    "model": "smol",
    "choices": [],
    "usage": {
        "prompt_tokens": 120,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 96},
    },
}


def test_openai_text_pieces_usage_and_done() -> None:
    response = run_openai(
        sse(
            [
                (None, chunk({"role": "assistant", "content": ""})),
                (None, chunk({"content": "Olá"})),
                (None, chunk({"content": ", tudo bem?"})),
                (None, chunk(finish="stop")),
                (None, USAGE),
                (None, "[DONE]"),
            ]
        )
    )
    assert response.text == "Olá, tudo bem?"
    assert (response.input_tokens, response.output_tokens, response.cache_read_tokens) == (
        120,
        5,
        96,
    )
    assert (response.model, response.truncated) == ("smol", False)


def piece(index: int, arguments: str, **call: str) -> dict[str, Any]:
    function = {"arguments": arguments}
    if "name" in call:
        function["name"] = call.pop("name")
    return chunk({"tool_calls": [{"index": index, **call, "function": function}]})


def test_openai_tool_call_pieces_by_index() -> None:
    response = run_openai(
        sse(
            [
                (None, piece(0, "", id="call_1", type="function", name="skill_view")),
                (None, piece(0, '{"na')),
                (None, piece(1, "{}", id="call_2", name="x")),
                (None, piece(0, 'me":"a"}')),
                (None, chunk(finish="tool_calls")),
                (None, "[DONE]"),
            ]
        )
    )
    assert response.text is None
    assert response.tool_calls == (
        ToolCall("call_1", "skill_view", {"name": "a"}),
        ToolCall("call_2", "x", {}),
    )


def test_openai_without_include_usage_support_reports_unknown_usage() -> None:
    response = run_openai(sse([(None, chunk({"content": "oi"}, "stop")), (None, "[DONE]")]))
    assert response.text == "oi"
    assert (response.input_tokens, response.output_tokens, response.cache_read_tokens) == (
        None,
        None,
        None,
    )


def test_openai_length_is_truncated_and_done_may_be_missing() -> None:
    response = run_openai(sse([(None, chunk({"content": "Olá, o pra"}, "length"))]))
    assert (response.text, response.truncated) == ("Olá, o pra", True)


def test_openai_stream_ending_before_finish_is_interrupted() -> None:
    with pytest.raises(StreamInterrupted) as caught:
        run_openai(sse([(None, chunk({"content": "Olá"}))]))
    assert not caught.value.rejected


def test_openai_error_chunk_is_an_interruption() -> None:
    error = {"error": {"message": "slot unavailable", "type": "server_error"}}
    with pytest.raises(StreamInterrupted, match="slot unavailable"):
        run_openai(sse([(None, error)]))


@pytest.mark.parametrize(
    "data",
    ["not json", "[1]", json.dumps({"choices": "x"}), json.dumps(chunk({"content": 3}))],
)
def test_openai_malformed_chunks_are_invalid(data: str) -> None:
    with pytest.raises(ModelResponseInvalid):
        run_openai(sse([(None, data)]))


# Anthropic


def start(usage: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "usage": usage
        if usage is not None
        else {
            "input_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1500,
            "output_tokens": 1,
        },
    }
    return "message_start", {"type": "message_start", "message": message}


def block(index: int, content_block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": content_block,
    }


def delta(index: int, kind: str, key: str, value: str) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": kind, key: value},
    }


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def message_delta(reason: str, output_tokens: int) -> tuple[str, dict[str, Any]]:
    return "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


PING = ("ping", {"type": "ping"})
STOP = ("message_stop", {"type": "message_stop"})


def test_anthropic_text_and_tool_use_with_pings_and_usage() -> None:
    tool = {"type": "tool_use", "id": "toolu_1", "name": "read_skill_reference", "input": {}}
    response = run_anthropic(
        sse(
            [
                start(),
                PING,
                block(0, {"type": "text", "text": ""}),
                delta(0, "text_delta", "text", "Vou "),
                delta(0, "text_delta", "text", "consultar."),
                stop(0),
                block(1, tool),
                delta(1, "input_json_delta", "partial_json", ""),
                delta(1, "input_json_delta", "partial_json", '{"skill_name": "a",'),
                PING,
                delta(1, "input_json_delta", "partial_json", ' "path": "p"}'),
                stop(1),
                message_delta("tool_use", 42),
                STOP,
            ]
        )
    )
    assert response.text == "Vou consultar."
    assert response.tool_calls == (
        ToolCall("toolu_1", "read_skill_reference", {"skill_name": "a", "path": "p"}),
    )
    assert (response.input_tokens, response.output_tokens) == (1520, 42)
    assert (response.cache_read_tokens, response.cache_write_tokens) == (1500, 0)
    assert (response.model, response.truncated) == ("claude-x", False)


def test_anthropic_tool_without_arguments_and_thinking_blocks() -> None:
    tool = {"type": "tool_use", "id": "toolu_2", "name": "skill_list", "input": {}}
    response = run_anthropic(
        sse(
            [
                start(),
                block(0, {"type": "thinking", "thinking": ""}),
                delta(0, "thinking_delta", "thinking", "hmm"),
                delta(0, "signature_delta", "signature", "abc"),
                stop(0),
                block(1, tool),
                stop(1),
                message_delta("tool_use", 3),
                STOP,
            ]
        )
    )
    assert response.text is None
    assert response.tool_calls == (ToolCall("toolu_2", "skill_list", {}),)


def test_anthropic_max_tokens_cuts_a_tool_input_into_an_empty_one() -> None:
    tool = {"type": "tool_use", "id": "toolu_3", "name": "skill_view", "input": {}}
    response = run_anthropic(
        sse(
            [
                start(),
                block(0, tool),
                delta(0, "input_json_delta", "partial_json", '{"name": "segu'),
                message_delta("max_tokens", 200),
                STOP,
            ]
        )
    )
    assert response.tool_calls == (ToolCall("toolu_3", "skill_view", {}),)
    assert response.truncated is True


def test_anthropic_missing_usage_is_unknown_and_done_may_be_missing() -> None:
    response = run_anthropic(
        sse(
            [
                start(usage={}),
                block(0, {"type": "text", "text": ""}),
                delta(0, "text_delta", "text", "oi"),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ]
        )
    )
    assert response.text == "oi"
    assert (response.input_tokens, response.output_tokens) == (None, None)


@pytest.mark.parametrize(
    ("kind", "rejected"), [("overloaded_error", False), ("invalid_request_error", True)]
)
def test_anthropic_error_event(kind: str, rejected: bool) -> None:
    error = ("error", {"type": "error", "error": {"type": kind, "message": "nope"}})
    with pytest.raises(StreamInterrupted) as caught:
        run_anthropic(sse([start(), PING, error]))
    assert caught.value.rejected is rejected
    assert kind in caught.value.problem


def test_anthropic_stream_ending_early_is_interrupted() -> None:
    with pytest.raises(StreamInterrupted, match="message_stop"):
        run_anthropic(sse([start(), block(0, {"type": "text", "text": ""})]))


@pytest.mark.parametrize(
    "events",
    [
        [("message_start", {"type": "message_start"})],
        [start(), delta(3, "text_delta", "text", "x")],
        [start(), block(0, {"type": "text", "text": ""}), delta(0, "text_delta", "text", 5)],  # type: ignore[arg-type]
        [("x", "not json")],
    ],
)
def test_anthropic_malformed_events_are_invalid(events: list[tuple[str, Any]]) -> None:
    with pytest.raises(ModelResponseInvalid):
        run_anthropic(sse(list(events)))  # type: ignore[arg-type]


def test_stream_limits_scale_with_the_output_cap() -> None:
    small, large = StreamLimits.for_output(256), StreamLimits.for_output(4096)
    assert small.max_bytes < large.max_bytes and small.max_events < large.max_events
    assert large.max_events >= 2 * 4096


def test_unknown_event_types_are_ignored() -> None:
    acc = AnthropicStream()
    acc.add(SseEvent("novidade", json.dumps({"type": "novidade", "x": 1})))
    assert not acc.done
