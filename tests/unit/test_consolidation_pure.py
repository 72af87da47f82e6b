"""Consolidation's pure core: similarity, average-linkage groups, the umbrella plan, the gates."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from consolidation.distill import Limits, TooLarge, moved_path, plan_umbrella
from consolidation.gates import Pressure, SkipReason, skip_reason
from consolidation.grouping import Candidate, average_groups
from consolidation.similarity import DEFAULT_THRESHOLD, Link, SkillText, lexical_links, name_words
from skills.catalog_queries import PointedVersion
from skills.models import FileKind, ManifestEntry, SkillMatcher

PILES = {
    "troca": [
        SkillText(
            "troca-de-produto",
            "Como trocar um produto comprado na loja",
            "Explique a troca: até 30 dias, com nota fiscal, produto sem uso.",
            ("troca", "trocar produto"),
        ),
        SkillText(
            "trocar-produto",
            "Troca de produtos: prazos e regras da troca",
            "A troca do produto vale por 30 dias com a nota fiscal e sem uso.",
            ("troca", "troca de produto"),
        ),
        SkillText(
            "politica-de-troca",
            "Política de troca de produto comprado na loja",
            "Troca de produto em até 30 dias; peça a nota fiscal; o produto sem uso.",
            ("troca", "política de troca"),
        ),
    ],
    "pix": [
        SkillText(
            "pagamento-pix",
            "Envia a chave Pix e confirma o pagamento",
            "Mande a chave Pix da loja e peça o comprovante do Pix.",
            ("pix", "chave pix"),
        ),
        SkillText(
            "pix-chave",
            "Chave Pix para pagamento do pedido",
            "Informe a chave Pix e confirme o pagamento pelo comprovante Pix.",
            ("pix", "pagar com pix"),
        ),
    ],
    "horario": [
        SkillText(
            "horario-de-funcionamento",
            "Horário de funcionamento da loja física",
            "A loja abre de segunda a sábado, das 9h às 18h; domingo fechada.",
            ("horário", "que horas abre"),
        ),
    ],
}
ALL = [s for pile in PILES.values() for s in pile]


def test_near_duplicates_link_and_unrelated_skills_do_not() -> None:
    links = lexical_links(ALL)
    pairs = {(x.a, x.b) for x in links}
    topic = {s.name: t for t, pile in PILES.items() for s in pile}
    assert all(topic[a] == topic[b] for a, b in pairs), links
    assert ("pagamento-pix", "pix-chave") in pairs
    assert ("politica-de-troca", "troca-de-produto") in pairs
    assert all(DEFAULT_THRESHOLD <= x.score <= 1 and x.a < x.b for x in links)


def test_links_are_deterministic_whatever_the_input_order() -> None:
    assert lexical_links(ALL) == lexical_links(list(reversed(ALL)))


def test_a_compound_is_one_word_in_the_name_where_the_skill_writes_it_so() -> None:
    compounds = {"micro-ondas", "caixa-de-som"}
    assert name_words("troca-micro-ondas-loja", compounds) == ["troca", "micro-ondas", "loja"]
    assert name_words("caixa-de-som-pix", compounds) == ["caixa-de-som", "pix"]
    assert name_words("troca-micro-ondas", set()) == ["troca", "micro", "ondas"]


def test_hostile_sizes_are_cut_before_reading() -> None:
    huge = SkillText("huge", "x " * 500_000, "palavra " * 1_000_000, ())
    links = lexical_links([huge, *ALL])
    assert all("huge" not in (x.a, x.b) for x in links)


def test_groups_take_the_most_used_as_umbrella_and_never_chain() -> None:
    # a-b-c are one pile; d is linked strongly to c only: its average with {a, b, c} is
    # 0.9 / 3 = 0.3, so the chain a-b-c-d never lands in one group.
    links = [Link("a", "b", 0.9), Link("b", "c", 0.8), Link("a", "c", 0.7), Link("c", "d", 0.6)]
    candidates = [Candidate("a", 1), Candidate("b", 5), Candidate("c", 2), Candidate("d", 0)]
    groups = average_groups(candidates, links, threshold=0.55)
    assert [(g.umbrella, g.absorbs, g.scores) for g in groups] == [("b", ("a", "c"), (0.9, 0.8))]


def test_a_member_whose_one_link_falls_short_still_joins_its_pile() -> None:
    # The previous stars needed every pair linked: "p4" (no link to p1) split the pile.
    links = [
        Link("p1", "p2", 0.8),
        Link("p1", "p3", 0.8),
        Link("p2", "p3", 0.8),
        Link("p2", "p4", 0.8),
        Link("p3", "p4", 0.8),
    ]
    candidates = [Candidate(n) for n in ("p1", "p2", "p3", "p4")]
    # p4 to {p1, p2, p3}: (0 + 0.8 + 0.8) / 3 = 0.53.
    [group] = average_groups(candidates, links, threshold=0.5)
    assert (group.umbrella, group.absorbs) == ("p1", ("p2", "p3", "p4"))
    assert group.scores == (0.8, 0.8, 0.0)  # p4 has no link to the umbrella
    [strict] = average_groups(candidates, links, threshold=0.6)
    assert (strict.umbrella, strict.absorbs) == ("p1", ("p2", "p3"))


def test_groups_tie_break_on_activity_then_name_and_cap_the_size() -> None:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    names = [f"s{i}" for i in range(12)]
    links = [Link(x, y, 0.9) for i, x in enumerate(names) for y in names[i + 1 :]]
    candidates = [Candidate(n, 0, now - timedelta(days=i)) for i, n in enumerate(names)]
    groups = average_groups(candidates, links)
    # Equal links: merged in name order (code points: s10 before s2); 8 skills a group at
    # most; the largest group first; the latest active member is the umbrella.
    assert [len(g.absorbs) + 1 for g in groups] == [8, 4]
    assert groups[0].umbrella == "s0"
    assert groups[0].absorbs == ("s1", "s10", "s11", "s2", "s3", "s4", "s5")
    assert groups[1].umbrella == "s6" and groups[1].absorbs == ("s7", "s8", "s9")
    assert average_groups(list(reversed(candidates)), list(reversed(links))) == groups


def _version(
    name: str, keywords: tuple[str, ...], manifest: tuple[ManifestEntry, ...] = ()
) -> PointedVersion:
    return PointedVersion(
        version_id=uuid.uuid4(),
        name=name,
        description=f"Descrição de {name}",
        body=f"Instruções de {name}.",
        matcher=SkillMatcher(any_keywords=keywords),
        manifest=manifest,
        content_sha256=None,
        created_by="agent",
        forked_from_version_id=None,
    )


def test_plan_moves_bodies_and_files_and_unions_keywords() -> None:
    ref = ManifestEntry("references/prazos.md", 10, "a" * 64, FileKind.REFERENCE)
    logo = ManifestEntry("assets/logo.png", 20, "b" * 64, FileKind.ASSET)
    umbrella = _version("troca-de-produto", ("troca", "trocar produto"))
    other = _version("politica-de-troca", ("Troca", "política de troca"), (ref, logo))
    plan = plan_umbrella(umbrella, [other])
    assert plan.skill.matcher.any_keywords == ("troca", "trocar produto", "política de troca")
    assert (
        "politica-de-troca" in plan.skill.body
        and "Instruções de troca-de-produto" in plan.skill.body
    )
    paths = [e.path for e in plan.manifest]
    assert paths == [
        "assets/politica-de-troca/logo.png",
        "references/politica-de-troca/SKILL.md",
        "references/politica-de-troca/prazos.md",
    ]
    [added] = plan.added
    assert b"Instru\xc3\xa7\xc3\xb5es de politica-de-troca." in added.data
    assert moved_path("x", ManifestEntry("templates/a.txt", 1, "c" * 64, FileKind.TEMPLATE)) == (
        "references/x/templates/a.txt"
    )


def test_a_merge_past_a_package_limit_is_refused() -> None:
    umbrella = _version("a", ("a",))
    others = [_version(f"b{i}", tuple(f"k{i}-{j}" for j in range(10))) for i in range(6)]
    with pytest.raises(TooLarge) as keywords:
        plan_umbrella(umbrella, others)
    assert keywords.value.rule == "keywords"
    with pytest.raises(TooLarge) as files:
        plan_umbrella(umbrella, others[:2], Limits(max_files=2))
    assert files.value.rule == "files"


def test_gates_in_order() -> None:
    t0 = datetime(2026, 11, 30, tzinfo=UTC)
    pressure = Pressure(index_budget_bytes=1000, min_skills=3)
    gate = dict(pressure=pressure, force=False, index_bytes=600, agent_skills=1)
    assert skip_reason("off", last_agent_change_at=t0, consolidated_at=None, **gate) == "off"  # type: ignore[arg-type]
    assert (
        skip_reason("review", last_agent_change_at=t0, consolidated_at=t0, **gate)  # type: ignore[arg-type]
        is SkipReason.WATERMARK
    )
    assert skip_reason("review", last_agent_change_at=t0, consolidated_at=None, **gate) is None  # type: ignore[arg-type]
    small = {**gate, "index_bytes": 500}
    assert (
        skip_reason("review", last_agent_change_at=t0, consolidated_at=None, **small)  # type: ignore[arg-type]
        is SkipReason.NO_PRESSURE
    )
    many = {**small, "agent_skills": 4}
    assert skip_reason("review", last_agent_change_at=t0, consolidated_at=None, **many) is None  # type: ignore[arg-type]
    forced = {**small, "force": True}
    assert skip_reason("review", last_agent_change_at=t0, consolidated_at=t0, **forced) is None  # type: ignore[arg-type]
