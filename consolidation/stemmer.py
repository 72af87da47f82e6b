"""A light Portuguese stemmer for the lexical backend, pure: one suffix off, then a vowel.

RSLP-like (Orengo & Huyck's suffix classes, much shortened): words arrive folded (lower
case, no accents), the longest matching suffix of the first list goes if at least
MIN_STEM_CHARS remain, then a final vowel the same way, so the inflections and derivations
models write for one idea meet: troca/trocar/trocas -> troc, parcelamento/parcelar/parcelas
-> parcel, entrega/entregar -> entreg. Not a linguist's stemmer: what it joins wrongly costs
a little similarity on both sides of a pair, which the IDF mostly absorbs; what it leaves
apart is no worse than plain words. Linear in the word's length (a fixed list of suffixes).
"""

from __future__ import annotations

MIN_STEM_CHARS = 4
# Folded suffixes, longest first: nouns (-mento, -idade, -cao/-coes), adjectives, verbs
# (infinitive, gerund, participle, imperfect), plurals.
_SUFFIX_TEXT = """
amentos imentos amento imento mentos mento idades idade icoes icao acoes acao coes cao
ancias ancia encias encia ismos ismo istas ista adores adoras ador adora avel ivel
ados adas idos idas ado ada ido ida ando endo indo aram eram iram avam ava ariam aria
ar er ir ais eis ois oes aes ns es as os is us s
"""
SUFFIXES = tuple(sorted(set(_SUFFIX_TEXT.split()), key=lambda s: (-len(s), s)))
VOWELS = "aeo"


def stem(word: str) -> str:
    """The stem of a folded word (see the module docstring); short words stay whole."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM_CHARS:
            word = word[: -len(suffix)]
            break
    if word[-1:] in VOWELS and len(word) - 1 >= MIN_STEM_CHARS:
        word = word[:-1]
    return word
