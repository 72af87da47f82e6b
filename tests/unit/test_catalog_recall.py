"""The catalog's keywords on the labelled WhatsApp corpus (tests/data/matcher_corpus.jsonl):
recall and false hits per skill on the held-out `measure` part. A quality assertion on
fixed data, not a timing one; bench/catalog_recall.py prints the same numbers."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.matcher_corpus import CORPUS_PATH, SPLITS, catalog_skills, load_corpus, score


def test_the_measured_part_has_100_messages_per_skill_and_200_for_none() -> None:
    every = load_corpus("tune") + load_corpus("measure")
    assert len(CORPUS_PATH.read_text(encoding="utf-8").splitlines()) == len(every)
    assert {m.skill for m in every} == {"objecao-preco", "agendamento", None}
    assert len({m.text for m in every}) == len(every)  # no message twice
    # The tune part grows as keywords are retuned (written before each retune, never copied
    # from the measured part); the held-out part keeps enough messages per label to measure.
    for split in SPLITS:
        per_label = Counter(m.skill for m in every if m.split == split)
        assert per_label["objecao-preco"] >= 100 and per_label["agendamento"] >= 100, split
        assert per_label[None] >= 200, split


def test_the_catalog_keeps_its_measured_recall_and_false_hits() -> None:
    for s in score(catalog_skills(), load_corpus("measure")):
        assert s.keeps_measured, (s.name, s.recall, s.false_hit_rate)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "keywords reach recall 0.87 (agendamento, 1.2% false hits) and 0.85 (objecao-preco, "
        "0.3%) on the held-out part, while the 1,684 tune messages score 0.94 / 1.6% and "
        "0.92 / 1.1%: the tune part still does not cover how the held-out messages are worded"
    ),
)
def test_the_catalog_meets_the_recall_and_false_hit_targets() -> None:
    for s in score(catalog_skills(), load_corpus("measure")):
        assert s.meets_targets, (s.name, s.recall, s.false_hit_rate)
