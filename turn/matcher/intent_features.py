"""What a catalog intent model reads of a message (pure): a bounded set of string features.

Features are the message's words as the keyword matcher reads them (``words_of``: normalized,
unstretched, abbreviations read), each pair of adjacent words, and the character 2-, 3- and
4-grams of those words joined by single spaces (with a space at each end, so a gram can mark a
word's start or end). Character grams make a typo or an unseen inflection still share most of
its features with the spelling a model learned ("desconto"/"descomto", "agendar"/"agendo").

Bounded whatever the text: only the first ``MAX_SCORED_WORDS`` words of the matched part
(keywords.words.matched_text) and the first ``MAX_SCORED_CHARS`` characters of their joined
form are read, so a text yields at most ``MAX_FEATURES`` features.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from keywords.words import matched_text, words_of

# A WhatsApp burst's intent shows in its first lines; the keyword matcher still reads 8 KiB.
MAX_SCORED_WORDS = 256
MAX_SCORED_CHARS = 2048
CHAR_GRAM_SIZES = (2, 3, 4)
# Words, adjacent pairs, and one gram per size at each position of the joined form.
MAX_FEATURES = 2 * MAX_SCORED_WORDS + len(CHAR_GRAM_SIZES) * (MAX_SCORED_CHARS + 2)

# Prefixes keep the three kinds apart: the word "ca" is not the gram "ca".
_WORD = "w:"
_PAIR = "b:"
_GRAM = "c:"


def intent_features(text: str) -> frozenset[str]:
    """The features of `text` an intent model scores (rules in the module docstring)."""
    return features_of_words(words_of(matched_text(text)))


def features_of_words(matched_words: Sequence[str]) -> frozenset[str]:
    """The same, from the matched part's words as the keyword matcher read them (a turn reads
    them once for both)."""
    words = matched_words[:MAX_SCORED_WORDS]
    found = {_WORD + w for w in words}
    found.update(f"{_PAIR}{a}_{b}" for a, b in pairwise(words))
    joined = f" {' '.join(words)[:MAX_SCORED_CHARS]} "
    for size in CHAR_GRAM_SIZES:
        found.update(_GRAM + joined[i : i + size] for i in range(len(joined) - size + 1))
    return frozenset(found)
