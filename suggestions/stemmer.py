"""A light Portuguese stemmer for customers' questions, pure: one suffix off, then a vowel.

Like consolidation.stemmer (RSLP-like suffix classes, much shortened), but a stem may be as
short as MIN_STEM_CHARS = 3 letters: questions are short and their key words too, and
"pagar"/"pagamento"/"paga" must meet ("pag"), as must "aceita"/"aceitam" ("aceit") and
"entrega"/"entregam" ("entreg"). Words arrive folded (lower case, no accents). Linear in the
word's length (a fixed list of suffixes).
"""

from __future__ import annotations

MIN_STEM_CHARS = 3
_SUFFIX_TEXT = """
amentos imentos amento imento mentos mento idades idade icoes icao acoes acao coes cao
ancias ancia encias encia adores adoras ador adora aveis iveis avel ivel
ados adas idos idas ado ada ido ida ando endo indo aram eram iram avam ava ariam aria
amos emos imos ar er ir am em ais eis ois oes aes ns es as os is us s
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
