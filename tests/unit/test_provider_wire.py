"""Unit tests of the provider wire formats: request bodies built, answers parsed (pure)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from turn.errors import ModelResponseInvalid
from turn.model import InjectedSkill, ModelMessage, ModelRequest, ToolCall
from turn.prompt import build_prefix, prompt_cache_key, render_skill_context
from turn.providers import anthropic, openai_compat
from turn.tools.registry import turn_tools

PREFIX = build_prefix("Você é a Bia, da Loja Teste.", turn_tools(), "# Skills instaladas\n- a: b\n")
SKILL = InjectedSkill("segunda-via", "Envio a segunda via.", ("references/prazos.md",))
CALL = ToolCall("toolu_01", "read_skill_reference", {"skill_name": "segunda-via", "path": "p"})


def request(
    messages: tuple[ModelMessage, ...] = (ModelMessage("user", "Oi, preciso do boleto"),),
    injected: tuple[InjectedSkill, ...] = (SKILL,),
    cache_key: str | None = "skillet-abc",
) -> ModelRequest:
    return ModelRequest(
        prefix=PREFIX,
        skill_context=render_skill_context(injected),
        messages=messages,
        tools=turn_tools(),
        injected_skills=injected,
        cache_key=cache_key,
    )


def cache_marks(value: Any, path: str = "") -> list[str]:
    """Every JSON path holding a cache_control key."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "cache_control":
                found.append(path)
            found.extend(cache_marks(item, f"{path}.{key}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(cache_marks(item, f"{path}[{index}]"))
    return found


ROUND_TRIP = (
    ModelMessage("assistant", "resposta antiga"),  # history cut mid-exchange: dropped
    ModelMessage("user", "Oi"),
    ModelMessage("user", "preciso do boleto"),
    ModelMessage("assistant", "", tool_calls=(CALL,)),
    ModelMessage("tool", "Prazo: 30 dias.", tool_call_id="toolu_01"),
    ModelMessage("tool", "[erro x] não existe", tool_call_id="toolu_02", is_error=True),
)


# Anthropic


def test_anthropic_caches_the_prefix_block_only_and_puts_skill_bodies_after_it() -> None:
    body = anthropic.build_request(request(), model="claude-test", max_tokens=256)
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 256
    assert body["system"][0] == {
        "type": "text",
        "text": PREFIX,
        "cache_control": {"type": "ephemeral"},
    }
    assert body["system"][1] == {"type": "text", "text": render_skill_context((SKILL,))}
    assert cache_marks(body) == [".system[0]"]
    assert [t["name"] for t in body["tools"]] == [t.name for t in turn_tools()]
    assert body["tools"][0]["input_schema"] == turn_tools()[0].parameters
    assert "prompt_cache_key" not in body


def test_anthropic_prefix_block_is_identical_whatever_matched_or_was_said() -> None:
    one = anthropic.build_request(request(), model="m", max_tokens=1)
    other = anthropic.build_request(
        request((ModelMessage("user", "frete?"),), injected=()), model="m", max_tokens=1
    )
    assert json.dumps(one["system"][0]) == json.dumps(other["system"][0])
    assert one["tools"] == other["tools"]
    assert len(other["system"]) == 1  # nothing matched: no empty block


def test_anthropic_messages_alternate_and_carry_the_tool_round_trip() -> None:
    body = anthropic.build_request(request(ROUND_TRIP), model="m", max_tokens=1)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Oi"},
                {"type": "text", "text": "preciso do boleto"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "read_skill_reference",
                    "input": {"skill_name": "segunda-via", "path": "p"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Prazo: 30 dias."},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": "[erro x] não existe",
                    "is_error": True,
                },
            ],
        },
    ]


def test_anthropic_answer_with_text_and_tool_use_and_cache_usage() -> None:
    response = anthropic.parse_response(
        {
            "model": "claude-test-20250101",
            "content": [
                {"type": "thinking", "thinking": "..."},
                {"type": "text", "text": "Vou consultar."},
                {"type": "tool_use", "id": "toolu_9", "name": "skill_view", "input": {"a": 1}},
            ],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": 50,
                "output_tokens": 20,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 1500,
            },
        },
        requested_model="claude-test",
    )
    assert response.text == "Vou consultar."
    assert response.tool_calls == (ToolCall("toolu_9", "skill_view", {"a": 1}),)
    assert (response.input_tokens, response.output_tokens) == (1550, 20)
    assert (response.cache_write_tokens, response.cache_read_tokens) == (0, 1500)
    assert (response.provider, response.model) == ("anthropic", "claude-test-20250101")


def test_anthropic_cache_fields_may_be_null_or_absent_and_are_then_unknown() -> None:
    response = anthropic.parse_response(
        {
            "content": [{"type": "text", "text": "oi"}],
            "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": None},
        },
        requested_model="claude-test",
    )
    assert (response.input_tokens, response.cache_read_tokens, response.cache_write_tokens) == (
        5,
        None,
        None,
    )
    assert response.model == "claude-test"
    assert response.truncated is False


def test_anthropic_without_usage_reports_unknown_counts_and_max_tokens_is_truncated() -> None:
    response = anthropic.parse_response(
        {"content": [{"type": "text", "text": "Olá, o prazo"}], "stop_reason": "max_tokens"},
        requested_model="m",
    )
    assert (response.input_tokens, response.output_tokens) == (None, None)
    assert response.truncated is True


