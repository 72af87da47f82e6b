"""A light Portuguese stemmer, pure: one suffix off, then a final vowel.

RSLP-like (Orengo & Huyck's suffix classes, much shortened): a word arrives folded (lower
case, no accents); the longest suffix of the list that leaves at least `min_stem_chars` goes,
then a final a/e/o the same way. Each user states its own list and floor (consolidation's
lexical backend, Sugestões' question grouping), tuned on its own corpus. Linear in the
word's length (a fixed list of suffixes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

VOWELS = "aeo"


def suffix_list(text: str) -> tuple[str, ...]:
    """Whitespace-separated suffixes, longest first (ties alphabetical)."""
    return tuple(sorted(set(text.split()), key=lambda s: (-len(s), s)))


def make_stemmer(min_stem_chars: int, suffixes: Iterable[str]) -> Callable[[str], str]:
    """`stem(word)` under this floor and these suffixes (longest first)."""
    ordered = tuple(suffixes)

    def stem(word: str) -> str:
        for suffix in ordered:
            if word.endswith(suffix) and len(word) - len(suffix) >= min_stem_chars:
                word = word[: -len(suffix)]
                break
        if word[-1:] in VOWELS and len(word) - 1 >= min_stem_chars:
            word = word[:-1]
        return word

    return stem
