"""Unit tests of turn.prompt and the tool registry: a byte-stable, cacheable prefix."""

from __future__ import annotations

import hashlib
import json
import uuid

from skills.models import FileKind, LoadedSkill, ManifestEntry, SkillMatcher
from turn.matcher import match_skills
from turn.model import InjectedSkill, ToolDefinition
from turn.prompt import PrefixCache, build_prefix, prefix_sha256, render_skill_context
from turn.skill_index import render_skill_index
from turn.tools.registry import turn_tools

READ_SKILL_REFERENCE = next(t for t in turn_tools() if t.name == "read_skill_reference")

PERSONA = "Você é a Bia, assistente da Loja Exemplo."
MESSAGE = "Preciso da segunda via do boleto, por favor"
SECRET_BODY = "CORPO-SECRETO: envie o link seguro em 5 minutos."
REFERENCE_BODY = "CONTEUDO-DA-REFERENCIA: multa de 2%."

ZETA = ToolDefinition(name="zeta_tool", description="última", parameters={"type": "object"})
ALFA = ToolDefinition(
    name="alfa_tool",
    description="primeira",
    parameters={"type": "object", "properties": {"b": {"type": "string"}, "a": {}}},
)


def boleto_skill(description: str = "Segunda via de boleto.") -> LoadedSkill:
    return LoadedSkill(
        name="segunda-via-boleto",
        description=description,
        body=SECRET_BODY,
        matcher=SkillMatcher(any_keywords=["boleto"]),
        manifest=(
            ManifestEntry("references/prazos.md", 10, "0" * 64, FileKind.REFERENCE),
            ManifestEntry("assets/logo.png", 10, "1" * 64, FileKind.ASSET),
        ),
        version_id=uuid.uuid4(),
    )


def frete_skill() -> LoadedSkill:
    return LoadedSkill(
        name="frete",
        description="Calcula o frete por CEP.",
        body="Frete grátis acima de R$ 199.",
        matcher=SkillMatcher(any_keywords=["frete"]),
        version_id=uuid.uuid4(),
    )


def tools_section(prefix: str) -> list[dict[str, object]]:
    after = prefix.split("# Ferramentas\n", 1)[1]
    parsed: list[dict[str, object]] = json.loads(after.split("\n", 1)[0])
    return parsed


def test_same_inputs_in_any_tool_order_give_identical_bytes() -> None:
    index = render_skill_index([boleto_skill(), frete_skill()])
    forward = build_prefix(PERSONA, [ALFA, ZETA, READ_SKILL_REFERENCE], index)
    backward = build_prefix(PERSONA, [READ_SKILL_REFERENCE, ZETA, ALFA], index)
    assert forward.encode("utf-8") == backward.encode("utf-8")
    assert prefix_sha256(forward) == prefix_sha256(backward)


def test_prefix_contains_persona_sorted_tools_and_the_skill_index() -> None:
    index = render_skill_index([boleto_skill(), frete_skill()])
    prefix = build_prefix(PERSONA, [ZETA, READ_SKILL_REFERENCE, ALFA], index)
    assert prefix.startswith(PERSONA)
    assert index.rstrip() in prefix
    assert "- frete: Calcula o frete por CEP." in prefix
    assert "- segunda-via-boleto: Segunda via de boleto." in prefix
    tools = tools_section(prefix)
    assert [t["name"] for t in tools] == ["alfa_tool", "read_skill_reference", "zeta_tool"]
    assert tools[1] == READ_SKILL_REFERENCE.to_json()
    # Persona, then tools, then the index: the order the provider caches.
    assert prefix.index(PERSONA) < prefix.index("# Ferramentas") < prefix.index(index.rstrip())


def test_tool_json_is_canonical_whatever_the_key_order_of_its_schema() -> None:
    shuffled = ToolDefinition(
        name="alfa_tool",
        description="primeira",
        parameters={"properties": {"a": {}, "b": {"type": "string"}}, "type": "object"},
    )
    index = render_skill_index([])
    assert build_prefix(PERSONA, [ALFA], index) == build_prefix(PERSONA, [shuffled], index)


def test_turn_tools_offers_read_skill_reference_with_its_required_arguments() -> None:
    tools = turn_tools()
    assert [t.name for t in tools] == sorted(t.name for t in tools)
    assert READ_SKILL_REFERENCE in tools
    assert READ_SKILL_REFERENCE.parameters["required"] == ["skill_name", "path"]
    assert turn_tools() == tools  # a fresh call renders the same, in the same order


