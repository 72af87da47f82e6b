"""The similarity package's pure rules: what of a skill or a question is embedded (bounded),
checking a backend's answer, scores after the background, the nearest pairs, the choice."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from consolidation.contrast import contrasting_pairs
from consolidation.lines import LINES, Lines
from consolidation.measure import grouping_scores, lexical_matrix, link_pairs
from consolidation.similarity import DEFAULT_THRESHOLD, GROUP_THRESHOLD, SkillText
from similarity.backend import BACKENDS, EMBEDDED, EMBEDDINGS, LEXICAL
from similarity.background import background_for
from similarity.choice import SimilarityConfig, backend_name
from similarity.remote import parse_vectors
from similarity.scoring import local_scaled, nearest_pairs, score_matrix
from similarity.vectors import (
    QUESTION_CHARS,
    SKILL_BODY_CHARS,
    SKILL_TEXT_CHARS,
    checked,
    question_text,
    skill_text,
)


def test_what_is_embedded_is_bounded_whatever_the_skill() -> None:
    text = skill_text("troca-de-produto", "Troca " * 10_000, "corpo " * 100_000)
    assert len(text) <= SKILL_TEXT_CHARS
    assert text.startswith("troca de produto: Troca")
    short = skill_text("pix", "Pagamento", "linha um\n\nlinha   dois " + "x" * 1_000)
    assert short.split("\n", 1)[1].startswith("linha um linha dois")
    assert len(short.split("\n", 1)[1]) == SKILL_BODY_CHARS
    assert len(question_text("oi " * 10_000)) == QUESTION_CHARS
    assert question_text("  quero   trocar\n o tênis ") == "quero trocar o tênis"


def test_an_answer_must_be_one_finite_vector_per_text_of_one_dimension() -> None:
    [unit] = checked([[3.0, 4.0]], 1)
    assert unit == pytest.approx([0.6, 0.8])
    for bad, expected in (
        ([[1.0, math.nan]], 1),
        ([[1.0, math.inf]], 1),
        ([[1.0, 0.0]], 2),
        ([[1.0, 0.0], [1.0]], 2),
        ([[0.0, 0.0]], 1),
        ([[]], 1),
    ):
        with pytest.raises(ValueError):
            checked(bad, expected)


def test_the_openai_answer_is_read_strictly() -> None:
    answer = {"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [1, 0]}]}
    assert parse_vectors(answer, 2) == [[1.0, 0.0], [0.0, 1.0]]
    for bad in (
        {"data": [{"index": 0, "embedding": [True, 1]}]},
        {"data": [{"index": 3, "embedding": [1, 0]}]},
        {"data": [{"index": 0, "embedding": [1] * 9_000}]},
        {"data": [{"index": 0, "embedding": "AAAA"}]},
        {"error": "nope"},
        [],
    ):
        with pytest.raises(ValueError):
            parse_vectors(bad, 1)


def test_scores_after_the_background_and_each_skills_nearest() -> None:
    vectors = [[1.0, 0.1, 0.0], [1.0, 0.0, 0.1], [1.0, -0.1, 0.0]]
    plain = score_matrix(vectors, vectors, None)
    assert plain[0, 1] > 0.98  # alike once normalised: what they share dominates
    centered = score_matrix(vectors, vectors, [1.0, 0.0, 0.0])
    assert centered[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert centered[0, 2] == pytest.approx(-1.0)
    assert score_matrix([], vectors, None).shape == (0, 3)
    # Five alike skills: each keeps its nearest, so no more than n * nearest pairs.
    scores = np.full((6, 6), 0.9)
    np.fill_diagonal(scores, 1.0)
    assert len(nearest_pairs(scores, 0.5, nearest=1)) <= 6
    assert nearest_pairs(scores, 0.95) == []
    assert nearest_pairs(np.ones((1, 1)), 0.0) == []


def test_the_shipped_background_belongs_to_its_model_only() -> None:
    assert background_for("enpt@0.0.0-other") is None
    assert background_for("../../etc/passwd@1") is None
    assert background_for("text-embedding-3-small") is None


def test_auto_prefers_the_configured_server_then_the_package_then_lexical() -> None:
    assert backend_name(SimilarityConfig(embeddings_base_url="http://x")) == EMBEDDINGS
    assert backend_name(SimilarityConfig(backend=LEXICAL, embeddings_base_url="x")) == LEXICAL
    assert backend_name(SimilarityConfig()) in {EMBEDDED, LEXICAL}
    for name in BACKENDS:
        lines = LINES[name]
        assert lines.link <= lines.group < lines.same


def test_a_skills_keywords_are_embedded_after_its_description() -> None:
    text = skill_text("troca-geladeira", "Troca", "corpo", ("troca geladeira", "geladeira"))
    assert text.splitlines()[:2] == ["troca geladeira: Troca", "troca geladeira, geladeira"]
    assert skill_text("x", "d", "b", ("k",) * 10_000).count("k") <= 16


def test_one_action_on_two_objects_contrasts_and_paraphrases_do_not() -> None:
    skills = [
        SkillText("troca-geladeira", "Troca de geladeira", "Troque a geladeira em 7 dias."),
        SkillText("troca-fogao", "Troca de fogão", "Troque o fogão em 7 dias."),
        SkillText("troca-tenis", "Troca de tênis", "Troque o tênis em 7 dias."),
        SkillText("geladeira-substituicao", "Substituir a geladeira", "A geladeira é trocada."),
        SkillText("devolucao-item-avariado", "Item avariado", "Substituímos o que veio quebrado."),
    ]
    found = {frozenset((skills[i].name, skills[j].name)) for i, j in contrasting_pairs(skills)}
    assert frozenset(("troca-geladeira", "troca-fogao")) in found
    assert frozenset(("troca-fogao", "troca-tenis")) in found
    # The same object in other words, or a name in other words entirely: never.
    assert frozenset(("troca-geladeira", "geladeira-substituicao")) not in found
    assert not any("devolucao-item-avariado" in pair for pair in found)


def test_local_scaling_takes_out_what_each_skill_shares_with_its_usual_neighbours() -> None:
    # Skills 0-2 are all alike (a dense corner), 3-4 a pair in a sparse one.
    scores = np.array(
        [
            [1.0, 0.6, 0.6, 0.1, 0.1],
            [0.6, 1.0, 0.6, 0.1, 0.1],
            [0.6, 0.6, 1.0, 0.1, 0.1],
            [0.1, 0.1, 0.1, 1.0, 0.4],
            [0.1, 0.1, 0.1, 0.4, 1.0],
        ]
    )
    scaled = local_scaled(scores, 2)
    assert scaled[3, 4] > scaled[0, 1]  # the pair that stands out of its neighbourhood
    assert np.allclose(scaled, scaled.T)
    assert local_scaled(np.ones((1, 1)), 10).shape == (1, 1)


def test_a_pair_the_lexical_rules_link_is_linked_whatever_its_rank_unless_vetoed() -> None:
    # Two paraphrases whose vectors are far apart beside four skills close to the first: local
    # scaling alone leaves the pair under the line and outside the first's 4 nearest.
    skills = [
        SkillText("frete-gratis", "Frete grátis acima de 200", "Acima de R$ 200 o frete é grátis."),
        SkillText("frete-gratis-regras", "Frete grátis: quando", "O frete sai grátis acima de 200"),
        SkillText("horario-loja", "Horário da loja", "Abrimos às 9h."),
        SkillText("pix", "Pagamento por Pix", "Passe a chave."),
        SkillText("cupom", "Cupom de desconto", "Aplique o código."),
        SkillText("garantia", "Garantia do produto", "Um ano de cobertura."),
    ]
    axes = np.eye(6)
    vectors = [axes[0], 0.3 * axes[0] + 0.954 * axes[1]]
    vectors += [0.7 * axes[0] + 0.714 * axes[k] for k in (2, 3, 4, 5)]
    lexical = lexical_matrix(skills)
    assert lexical[0, 1] >= DEFAULT_THRESHOLD
    assert LINES[EMBEDDED].with_lexical_links
    # Lines of their own (the shipped ones move with calibration): words add nothing to the
    # cosine here, so only the lexical links can join the pair.
    with_lexical = Lines(
        link=0.08, group=0.08, same=0.45, local_k=10, cosine_floor=0.2, with_lexical_links=True
    )
    without = dataclasses.replace(with_lexical, with_lexical_links=False)

    plain = grouping_scores(skills, vectors, without, None, lexical)
    assert plain[0, 1] < without.link
    assert (0, 1) not in link_pairs(plain, lexical, without)
    raised = grouping_scores(skills, vectors, with_lexical, None, lexical)
    assert raised[0, 1] == pytest.approx(lexical[0, 1] - GROUP_THRESHOLD + with_lexical.group)
    assert (0, 1) in link_pairs(raised, lexical, with_lexical)

    # Under the cosine floor the pair stays apart, whatever the words share.
    vectors[1] = 0.1 * axes[0] + 0.995 * axes[1]
    assert grouping_scores(skills, vectors, with_lexical, None, lexical)[0, 1] == -1.0
