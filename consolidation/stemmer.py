"""The lexical backend's stemmer (keywords.stemmer with this floor and these suffixes).

RSLP-like (Orengo & Huyck's suffix classes, much shortened): words arrive folded (lower
case, no accents), the longest matching suffix of the first list goes if at least
MIN_STEM_CHARS remain, then a final vowel the same way, so the inflections and derivations
models write for one idea meet: troca/trocar/trocas -> troc, parcelamento/parcelar/parcelas
-> parcel, entrega/entregar -> entreg. Not a linguist's stemmer: what it joins wrongly costs
a little similarity on both sides of a pair, which the IDF mostly absorbs; what it leaves
apart is no worse than plain words. Linear in the word's length (a fixed list of suffixes).
"""

from __future__ import annotations

from keywords.stemmer import make_stemmer, suffix_list

MIN_STEM_CHARS = 4
# Folded suffixes, longest first: nouns (-mento, -idade, -cao/-coes), adjectives, verbs
# (infinitive, gerund, participle, imperfect), plurals.
_SUFFIX_TEXT = """
amentos imentos amento imento mentos mento idades idade icoes icao acoes acao coes cao
ancias ancia encias encia ismos ismo istas ista adores adoras ador adora avel ivel
ados adas idos idas ado ada ido ida ando endo indo aram eram iram avam ava ariam aria
ar er ir ais eis ois oes aes ns es as os is us s
"""
SUFFIXES = suffix_list(_SUFFIX_TEXT)
stem = make_stemmer(MIN_STEM_CHARS, SUFFIXES)
