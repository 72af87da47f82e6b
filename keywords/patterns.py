"""How a keyword becomes phrases of word patterns (pure): plain words, stems (``agend*``),
any number (``#``), alternatives (``sexta|sabado``) and co-occurrence (``agend* + amanha``).

The rules are stated once, in the docstring of turn.matcher.match; this module implements the
keyword side of them, and the message-side lookup keys a pattern is found by.
"""

from __future__ import annotations

import re

from keywords.words import normalize_text, plural_forms, read_word, unstretched, words_of

# A phrase is a keyword as its word patterns, e.g. ("segunda", "via") or ("agend*",).
Phrase = tuple[str, ...]
# A keyword as its sides: one phrase, or two that must both occur (``a + b``); () never matches.
Sides = tuple[Phrase, ...]

STEM_MARK = "*"
NUMBER = "#"
ALTERNATIVES_MARK = "|"
# A stem has 3 to 16 letters before its "*": shorter ones would match most words ("ca*"),
# and the cap bounds the prefixes a message word is looked up by (at most 14 lengths).
MIN_STEM_CHARS = 3
MAX_STEM_CHARS = 16

# A run of word characters and pattern marks; a run that is not a valid pattern is read as
# plain words, as keywords always were ("c#" is "c", "a*b" is "a b", "ab*" is "ab").
_CHUNK_RE = re.compile(r"[\w*#|]+")
_ALTERNATIVE_RE = re.compile(r"\w+\*?|#")
# A "+" standing alone between spaces (or at an end) joins two sides; "c++" and "1+1" stay
# plain words, as they always were.
_COOCCURRENCE_RE = re.compile(r"(?<!\S)\+(?!\S)")


def _alternative(text: str) -> str | None:
    """One alternative as it is stored: a read word, a stem with its mark, or the number."""
    if not _ALTERNATIVE_RE.fullmatch(text):
        return None
    if text == NUMBER:
        return NUMBER
    if text.endswith(STEM_MARK):
        stem = unstretched(text[:-1])  # a stem is not an abbreviation: "vc*" stays "vc"
        if not MIN_STEM_CHARS <= len(stem) <= MAX_STEM_CHARS:
            return None
        return stem + STEM_MARK
    return read_word(text)


def _pattern(chunk: str) -> str | None:
    """A chunk as one word pattern (alternatives sorted and deduplicated), or None."""
    alternatives = [_alternative(part) for part in chunk.split(ALTERNATIVES_MARK)]
    if any(a is None for a in alternatives):
        return None
    return ALTERNATIVES_MARK.join(sorted({a for a in alternatives if a is not None}))


def keyword_phrase(keyword: str) -> Phrase:
    """The word patterns of a keyword, in order (rules in turn.matcher.match's docstring)."""
    patterns: list[str] = []
    for chunk in _CHUNK_RE.findall(normalize_text(keyword)):
        pattern = _pattern(chunk)
        if pattern is None:
            patterns.extend(words_of(chunk))
        else:
            patterns.append(pattern)
    return tuple(patterns)


def keyword_sides(keyword: str) -> Sides:
    """A keyword's phrases: ``(phrase,)``, or both sides of ``a + b``; ``()`` when it can
    never match (no words, a blank side, or more than one ``+``)."""
    if keyword_form_error(keyword) is not None:
        return ()
    sides = tuple(keyword_phrase(side) for side in _COOCCURRENCE_RE.split(keyword))
    return sides if all(sides) else ()


def keyword_form_error(keyword: str) -> str | None:
    """Why a package must refuse this keyword's co-occurrence form (pt-BR), or None."""
    parts = _COOCCURRENCE_RE.split(keyword)
    if len(parts) == 1:
        return None
    if len(parts) > 2:  # two sides at most: a + b
        return f"a palavra-chave {keyword!r} tem mais de um ' + ': use um só (a + b)."
    if not all(part.strip() for part in parts):
        return f"a palavra-chave {keyword!r} precisa de palavras dos dois lados do ' + ' (a + b)."
    return None


def alternatives_of(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.split(ALTERNATIVES_MARK))


def is_special(alternative: str) -> bool:
    """A stem or the number: found through `special_keys`, never through plurals."""
    return alternative == NUMBER or alternative.endswith(STEM_MARK)


def matched_forms(alternative: str) -> tuple[str, ...]:
    """The keys a message word is looked up by that find this alternative: a plain word and
    its plurals, or the stem / number key as it is."""
    if is_special(alternative):
        return (alternative,)
    return (alternative, *plural_forms(alternative))


def special_keys(word: str, stem_lengths: tuple[int, ...], numbers: bool) -> list[str]:
    """The stem and number keys a message word stands for, given the stem lengths in use."""
    keys = [word[:n] + STEM_MARK for n in stem_lengths if n <= len(word)]
    if numbers and word[:1].isdigit():
        keys.append(NUMBER)
    return keys