def test_changing_the_installed_set_changes_the_prefix() -> None:
    before = build_prefix(PERSONA, turn_tools(), render_skill_index([boleto_skill()]))
    added = build_prefix(PERSONA, turn_tools(), render_skill_index([boleto_skill(), frete_skill()]))
    described = build_prefix(
        PERSONA, turn_tools(), render_skill_index([boleto_skill("Boletos e prazos.")])
    )
    assert len({before, added, described}) == 3
    assert len({prefix_sha256(before), prefix_sha256(added), prefix_sha256(described)}) == 3


def test_a_new_version_with_the_same_name_and_description_keeps_the_prefix() -> None:
    first = build_prefix(PERSONA, turn_tools(), render_skill_index([boleto_skill()]))
    second = build_prefix(PERSONA, turn_tools(), render_skill_index([boleto_skill()]))
    assert first == second


def test_prefix_never_contains_the_message_or_matched_bodies() -> None:
    installed = [boleto_skill(), frete_skill()]
    prefix = build_prefix(PERSONA, turn_tools(), render_skill_index(installed))
    match = match_skills(installed, MESSAGE)
    assert [s.name for s in match.matched] == ["segunda-via-boleto"]
    injected = [InjectedSkill(s.name, s.body, s.reference_paths) for s in match.matched]
    context = render_skill_context(injected)

    assert MESSAGE not in prefix
    assert SECRET_BODY not in prefix
    assert "references/prazos.md" not in prefix
    assert SECRET_BODY in context
    assert not context.startswith(prefix) and prefix not in context
    # The prefix built again after matching is still the same bytes.
    assert build_prefix(PERSONA, turn_tools(), render_skill_index(installed)) == prefix


def test_skill_context_labels_each_skill_with_name_and_reference_paths_not_bodies() -> None:
    context = render_skill_context(
        [
            InjectedSkill("segunda-via-boleto", SECRET_BODY, ("references/prazos.md",)),
            InjectedSkill("frete", "Frete grátis acima de R$ 199.", ()),
        ]
    )
    assert context.startswith("# Skills ativadas nesta mensagem")
    boleto_block = context.split('<skill name="segunda-via-boleto">', 1)[1].split("</skill>")[0]
    frete_block = context.split('<skill name="frete">', 1)[1].split("</skill>")[0]
    assert SECRET_BODY in boleto_block
    assert "references/prazos.md" in boleto_block
    assert "read_skill_reference" in boleto_block
    assert "Frete grátis acima de R$ 199." in frete_block
    assert "nenhuma" in frete_block
    assert REFERENCE_BODY not in context


def test_skill_context_is_empty_when_nothing_matched() -> None:
    assert render_skill_context([]) == ""


def test_prefix_sha256_is_the_stable_hex_digest_of_the_utf8_bytes() -> None:
    prefix = build_prefix(PERSONA, turn_tools(), render_skill_index([boleto_skill()]))
    digest = prefix_sha256(prefix)
    assert digest == prefix_sha256(prefix)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert digest == hashlib.sha256(prefix.encode("utf-8")).hexdigest()
    # Known vector: UTF-8 bytes, not the platform's default encoding.
    assert (
        prefix_sha256("ação") == "0664077f33cc3ebbaa4bbdacac0eb70e740983080f01dce29929e73b7785a7ad"
    )
    assert prefix_sha256(prefix + " ") != digest


def test_the_prefix_cache_gives_build_prefix_bytes_and_builds_them_once() -> None:
    cache = PrefixCache(turn_tools(), max_entries=2)
    index = render_skill_index([boleto_skill()])
    first = cache.get(PERSONA, index)
    assert first.text == build_prefix(PERSONA, turn_tools(), index)
    assert first.sha256 == prefix_sha256(first.text)
    assert cache.get(PERSONA, index) is first
    other_persona = cache.get("Você é o Léo.", index)
    assert other_persona.text == build_prefix("Você é o Léo.", turn_tools(), index)
    changed_index = render_skill_index([boleto_skill("Boletos e carnês.")])
    assert cache.get(PERSONA, changed_index).text != first.text
    assert cache.get(PERSONA, index) is not first  # the least recently used went
