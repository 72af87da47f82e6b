"""The catalog's keywords on the labelled WhatsApp corpus (tests/data/matcher_corpus.jsonl):
recall and false hits per skill on the held-out `measure` part. A quality assertion on
fixed data, not a timing one; bench/catalog_recall.py prints the same numbers."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.matcher_corpus import CORPUS_PATH, catalog_skills, load_corpus, score


def test_the_corpus_has_100_messages_per_skill_200_for_none_and_two_halves() -> None:
    every = load_corpus("tune") + load_corpus("measure")
    assert len(CORPUS_PATH.read_text(encoding="utf-8").splitlines()) == len(every)
    per_label = Counter(m.skill for m in every)
    assert per_label["objecao-preco"] >= 100 and per_label["agendamento"] >= 100
    assert per_label[None] >= 200
    assert set(per_label) == {"objecao-preco", "agendamento", None}
    assert len({m.text for m in every}) == len(every)  # no message twice
    for label in per_label:
        measured = sum(m.skill == label and m.split == "measure" for m in every)
        assert 0.4 <= measured / per_label[label] <= 0.6, label


def test_the_catalog_keeps_its_measured_recall_and_false_hits() -> None:
    for s in score(catalog_skills(), load_corpus("measure")):
        assert s.keeps_measured, (s.name, s.recall, s.false_hit_rate)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "keywords reach recall 0.88 (agendamento, 1.9% false hits: its broad words (weekdays, "
        "months, atras*, confirm*, medic*) count only beside an intent or time word, a + b) "
        "and 0.84 (objecao-preco, 1.9%) on the held-out part"
    ),
)
def test_the_catalog_meets_the_recall_and_false_hit_targets() -> None:
    for s in score(catalog_skills(), load_corpus("measure")):
        assert s.meets_targets, (s.name, s.recall, s.false_hit_rate)
