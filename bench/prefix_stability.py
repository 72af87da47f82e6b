"""Benchmark: is the cacheable prompt prefix byte-stable while different skills match?

A 20-turn pt-BR conversation with 30 installed skills; each turn matches different skills
(some none, some with a reference read through the tool loop). Every turn rebuilds the
prompt from the installed set as the database returns it (a different order each time) and
sends it through the real Anthropic adapter to a local server speaking the Messages API.
Prints the share of turns whose prefix bytes equal turn 1's (must be 100%; exit 1 otherwise)
and, last, the share of request bytes that sit in the cached prefix (tools + the system
block carrying cache_control), over every request of the conversation.

Run: .venv/bin/python bench/prefix_stability.py
"""

from __future__ import annotations

import asyncio
import random
import sys
import uuid
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.object_store import ObjectNotFound, StoredObject
from skills.models import FileKind, LoadedSkill, ManifestEntry, SkillMatcher
from tests.model_fakes import FakeAnthropic
from tests.tool_support import read_reference, reference_context
from turn.agent_loop import run_agent_loop
from turn.matcher import compile_matcher
from turn.model import InjectedSkill, ModelMessage, ModelRequest, ToolCall
from turn.prompt import build_prefix, prompt_cache_key, render_skill_context
from turn.providers.anthropic import AnthropicConfig, AnthropicModel
from turn.providers.http import model_http_session
from turn.skill_index import render_skill_index
from turn.tools.base import ToolResult
from turn.tools.registry import turn_tools

SEED = 20_260_301
ORG = uuid.UUID(int=7)
AGENT = uuid.UUID(int=8)
PERSONA = (
    "Você é a Bia, assistente da Casa Aurora Móveis e Decoração no WhatsApp. Responda em "
    "português do Brasil, com cordialidade, frases curtas e sem prometer o que as skills não "
    "dizem. Quando não souber, diga que vai encaminhar para a equipe."
)
MAX_INJECTED = 3

# (name, description, keywords, has a reference file)
# fmt: off
SKILLS: list[tuple[str, str, list[str], bool]] = [
    ("agendamento", "Agenda visitas e horários de atendimento.", ["agendar", "horário"], True),
    ("boleto", "Segunda via de boleto e vencimentos.", ["boleto", "segunda via"], True),
    ("pix", "Envia a chave Pix e confirma pagamentos.", ["pix", "chave"], False),
    ("cartao", "Parcelamento no cartão de crédito e juros.", ["cartão", "parcelar"], True),
    ("frete", "Calcula frete e prazo de entrega pelo CEP.", ["frete", "cep"], True),
    ("rastreio", "Status da entrega pelo rastreio.", ["rastreio", "rastrear"], False),
    ("troca", "Regras de troca em até 7 dias.", ["troca", "trocar"], True),
    ("devolucao", "Devolução e reembolso de produtos.", ["devolução", "reembolso"], True),
    ("garantia", "Garantia de fábrica e assistência técnica.", ["garantia", "defeito"], True),
    ("montagem", "Montagem de móveis em casa.", ["montagem", "montar"], False),
    ("medidas", "Medidas e dimensões dos produtos.", ["medidas", "dimensões"], True),
    ("cores", "Cores e acabamentos disponíveis.", ["cor", "acabamento"], False),
    ("estoque", "Consulta de estoque por loja.", ["estoque", "disponível"], False),
    ("encomenda", "Sob encomenda e prazos de fabricação.", ["encomenda", "sob medida"], True),
    ("orcamento", "Orçamentos para projetos completos.", ["orçamento", "projeto"], False),
    ("nota-fiscal", "Emissão e reenvio de nota fiscal.", ["nota fiscal", "nf"], False),
    ("cupom", "Cupons de desconto e promoções vigentes.", ["cupom", "promoção"], True),
    ("fidelidade", "Programa de pontos Aurora+.", ["pontos", "fidelidade"], False),
    ("lojas", "Endereços e horários das lojas físicas.", ["endereço", "loja física"], True),
    ("retirada", "Retirada do pedido na loja.", ["retirar", "retirada"], False),
    ("cancelamento", "Cancelamento de pedidos antes do envio.", ["cancelar", "cancelamento"], True),
    ("atraso", "Pedidos atrasados e compensações.", ["atrasado", "atraso"], False),
    ("limpeza", "Cuidados e limpeza de estofados e madeira.", ["limpar", "limpeza"], True),
    ("tecidos", "Tipos de tecido e impermeabilização.", ["tecido", "linho"], False),
    ("colchoes", "Colchões, densidade e teste de 30 noites.", ["colchão", "densidade"], True),
    ("planejados", "Móveis planejados e visita técnica.", ["planejado", "visita técnica"], False),
    ("empresas", "Vendas para empresas e CNPJ.", ["cnpj", "empresa"], False),
    ("presentes", "Vale-presente e listas.", ["vale-presente", "lista de casamento"], False),
    ("avaliacao", "Pedido de avaliação depois da entrega.", ["avaliar", "avaliação"], False),
    ("lgpd", "Dados pessoais e exclusão de cadastro.", ["meus dados", "excluir cadastro"], True),
]
# fmt: on

