"""The conversations' search text as patterns Postgres matches (pure: no I/O).

What a person types is found as typed, anywhere in a name or a customer's message, whatever
the case and the accents: the text is folded (case, accents: `João` -> `joao`) and becomes a
case-insensitive regular expression (`~*`) in which every other character is literal (`%`,
`_`, `.`, `*` are themselves) and each vowel, `c`, `n` and `y` is the class of its accented
forms, both cases (`a` -> `[aáàâãäåAÁÀÂÃÄÅ]`). No character of the text is ever an operator,
so the expression is a fixed string with classes: matched in time linear in the text read.
(Folding each row in SQL instead costs about 100 times more: translate() walks multibyte
text character by character.)

A text of digits and a phone's punctuation only (`11 97777-6666`, `+55 (11) 9777`) also
matches the contact's number by its digits (a LIKE pattern of digits).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

MIN_CHARS: Final = 2
MAX_CHARS: Final = 100
_PHONE_TEXT = re.compile(r"^[0-9 +().-]+$")
_NOT_DIGITS = re.compile(r"[^0-9]")
# Each base letter and the accented forms Portuguese and Spanish write it with.
_ACCENTED: Final = {
    "a": "aáàâãäåAÁÀÂÃÄÅ",
    "e": "eéèêëEÉÈÊË",
    "i": "iíìîïIÍÌÎÏ",
    "o": "oóòôõöOÓÒÔÕÖ",
    "u": "uúùûüUÚÙÛÜ",
    "c": "cçCÇ",
    "n": "nñNÑ",
    "y": "yýÿYÝŸ",
}


@dataclass(frozen=True)
class SearchPatterns:
    regex: str  # over names and messages, for `~*`
    number: str | None  # a LIKE pattern over contact ids (digits), None: the text is no number


def fold(text: str) -> str:
    """Lower case, without accents (`Ação` -> `acao`)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def literal_regex(text: str) -> str:
    """`text` folded, as a regular expression that matches it literally, each accentable
    letter as the class of its forms."""
    out: list[str] = []
    for char in fold(text):
        if char in _ACCENTED:
            out.append(f"[{_ACCENTED[char]}]")
        elif char.isalnum():
            out.append(char)  # a letter or digit, of any script: itself, never an operator
        else:
            out.append("\\" + char)  # any other character after a backslash is itself
    return "".join(out)


def search_patterns(text: str) -> SearchPatterns:
    """The patterns of an already checked search text (MIN_CHARS to MAX_CHARS, trimmed)."""
    digits = _NOT_DIGITS.sub("", text) if _PHONE_TEXT.match(text) else ""
    return SearchPatterns(
        regex=literal_regex(text),
        number=f"%{digits}%" if len(digits) >= MIN_CHARS else None,
    )
