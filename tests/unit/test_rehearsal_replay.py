"""The rehearsal's pure core: its counts equal a naive replay (match_skills per burst per
set), intent models of catalog skills included, with far fewer bursts matched."""

from __future__ import annotations

import dataclasses
import random
import uuid

import pytest

from rehearsal.replay import (
    MAX_GAINED_SAMPLES,
    SAMPLE_TEXT_CHARS,
    Burst,
    Outcome,
    rehearse,
)
from skillet_data import CATALOG_DIR
from skills.catalog_seed import load_catalog_package
from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import match_skills
from turn.skill_index import render_skill_index


def _skill(name: str, keywords: list[str], probes: list[str] | None = None) -> LoadedSkill:
    return LoadedSkill(
        version_id=uuid.uuid4(),
        name=name,
        description=f"sobre {name}",
        body="corpo",
        matcher=SkillMatcher(keywords, probes or []),
    )


def _catalog(name: str) -> LoadedSkill:
    package = load_catalog_package(CATALOG_DIR / name)
    return LoadedSkill(
        version_id=uuid.uuid4(),
        name=package.name,
        description=package.description,
        body=package.body,
        matcher=package.matcher,
    )


def _naive(
    bursts: list[Burst], before: list[LoadedSkill], after: list[LoadedSkill], cap: int | None
) -> tuple[int, int, int, int]:
    gained = lost = moved = served = 0
    for burst in bursts:
        old = match_skills(before, burst.text, max_matched=cap)
        new = match_skills(after, burst.text, max_matched=cap)
        old_names = {s.name for s in old.matched}
        new_names = {s.name for s in new.matched}
        if not old_names and new_names:
            gained += 1
            served += bool(old.probes)
        elif old_names and not new_names:
            lost += 1
        elif old_names and old_names != new_names:
            moved += 1
    return gained, lost, moved, served


def _counts(outcome: Outcome) -> tuple[int, int, int, int]:
    return outcome.gained, outcome.lost, outcome.moved, outcome.probes_served


FRETE = _skill("frete", ["frete", "prazo de entrega"], ["entrega"])
PIX = _skill("pix", ["pix", "chave pix"])
TROCA = _skill("troca", ["troca", "devolucao"])
BURSTS = [
    Burst("m1", "qual o valor do frete?"),
    Burst("m2", "vocês aceitam pix?"),
    Burst("m3", "quero fazer uma troca"),
    Burst("m4", "quando chega a entrega?"),
    Burst("m5", "bom dia"),
    Burst("m6", "frete e troca, pode?"),
]


def test_a_new_skill_gains_what_matched_nothing_and_serves_a_probe() -> None:
    entrega = _skill("entrega", ["chega", "bom dia"])
    outcome = rehearse(BURSTS, [FRETE, PIX], [FRETE, PIX, entrega], max_matched=3)
    assert _counts(outcome) == (2, 0, 0, 1)  # m4 (only a probe before) and m5
    assert [s.message_id for s in outcome.gained_samples] == ["m4", "m5"]
    assert outcome.gained_samples[0].before == ()
    assert outcome.gained_samples[0].after == ("entrega",)
    assert outcome.messages == len(BURSTS)


def test_an_uninstall_loses_every_burst_only_it_matched() -> None:
    outcome = rehearse(BURSTS, [FRETE, PIX, TROCA], [FRETE, PIX], max_matched=3)
    assert _counts(outcome) == (0, 1, 1, 0)  # m3 lost, m6 moved (frete+troca -> frete)
    [lost] = outcome.lost_samples
    assert (lost.message_id, lost.before, lost.after) == ("m3", ("troca",), ())


def test_new_keywords_of_an_installed_skill_move_and_lose() -> None:
    changed = dataclasses.replace(FRETE, matcher=SkillMatcher(["troca"]))
    outcome = rehearse(BURSTS, [FRETE, PIX, TROCA], [changed, PIX, TROCA], max_matched=3)
    assert _counts(outcome) == _naive(BURSTS, [FRETE, PIX, TROCA], [changed, PIX, TROCA], 3)
    assert outcome.lost == 1  # m1


def test_the_per_turn_cap_decides_moved() -> None:
    # A new skill `zeta` also matches m1 and m6; with a cap of 1 the turn injects `frete`
    # (name order) either way, so nothing moved; without a cap both gained a skill.
    zeta = _skill("zeta", ["frete"])
    before, after = [FRETE, TROCA], [FRETE, TROCA, zeta]
    assert rehearse(BURSTS, before, after, max_matched=1).moved == 0
    assert rehearse(BURSTS, before, after, max_matched=None).moved == 2
    assert rehearse(BURSTS, before, after, max_matched=0).moved == 0  # nothing injected


def test_a_body_change_rehearses_nothing() -> None:
    edited = dataclasses.replace(PIX, body="outro corpo", description="outra")
    outcome = rehearse(BURSTS, [FRETE, PIX], [FRETE, edited], max_matched=3)
    assert _counts(outcome) == (0, 0, 0, 0)
    assert outcome.replayed == 0
    assert outcome.index_bytes_after == len(render_skill_index([FRETE, edited]).encode())
    assert outcome.index_bytes_before != outcome.index_bytes_after