TURNS = [
    "Oi, boa tarde!",
    "Quanto fica o frete para o CEP 01310-100?",
    "E dá para parcelar no cartão em 10 vezes?",
    "Perdi o boleto, preciso da segunda via",
    "Tem a cor azul no sofá Lume? Qual o acabamento dos pés?",
    "Vocês fazem montagem?",
    "Quero agendar uma visita na loja no sábado, qual horário?",
    "Tem estoque disponível na loja de Pinheiros?",
    "Obrigada!",
    "Meu pedido está atrasado e o rastreio não atualiza",
    "Posso trocar a cor da poltrona depois de receber?",
    "Como funciona a garantia se aparecer defeito no tecido?",
    "Qual a densidade do colchão Nuvem?",
    "Tem cupom de primeira compra ou alguma promoção?",
    "Quero cancelar o pedido da mesa",
    "Preciso da nota fiscal com CNPJ da empresa",
    "Como limpar o linho sem manchar?",
    "Vocês fazem móveis sob medida, por encomenda?",
    "Quero excluir cadastro e saber o que fazem com meus dados",
    "Valeu, até mais!",
]


def make_skills() -> list[LoadedSkill]:
    skills = []
    for i, (name, description, keywords, with_reference) in enumerate(SKILLS):
        manifest = (
            (ManifestEntry("references/detalhes.md", 200, "0" * 64, FileKind.REFERENCE),)
            if with_reference
            else ()
        )
        body = "\n".join(
            [f"# {description}", *(f"- Regra {n} de {name}: siga o passo {n}." for n in range(8))]
        )
        skills.append(
            LoadedSkill(
                name=name,
                description=description,
                body=body,
                matcher=SkillMatcher(any_keywords=keywords),
                manifest=manifest,
                version_id=uuid.UUID(int=1000 + i),
            )
        )
    return skills


class ReferenceStore:
    """Every skill's references/detalhes.md, a few lines of pt-BR."""

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        raise AssertionError("a turn never writes")

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        if not key.endswith("/references/detalhes.md"):
            raise ObjectNotFound(key)
        skill = key.split("/")[1]
        text = f"Detalhes de {skill}: prazos, valores e exceções da política vigente.\n" * 4
        return StoredObject(text.encode(), truncated=False)


async def run(fake: FakeAnthropic) -> tuple[list[str], list[tuple[str, ...]]]:
    """The conversation; returns each turn's prefix and matched names."""
    installed = make_skills()
    rng = random.Random(SEED)
    history: list[ModelMessage] = []
    prefixes: list[str] = []
    matched_names: list[tuple[str, ...]] = []
    async with model_http_session(connect_timeout_s=2, read_timeout_s=10) as http:
        model = AnthropicModel(
            http, AnthropicConfig(model="claude-bench", api_key="bench", base_url=fake.base_url)
        )
        for text in TURNS:
            skills = rng.sample(installed, len(installed))  # as the database returns them
            match = compile_matcher(skills).match(text, max_matched=MAX_INJECTED)
            prefix = build_prefix(PERSONA, turn_tools(), render_skill_index(skills))
            injected = tuple(
                InjectedSkill(s.name, s.body, s.reference_paths) for s in match.matched
            )
            request = ModelRequest(
                prefix=prefix,
                skill_context=render_skill_context(injected),
                messages=(*history, ModelMessage("user", text)),
                tools=turn_tools(),
                injected_skills=injected,
                cache_key=prompt_cache_key(ORG, AGENT),
            )

            async def execute(
                call: ToolCall, matched: list[LoadedSkill] = match.matched
            ) -> ToolResult:
                return await read_reference(
                    reference_context(ReferenceStore(), ORG, matched, max_bytes=4096),
                    call.arguments.get("skill_name"),
                    call.arguments.get("path"),
                )

            outcome = await run_agent_loop(model, request, execute, max_steps=4)
            history += [ModelMessage("user", text), ModelMessage("assistant", outcome.text)]
            history = history[-10:]  # the worker's history limit
            prefixes.append(prefix)
            matched_names.append(tuple(s.name for s in match.matched))
    return prefixes, matched_names


def main() -> int:
    fake = FakeAnthropic(api_key=None)

    async def serve_and_run() -> tuple[list[str], list[tuple[str, ...]]]:
        await fake.start()
        try:
            return await run(fake)
        finally:
            await fake.close()

    prefixes, matched = asyncio.run(serve_and_run())
    first = prefixes[0].encode()
    wire_first = fake.received[0].body["system"][0]["text"]
    same = sum(p.encode() == first for p in prefixes)
    wire_same = all(r.body["system"][0]["text"] == wire_first for r in fake.received)
    request_bytes = sum(len(r.raw) for r in fake.received)
    cached_bytes = sum(r.cached_prefix_bytes for r in fake.received)
    print(f"{len(SKILLS)} skills installed, {len(TURNS)} turns, {len(fake.received)} requests")
    for turn, names in enumerate(matched, start=1):
        print(f"turn {turn:2d}: matched {', '.join(names) or '-'}")
    print(f"distinct matched sets: {len(set(matched))}; prefix {len(first)} bytes")
    print(f"prefix block identical on the wire in every request: {'yes' if wire_same else 'NO'}")
    share = same / len(prefixes)
    print(f"turns whose prefix bytes equal turn 1: {same}/{len(prefixes)} ({share:.0%})")
    print(f"request bytes in the cached prefix: {cached_bytes / request_bytes:.1%}")
    return 0 if same == len(prefixes) and wire_same else 1


if __name__ == "__main__":
    sys.exit(main())
