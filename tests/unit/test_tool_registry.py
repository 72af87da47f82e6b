"""The tool registry: one module per tool, flat byte-stable schemas, validated arguments."""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from turn.model import ToolCall
from turn.tools.base import Tool, ToolContext, ToolResult, TurnLedger
from turn.tools.registry import ToolRegistry, default_registry, turn_tools
from turn.tools.schema import ToolSchemaError, flat_schema


def _walk(node: Any) -> list[dict[str, Any]]:
    """Every schema node (a `properties` map's keys are argument names, not schema words)."""
    if isinstance(node, dict):
        inner = node.get("properties")
        below = [*(n for k, v in node.items() if k != "properties" for n in _walk(v))]
        if isinstance(inner, dict):
            below += [n for v in inner.values() for n in _walk(v)]
        return [node, *below]
    if isinstance(node, list):
        return [n for v in node for n in _walk(v)]
    return []


def test_every_module_with_a_tool_is_found_and_offered_sorted() -> None:
    assert [t.name for t in turn_tools()] == [
        "handoff_to_human",
        "read_skill_reference",
        "schedule_followup",
        "send_choices",
        "send_skill_file",
        "skill_manage",
        "skill_view",
    ]


def test_schemas_are_flat_and_carry_no_pydantic_noise() -> None:
    for tool in turn_tools():
        schema = tool.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for node in _walk(list(schema["properties"].values())):
            assert not {"title", "anyOf", "$ref", "$defs", "allOf"} & node.keys(), tool.name
            assert node.get("default", "absent") is not None
    manage = next(t for t in turn_tools() if t.name == "skill_manage").parameters
    assert manage["required"] == ["action", "name"]
    assert manage["properties"]["action"] == {
        "enum": ["create", "patch", "write_file", "remove_file"],
        "type": "string",
    }
    assert manage["properties"]["any_keywords"]["type"] == "array"


def test_the_rendered_tools_are_byte_identical_across_registries() -> None:
    first = json.dumps([t.to_json() for t in turn_tools()], ensure_ascii=False)
    default_registry.cache_clear()  # found and rendered anew, as in another worker process
    assert json.dumps([t.to_json() for t in turn_tools()], ensure_ascii=False) == first


class Nested(BaseModel):
    x: int


class Middle(BaseModel):
    inner: Nested


class BadArgs(BaseModel):
    inner: Middle  # a model inside a model inside the arguments: too deep


class ChoiceLike(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    note: str | None = None


class ListArgs(BaseModel):
    items: list[ChoiceLike]


def test_a_list_of_objects_is_written_inline_without_pydantic_noise() -> None:
    schema = flat_schema(ListArgs)
    assert schema["properties"]["items"] == {
        "items": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
        "type": "array",
    }


class UnionArgs(BaseModel):
    value: int | str


def test_a_schema_that_cannot_be_flat_is_refused_at_startup() -> None:
    for args in (BadArgs, UnionArgs):
        with pytest.raises(ToolSchemaError):
            flat_schema(args)


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["a", "b"]
    text: str = Field(max_length=5)
    times: int | None = None


async def _echo(context: ToolContext, args: EchoArgs) -> ToolResult:
    return ToolResult(content=f"{args.mode}:{args.text}")


ECHO = Tool("echo", "Repete.", EchoArgs, _echo)


def _context() -> ToolContext:
    return ToolContext(
        organization_id=uuid.uuid4(),
        pool=None,
        store=None,  # type: ignore[arg-type]
        usage=None,  # type: ignore[arg-type]
        matched=(),
        installed=(),
        max_read_bytes=100,
        ledger=TurnLedger(max_writes=1),
    )


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"text": "oi"}, "mode: campo obrigatório ausente"),
        ({"mode": "c", "text": "oi"}, "mode: valor não permitido"),
        ({"mode": "a", "text": 5}, "text: precisa ser texto"),
        ({"mode": "a", "text": "longo demais"}, "text: texto longo demais"),
        ({"mode": "a", "text": "oi", "org": "x"}, "org: campo não existe nesta ferramenta"),
    ],
)
async def test_invalid_arguments_come_back_as_a_readable_refusal(
    arguments: dict[str, object], fragment: str
) -> None:
    result = await ToolRegistry([ECHO]).execute(_context(), ToolCall("c1", "echo", arguments))
    assert result.error_code == "tool_arguments_invalid"
    assert result.content.startswith("[erro tool_arguments_invalid] Argumentos inválidos para echo")
    assert fragment in result.content


async def test_valid_arguments_run_the_tool_and_unknown_names_are_refused() -> None:
    registry = ToolRegistry([ECHO])
    ok = await registry.execute(_context(), ToolCall("c1", "echo", {"mode": "b", "text": "oi"}))
    assert ok == ToolResult(content="b:oi")
    unknown = await registry.execute(_context(), ToolCall("c2", "rm", {}))
    assert unknown.error_code == "unknown_tool" and "echo" in unknown.content


def test_two_tools_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([ECHO, ECHO])


def test_a_turn_ledger_counts_writes() -> None:
    ledger = TurnLedger(max_writes=2)
    assert [ledger.take_write() for _ in range(3)] == [True, True, False]