def test_anthropic_request_streams() -> None:
    assert anthropic.build_request(request(), model="m", max_tokens=1)["stream"] is True


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"content": "texto solto"},
        {"content": ["não é bloco"]},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "tool_use", "id": "t", "name": "x", "input": "[]"}]},
        {"content": [{"type": "tool_use", "name": "x", "input": {}}]},
        {"content": [], "usage": {"input_tokens": "muitos"}},
        {"content": [], "usage": {"input_tokens": -1}},
        {"content": [], "usage": []},
    ],
)
def test_anthropic_malformed_answers_are_a_clear_error(body: dict[str, Any]) -> None:
    with pytest.raises(ModelResponseInvalid) as caught:
        anthropic.parse_response(body, requested_model="m")
    assert caught.value.code == "model_response_invalid"
    assert caught.value.retryable is False
    assert "anthropic" in str(caught.value)


# OpenAI-compatible


def test_openai_request_has_prefix_first_tools_and_the_cache_key() -> None:
    body = openai_compat.build_request(request(ROUND_TRIP[1:]), model="gpt-test", max_tokens=300)
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith(PREFIX)
    assert system["content"].endswith(render_skill_context((SKILL,)))
    assert body["prompt_cache_key"] == "skillet-abc"
    assert body["max_completion_tokens"] == 300
    assert "max_tokens" not in body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": turn_tools()[0].name,
            "description": turn_tools()[0].description,
            "parameters": turn_tools()[0].parameters,
        },
    }
    assert body["messages"][1:] == [
        {"role": "user", "content": "Oi"},
        {"role": "user", "content": "preciso do boleto"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_01",
                    "type": "function",
                    "function": {
                        "name": "read_skill_reference",
                        "arguments": '{"skill_name":"segunda-via","path":"p"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01", "content": "Prazo: 30 dias."},
        {"role": "tool", "tool_call_id": "toolu_02", "content": "[erro x] não existe"},
    ]


def test_openai_options_for_local_servers() -> None:
    body = openai_compat.build_request(
        request(cache_key=None),
        model="llama3.1",
        max_tokens=64,
        max_tokens_field="max_tokens",
    )
    assert body["max_tokens"] == 64
    assert "prompt_cache_key" not in body
    off = openai_compat.build_request(
        request(), model="m", max_tokens=1, send_prompt_cache_key=False
    )
    assert "prompt_cache_key" not in off


def test_openai_answer_with_tool_calls_and_cached_tokens() -> None:
    response = openai_compat.parse_response(
        {
            "model": "gpt-test-2025",
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "skill_view", "arguments": '{"name":"a"}'},
                            },
                            {
                                "id": "call_2",
                                "type": "function",
                                "function": {"name": "skill_view", "arguments": "{quebrado"},
                            },
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {
                "prompt_tokens": 2000,
                "completion_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 1792},
            },
        },
        requested_model="gpt-test",
    )
    assert response.text is None
    assert response.tool_calls == (
        ToolCall("call_1", "skill_view", {"name": "a"}),
        ToolCall("call_2", "skill_view", {}),  # broken JSON: the tool teaches, the turn goes on
    )
    assert (response.input_tokens, response.output_tokens) == (2000, 15)
    assert (response.cache_read_tokens, response.cache_write_tokens) == (1792, 0)
    assert (response.provider, response.model) == ("openai", "gpt-test-2025")


def test_openai_usage_is_optional_for_local_servers_and_then_unknown() -> None:
    response = openai_compat.parse_response(
        {"choices": [{"message": {"content": "oi"}}]}, requested_model="llama"
    )
    assert (response.text, response.input_tokens, response.model) == ("oi", None, "llama")
    assert (response.output_tokens, response.cache_read_tokens) == (None, None)
    assert response.cache_write_tokens is None


def test_openai_usage_without_cache_details_has_unknown_cached_tokens() -> None:
    response = openai_compat.parse_response(
        {
            "choices": [{"message": {"content": "Olá, o pra"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 8},
        },
        requested_model="llama",
    )
    assert (response.input_tokens, response.output_tokens) == (30, 8)
    assert (response.cache_read_tokens, response.cache_write_tokens) == (None, 0)
    assert response.truncated is True


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"choices": []},
        {"choices": [{"text": "legado"}]},
        {"choices": [{"message": {"content": ["parte"]}}]},
        {"choices": [{"message": {"tool_calls": {"id": "x"}}}]},
        {"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]},
        {"choices": [{"message": {"content": "oi"}}], "usage": {"prompt_tokens": 1.5}},
        {"choices": [{"message": {"content": "oi"}}], "usage": {"prompt_tokens_details": 3}},
    ],
)
def test_openai_malformed_answers_are_a_clear_error(body: dict[str, Any]) -> None:
    with pytest.raises(ModelResponseInvalid) as caught:
        openai_compat.parse_response(body, requested_model="m")
    assert "openai" in str(caught.value)
    assert caught.value.retryable is False


def test_prompt_cache_key_is_stable_per_org_and_agent_and_reveals_neither() -> None:
    org, agent = uuid.uuid4(), uuid.uuid4()
    key = prompt_cache_key(org, agent)
    assert key == prompt_cache_key(org, agent)
    assert key != prompt_cache_key(org, uuid.uuid4())
    assert key != prompt_cache_key(org, None)
    assert str(org) not in key and str(agent) not in key
    assert len(key) <= 64
