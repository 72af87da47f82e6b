"""Benchmark: three turns of one conversation against a real OpenAI-compatible server.

Sends what a worker sends (the byte-stable prefix with persona, tool definitions and a skill
index; the matched skill's body after it; the conversation so far), streamed through the
real adapter, and prints per turn: status (replied, trimmed when the output cap cut the
answer, or the error code), model calls, input / output / cached tokens and the cached share
of the input (`unknown` when the server reports no count), the time waiting for the model,
and the start of the reply. The cached share should rise after turn 1: the prefix is reused.

Run against llama-server (see docs/model-providers.md), vLLM, Ollama, OpenAI...:
    .venv/bin/python bench/real_model.py http://127.0.0.1:8080/v1 smollm2
Without arguments it runs against the local fake server of the tests (what `make bench`
does). Exits 1 when a turn did not reply.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skills.models import LoadedSkill, SkillMatcher
from tests.model_fakes import FakeOpenAI
from turn.agent_loop import LoopOutcome, run_agent_loop
from turn.errors import ModelError
from turn.matcher import compile_matcher
from turn.model import (
    InjectedSkill,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ToolCall,
)
from turn.prompt import build_prefix, prompt_cache_key, render_skill_context
from turn.providers.http import RetryPolicy, model_http_session
from turn.providers.openai_compat import OpenAICompatModel, OpenAIConfig
from turn.reply_trim import trims_reply
from turn.skill_index import render_skill_index
from turn.tools.base import ToolResult
from turn.tools.registry import turn_tools

ORG = uuid.UUID(int=7)
PERSONA = (
    "Você é a Bia, assistente da Casa Aurora Móveis no WhatsApp. Responda em português do "
    "Brasil, com cordialidade e frases curtas. Quando não souber, diga que vai encaminhar."
)
SKILLS = [
    ("frete", "Calcula frete e prazo de entrega pelo CEP.", ["frete", "cep"]),
    ("boleto", "Segunda via de boleto e vencimentos.", ["boleto", "segunda via"]),
    ("troca", "Regras de troca em até 7 dias.", ["troca", "trocar"]),
    ("garantia", "Garantia de fábrica e assistência técnica.", ["garantia", "defeito"]),
]
TURNS = [
    "Oi, boa tarde! Vocês entregam em Campinas?",
    "Quanto fica o frete para o CEP 13010-000?",
    "E se o sofá chegar com defeito, posso trocar?",
]
PREVIEW_CHARS = 70


def make_skills() -> list[LoadedSkill]:
    return [
        LoadedSkill(
            name=name,
            description=description,
            body=f"# {description}\n- Responda com os prazos da tabela e ofereça ajuda.",
            matcher=SkillMatcher(any_keywords=keywords),
            version_id=uuid.UUID(int=100 + i),
        )
        for i, (name, description, keywords) in enumerate(SKILLS)
    ]


async def no_reference(call: ToolCall) -> ToolResult:
    return ToolResult.error("reference_not_found", "Não há referências neste teste.")


def share(usage: ModelUsage) -> str:
    if usage.cache_read_tokens is None or not usage.input_tokens:
        return "unknown"
    return f"{usage.cache_read_tokens / usage.input_tokens:.0%}"


def count(value: int | None) -> str:
    return "unknown" if value is None else str(value)


class Watched:
    """The model, remembering its last answer (was it cut by the output cap?)."""

    def __init__(self, inner: OpenAICompatModel) -> None:
        self.inner = inner
        self.last: ModelResponse | None = None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.last = await self.inner.complete(request)
        return self.last


async def converse(model: Watched, *, with_tools: bool) -> bool:
    skills = make_skills()
    prefix = build_prefix(PERSONA, turn_tools() if with_tools else (), render_skill_index(skills))
    history: list[ModelMessage] = []
    all_replied = True
    for number, text in enumerate(TURNS, start=1):
        match = compile_matcher(skills).match(text, max_matched=3)
        injected = tuple(InjectedSkill(s.name, s.body, s.reference_paths) for s in match.matched)
        request = ModelRequest(
            prefix=prefix,
            skill_context=render_skill_context(injected),
            messages=(*history, ModelMessage("user", text)),
            tools=turn_tools() if with_tools else (),
            injected_skills=injected,
            cache_key=prompt_cache_key(ORG, None),
        )
        started = time.monotonic()
        try:
            outcome: LoopOutcome = await run_agent_loop(model, request, no_reference, max_steps=3)
        except ModelError as exc:
            all_replied = False
            print(f"turn {number}: failed {exc.code} after {time.monotonic() - started:.1f} s")
            print(f"  {exc.message[:200]}")
            continue
        usage = outcome.usage
        status = "exhausted" if outcome.exhausted else "replied"
        if model.last is not None and trims_reply(model.last):
            status += " (cut by the output cap: trimmed to its last sentence)"
        print(
            f"turn {number}: {status}, {usage.calls} call(s), "
            f"input {count(usage.input_tokens)}, output {count(usage.output_tokens)}, "
            f"cached {count(usage.cache_read_tokens)} ({share(usage)} of input), "
            f"model {usage.latency_ms} ms"
        )
        print(f"  reply: {outcome.text[:PREVIEW_CHARS]!r}")
        history += [ModelMessage("user", text), ModelMessage("assistant", outcome.text)]
    return all_replied


async def run(args: argparse.Namespace) -> bool:
    config = OpenAIConfig(
        model=args.model,
        api_key=os.environ.get("SKILLET_OPENAI_API_KEY") or None,
        base_url=args.url,
        max_tokens=args.max_tokens,
        max_tokens_field=args.max_tokens_field,
        policy=RetryPolicy(max_attempts=1),
    )
    async with model_http_session(connect_timeout_s=5, read_timeout_s=args.read_timeout_s) as http:
        print(
            f"{args.url} model {args.model}: {len(TURNS)} turns, output cap {args.max_tokens} "
            f"tokens, read timeout {args.read_timeout_s:g} s (longest silence)"
        )
        model = Watched(OpenAICompatModel(http, config))
        return await converse(model, with_tools=not args.no_tools)


async def run_against_fake(args: argparse.Namespace) -> bool:
    fake = FakeOpenAI(api_key=None)
    await fake.start()
    fake.pause_s = 0.01  # streamed, a little slowly
    try:
        args.url, args.model = fake.base_url + "/v1", "fake"
        return await run(args)
    finally:
        await fake.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", help="base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("model", nargs="?", help="the model name the server expects")
    parser.add_argument("--max-tokens", type=int, default=200, help="output cap per call")
    parser.add_argument(
        "--max-tokens-field",
        choices=["max_tokens", "max_completion_tokens"],
        default="max_tokens",
        help="the name the server reads (local servers: max_tokens)",
    )
    parser.add_argument("--read-timeout-s", type=float, default=45.0)
    parser.add_argument("--no-tools", action="store_true", help="send no tool definitions")
    args = parser.parse_args(argv)
    if (args.url is None) != (args.model is None):
        parser.error("give both URL and MODEL, or neither (the local fake server)")
    replied = asyncio.run(run(args) if args.url else run_against_fake(args))
    return 0 if replied else 1


if __name__ == "__main__":
    sys.exit(main())
