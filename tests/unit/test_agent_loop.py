"""Unit tests of turn.agent_loop with a scripted model: bounded steps, tool plumbing, tokens."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from core.object_store import ObjectNotFound, StoredObject
from skills.models import FileKind, LoadedSkill, ManifestEntry
from tests.tool_support import read_reference, reference_context
from turn.agent_loop import OUT_OF_STEPS_REPLY, ToolCallRecord, run_agent_loop
from turn.local_model import LocalModel
from turn.model import (
    InjectedSkill,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
)
from turn.tools.base import ToolResult
from turn.tools.registry import turn_tools

USER = ModelMessage(role="user", content="Oi! Preciso do boleto.")


class ScriptedModel:
    """Returns the scripted responses in order (the last one forever) and keeps each request."""

    def __init__(self, responses: Sequence[ModelResponse]) -> None:
        self._responses = list(responses)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        index = min(len(self.requests), len(self._responses)) - 1
        return self._responses[index]


class RecordingTools:
    """A tool executor that answers from a table keyed by call id and remembers the calls."""

    def __init__(self, results: dict[str, ToolResult] | None = None) -> None:
        self.results = results or {}
        self.calls: list[ToolCall] = []

    async def __call__(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        return self.results.get(call.id, ToolResult(content=f"resultado de {call.id}"))


def base_request(injected: tuple[InjectedSkill, ...] = ()) -> ModelRequest:
    return ModelRequest(
        prefix="prefixo estável",
        skill_context="",
        messages=(USER,),
        tools=turn_tools(),
        injected_skills=injected,
    )


def call(call_id: str, path: str = "references/a.md") -> ToolCall:
    return ToolCall(call_id, "read_skill_reference", {"skill_name": "boleto", "path": path})


async def test_a_model_that_always_calls_tools_stops_at_max_steps_with_the_fallback() -> None:
    model = ScriptedModel([ModelResponse(text="pensando", tool_calls=(call("c"),))])
    tools = RecordingTools()
    outcome = await run_agent_loop(model, base_request(), tools, max_steps=3)
    assert outcome.exhausted is True
    assert outcome.text == OUT_OF_STEPS_REPLY
    assert outcome.steps == 3
    assert len(model.requests) == 3
    assert len(tools.calls) == 3
    assert len(outcome.tool_calls) == 3


async def test_a_text_answer_ends_the_loop_at_once() -> None:
    model = ScriptedModel([ModelResponse(text="  Olá, tudo certo!  ")])
    tools = RecordingTools()
    outcome = await run_agent_loop(model, base_request(), tools, max_steps=4)
    assert outcome.exhausted is False
    assert outcome.text == "Olá, tudo certo!"
    assert outcome.steps == 1
    assert outcome.tool_calls == ()
    assert tools.calls == []


async def test_an_empty_text_answer_becomes_the_polite_fallback() -> None:
    model = ScriptedModel([ModelResponse(text="   ")])
    outcome = await run_agent_loop(model, base_request(), RecordingTools(), max_steps=2)
    assert outcome.text == OUT_OF_STEPS_REPLY
    assert outcome.exhausted is False


async def test_tool_calls_are_recorded_with_their_error_codes() -> None:
    model = ScriptedModel(
        [
            ModelResponse(text=None, tool_calls=(call("ok", "references/a.md"), call("bad", "x"))),
            ModelResponse(text="pronto"),
        ]
    )
    tools = RecordingTools({"bad": ToolResult.error("reference_not_found", "não existe")})
    outcome = await run_agent_loop(model, base_request(), tools, max_steps=4)
    assert outcome.tool_calls == (
        ToolCallRecord("read_skill_reference", dict(call("ok").arguments), None),
        ToolCallRecord(
            "read_skill_reference",
            {"skill_name": "boleto", "path": "x"},
            "reference_not_found",
        ),
    )
    assert outcome.steps == 2
    assert outcome.text == "pronto"


async def test_tool_results_go_back_as_tool_messages_with_the_call_id() -> None:
    calls = (call("call_a"), call("call_b", "references/b.md"))
    model = ScriptedModel(
        [ModelResponse(text="vou ler", tool_calls=calls), ModelResponse(text="resposta")]
    )
    tools = RecordingTools(
        {"call_a": ToolResult("conteúdo A"), "call_b": ToolResult.error("skill_not_active", "x")}
    )
    await run_agent_loop(model, base_request(), tools, max_steps=4)

    assert model.requests[0].messages == (USER,)
    second = model.requests[1].messages
    assert second[0] == USER
    assert second[1].role == "assistant"
    assert second[1].tool_calls == calls
    assert second[1].content == "vou ler"
    assert [(m.role, m.tool_call_id, m.content) for m in second[2:]] == [
        ("tool", "call_a", "conteúdo A"),
        ("tool", "call_b", "[erro skill_not_active] x"),
    ]
    # Only the messages change between steps: the cacheable prefix and tools stay put.
    assert model.requests[1].prefix == model.requests[0].prefix
    assert model.requests[1].tools == model.requests[0].tools


async def test_tokens_are_summed_over_every_step() -> None:
    model = ScriptedModel(
        [
            ModelResponse(text=None, tool_calls=(call("a"),), input_tokens=100, output_tokens=7),
            ModelResponse(text=None, tool_calls=(call("b"),), input_tokens=120, output_tokens=5),
            ModelResponse(text="fim", input_tokens=150, output_tokens=30),
        ]
    )
    outcome = await run_agent_loop(model, base_request(), RecordingTools(), max_steps=5)
    assert (outcome.input_tokens, outcome.output_tokens) == (370, 42)
    assert outcome.steps == 3


async def test_tokens_are_summed_even_when_the_steps_run_out() -> None:
    model = ScriptedModel(
        [ModelResponse(text=None, tool_calls=(call("a"),), input_tokens=10, output_tokens=2)]
    )
    outcome = await run_agent_loop(model, base_request(), RecordingTools(), max_steps=4)
    assert outcome.exhausted is True
    assert (outcome.input_tokens, outcome.output_tokens) == (40, 8)


async def test_a_count_one_step_did_not_report_makes_the_turns_total_unknown() -> None:
    model = ScriptedModel(
        [
            ModelResponse(text=None, tool_calls=(call("a"),), input_tokens=100, output_tokens=7),
            ModelResponse(text="fim", input_tokens=None, output_tokens=30, cache_read_tokens=None),
        ]
    )
    outcome = await run_agent_loop(model, base_request(), RecordingTools(), max_steps=5)
    assert (outcome.input_tokens, outcome.output_tokens) == (None, 37)
    assert outcome.usage.to_json()["cache_read_tokens"] is None
    assert outcome.usage.to_json()["cache_write_tokens"] == 0


async def test_a_text_answer_cut_by_the_output_cap_is_trimmed_a_tool_step_is_not() -> None:
    cut = "Vou ver. O prazo é de 30 di"
    model = ScriptedModel(
        [
            ModelResponse(text=cut, tool_calls=(call("a"),), truncated=True),
            ModelResponse(text=cut, truncated=True),
        ]
    )
    outcome = await run_agent_loop(model, base_request(), RecordingTools(), max_steps=5)
    assert outcome.text == "Vou ver."
    assert model.requests[1].messages[1].content == cut  # history keeps what was said


async def test_local_model_reads_the_reference_through_the_real_tool_then_answers() -> None:
    org = uuid.uuid4()
    skill = LoadedSkill(
        name="boleto",
        body="Envio a segunda via pelo link seguro.",
        manifest=(ManifestEntry("references/prazos.md", 20, "0" * 64, FileKind.REFERENCE),),
        version_id=uuid.uuid4(),
    )
    key = f"{org}/boleto/{skill.version_id}/references/prazos.md"

    class OneObjectStore:
        async def put(self, key: str, data: bytes, content_type: str) -> None:
            raise AssertionError("a turn never writes")

        async def get(self, wanted: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
            if wanted != key:
                raise ObjectNotFound(wanted)
            return StoredObject(b"Reemissao em ate 30 dias.", truncated=False)

    async def execute(tool_call: ToolCall) -> ToolResult:
        return await read_reference(
            reference_context(OneObjectStore(), org, [skill], max_bytes=1024),
            tool_call.arguments.get("skill_name"),
            tool_call.arguments.get("path"),
        )

    injected = (InjectedSkill(skill.name, skill.body, skill.reference_paths),)
    outcome = await run_agent_loop(LocalModel(), base_request(injected), execute, max_steps=4)
    assert outcome.exhausted is False
    assert outcome.steps == 2
    assert outcome.tool_calls == (
        ToolCallRecord(
            "read_skill_reference", {"skill_name": "boleto", "path": "references/prazos.md"}, None
        ),
    )
    assert outcome.text == "Envio a segunda via pelo link seguro.\nReemissao em ate 30 dias."


async def test_an_answer_runs_at_most_eight_tools_and_refuses_the_rest_one_by_one() -> None:
    calls = tuple(ToolCall(f"c{i}", "skill_view", {"name": f"s{i}"}) for i in range(12))
    model = ScriptedModel([ModelResponse(text=None, tool_calls=calls), ModelResponse(text="ok")])
    tools = RecordingTools()
    outcome = await run_agent_loop(model, base_request(), tools, max_steps=4)
    assert [c.id for c in tools.calls] == [f"c{i}" for i in range(8)]
    # Every call gets a result (providers require one per call), the extra ones a refusal.
    results = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in results] == [c.id for c in calls]
    assert [m.is_error for m in results] == [False] * 8 + [True] * 4
    assert results[-1].content.startswith("[erro too_many_tool_calls]")
    assert [r.error_code for r in outcome.tool_calls][8:] == ["too_many_tool_calls"] * 4
