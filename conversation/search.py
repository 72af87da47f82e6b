"""The conversations' search text as LIKE patterns (pure: no I/O).

What a person types is matched as typed, anywhere in a name or a customer's message: `%`,
`_` and `\\` are escaped (taken literally), and the database folds case and accents of both
sides alike (skillet_search_fold). A text of digits and a phone's punctuation only
(`11 97777-6666`, `+55 (11) 9777`) also matches the contact's number by its digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

MIN_CHARS: Final = 2
MAX_CHARS: Final = 100
_PHONE_TEXT = re.compile(r"^[0-9 +().-]+$")
_NOT_DIGITS = re.compile(r"[^0-9]")


@dataclass(frozen=True)
class SearchPatterns:
    text: str  # over names and messages, escaped with backslash
    number: str | None  # over contact ids (digits only), None: the text is no number


def like_literal(text: str) -> str:
    """`text` for a LIKE ... ESCAPE '\\' pattern, every character taken as itself."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search_patterns(text: str) -> SearchPatterns:
    """The patterns of an already checked search text (MIN_CHARS to MAX_CHARS, trimmed)."""
    digits = _NOT_DIGITS.sub("", text) if _PHONE_TEXT.match(text) else ""
    return SearchPatterns(
        text=f"%{like_literal(text)}%",
        number=f"%{digits}%" if len(digits) >= MIN_CHARS else None,
    )
