"""What an intent model reads of a message: the matcher's words, their pairs and character
grams, bounded whatever the text."""

from __future__ import annotations

import random
import string

from core.units import BYTES_PER_KIB
from turn.matcher.intent_features import MAX_FEATURES, MAX_SCORED_WORDS, intent_features


def test_spelling_variants_read_as_the_matcher_reads_them() -> None:
    assert intent_features("Tá CARÍSSIMO!!!") == intent_features("ta carissimo")
    assert intent_features("muitoooo caro") == intent_features("muito caro")
    assert intent_features("vc faz desconto?") == intent_features("você faz desconto")
    assert {"w:desconto", "b:faz_desconto", "c:des", "c: d", "c:o "} <= intent_features(
        "faz desconto"
    )


def test_a_typo_keeps_most_of_the_words_grams() -> None:
    right, typo = intent_features("desconto"), intent_features("descomto")
    grams = {f for f in right if f.startswith("c:")}
    assert len(grams & typo) >= len(grams) // 2
    assert "w:desconto" not in typo


def test_a_64_kib_text_yields_a_bounded_set_of_features() -> None:
    rng = random.Random(7)
    words = ("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(9999))
    text = " ".join(words)[: 64 * BYTES_PER_KIB]
    features = intent_features(text)
    assert len(features) <= MAX_FEATURES
    one_long_word = intent_features("a" + "b" * (64 * BYTES_PER_KIB))
    assert len(one_long_word) <= MAX_FEATURES


def test_words_past_the_scored_ones_are_not_read() -> None:
    head = "oi " * MAX_SCORED_WORDS
    assert "w:parcela" not in intent_features(head + "parcela")
    assert "w:parcela" in intent_features("oi " * (MAX_SCORED_WORDS - 1) + "parcela")


def test_no_words_no_features_but_the_edge_gram() -> None:
    assert intent_features("!!! 😬") == frozenset({"c:  "})