def test_samples_are_cut_and_bounded() -> None:
    long = "pix " + "a" * 1000
    bursts = [Burst(f"m{i}", long) for i in range(30)]
    outcome = rehearse(bursts, [], [PIX], max_matched=3)
    assert outcome.gained == 30
    assert len(outcome.gained_samples) == MAX_GAINED_SAMPLES
    assert len(outcome.gained_samples[0].text) == SAMPLE_TEXT_CHARS


def test_a_burst_holding_the_separator_word_is_still_read_right() -> None:
    bursts = [Burst("a", "0skilletrehearsalsep0 pix"), Burst("b", "troca")]
    outcome = rehearse(bursts, [TROCA], [TROCA, PIX], max_matched=3)
    assert outcome.gained == 1


def test_a_catalog_skills_intent_model_counts() -> None:
    agenda, price = _catalog("agendamento"), _catalog("objecao-preco")
    # "faz 3x?" and "é muito pra mim" hold no keyword: only the intent model matches them.
    texts = ["faz 3x?", "é muito pra mim", "posso ir quinta à tarde?", "qual o endereço?"]
    bursts = [Burst(str(i), t) for i, t in enumerate(texts)]
    assert match_skills([price], texts[0]).by_intent == ["objecao-preco"]
    uninstalled = rehearse(bursts, [agenda, price, PIX], [agenda, PIX], max_matched=3)
    assert _counts(uninstalled) == (0, 2, 0, 0)
    # Its keywords edited: the model no longer applies, so what only it matched is lost.
    edited = dataclasses.replace(price, matcher=SkillMatcher(["desconto"]))
    assert rehearse(bursts, [agenda, price], [agenda, edited], max_matched=3).lost == 2
    # Installed as shipped: the model applies to the new skill too.
    installed = rehearse(bursts, [PIX], [PIX, price], max_matched=3)
    assert _counts(installed) == (2, 0, 0, 0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_equals_the_naive_replay_on_random_traffic(seed: int) -> None:
    rng = random.Random(seed)
    vocab = ["frete", "pix", "troca", "entrega", "prazo", "chave", "horario", "agendar",
             "desconto", "caro", "boleto", "cartao", "cartões", "amanhã", "sexta", "10h",
             "oi", "bom", "dia", "quanto", "custa", "marcar", "consulta", "vocês"]  # fmt: skip
    catalog = [_catalog("agendamento"), _catalog("objecao-preco")]
    before = [*catalog, *(_skill(f"s{i}", rng.sample(vocab, 2), rng.sample(vocab, 1))
                         for i in range(12))]  # fmt: skip
    after = list(before)
    after[0] = dataclasses.replace(after[0], matcher=SkillMatcher(["agendar"]))
    del after[3]
    after[5] = dataclasses.replace(after[5], matcher=SkillMatcher(rng.sample(vocab, 3)))
    after.append(_skill("nova", ["quanto custa", "boleto + sexta"]))
    bursts = [
        Burst(str(i), " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 8))))
        for i in range(300)
    ]
    for cap in (1, 3, None):
        assert _counts(rehearse(bursts, before, after, max_matched=cap)) == _naive(
            bursts, before, after, cap
        )


def test_only_bursts_a_changed_skill_can_match_are_replayed() -> None:
    bursts = [Burst(str(i), "bom dia, qual o frete?") for i in range(100)]
    bursts.append(Burst("x", "aceita pix?"))
    outcome = rehearse(bursts, [FRETE, PIX], [FRETE], max_matched=3)
    assert (outcome.lost, outcome.replayed) == (1, 1)


def test_a_long_text_is_normalized_like_a_short_one() -> None:
    # normalize_text drops marks in one regex pass above a size: the same words either way.
    from keywords.words import normalize_text

    rng = random.Random(7)
    alphabet = "aeiouçãõáéíóúâêô PIX Ação ñ ü ﬁ ² ẞ İ 😊\u0301\u0327\n"
    for size in (10, 5_000, 50_000):
        text = "".join(rng.choice(alphabet) for _ in range(size))
        per_char = "".join(normalize_text(text[i : i + 100]) for i in range(0, len(text), 100))
        assert normalize_text(text) == per_char


def test_each_bursts_words_are_its_own() -> None:
    # The words read together are each burst's words_of(matched_text(...)), no more: a
    # separator counted in a burst would change what an intent model reads.
    from rehearsal.replay import _words
    from turn.matcher import matched_text, words_of

    texts = ["faz 3x?", "", "Muitooo CARO!!", "x" * 9000 + " pix", "0skilletrehearsalsep0"]
    for chosen in (texts[:4], texts):
        bursts = [Burst(str(i), t) for i, t in enumerate(chosen)]
        flat, starts, ends = _words(bursts)
        got = [flat[s:e] for s, e in zip(starts, ends, strict=True)]
        assert got == [words_of(matched_text(t)) for t in chosen]


def test_intent_only_bursts_among_many_are_all_counted() -> None:
    price = _catalog("objecao-preco")
    texts = ["faz 3x?", "é muito pra mim", "bom dia", "ok"] * 50
    bursts = [Burst(str(i), t) for i, t in enumerate(texts)]
    outcome = rehearse(bursts, [price, PIX], [PIX], max_matched=3)
    assert _counts(outcome) == _naive(bursts, [price, PIX], [PIX], 3) == (0, 100, 0, 0)
