"""The customer's WhatsApp profile name, as we keep and show it, and their number as people
read it (pure: no I/O).

A profile name is whatever the customer typed in their own WhatsApp settings: hostile input.
Kept as `profile_name` returns it:
- only a string is a name; at most MAX_READ_CHARS of it are read (a bounded cost, whatever
  the delivery holds);
- control characters (Unicode Cc), format characters (Cf: the bidi overrides and isolates
  that would flip the text around it on a page, zero-width marks) except the zero-width
  joiner emoji sequences need, lone surrogates and private-use characters are removed;
- every run of blanks becomes one space, the ends are trimmed;
- at most MAX_NAME_CHARS characters are kept; nothing left is no name (None).

`formatted_number` writes a contact id as a person reads it: Brazilian numbers as
`+55 11 97777-6666` (a landline `+55 11 3333-4444`), North America as `+1 415 555-0100`,
others as their country code and the rest in groups of three (`+351 912 345 678`); an
opaque linked id (`NNN@lid`) as it is.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

MAX_NAME_CHARS: Final = 256  # kept (the column's check says the same)
MAX_READ_CHARS: Final = 4 * MAX_NAME_CHARS  # read of what a delivery holds
MODEL_NAME_CHARS: Final = 80  # what the model is given of it
_ZERO_WIDTH_JOINER: Final = "\u200d"  # joins emoji sequences (👩‍💻): kept
_DROPPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_BLANKS = re.compile(r"\s+")


def profile_name(raw: object) -> str | None:
    """The name as kept (module docstring), or None when there is none."""
    if not isinstance(raw, str):
        return None
    kept = "".join(
        c
        for c in raw[:MAX_READ_CHARS]
        if c == _ZERO_WIDTH_JOINER or unicodedata.category(c) not in _DROPPED_CATEGORIES
    )
    name = _BLANKS.sub(" ", kept).strip()[:MAX_NAME_CHARS].strip()
    return name or None


def formatted_number(contact_id: str) -> str:
    """`5511977776666` -> `+55 11 97777-6666`; a linked id (`123@lid`) or anything not all
    digits as it is."""
    if not contact_id.isascii() or not contact_id.isdigit():
        return contact_id
    if contact_id.startswith("55") and len(contact_id) in (12, 13):
        area, local = contact_id[2:4], contact_id[4:]
        return f"+55 {area} {local[:-4]}-{local[-4:]}"
    if contact_id.startswith("1") and len(contact_id) == 11:  # the US, Canada: +1 NXX NXX-XXXX
        return f"+1 {contact_id[1:4]} {contact_id[4:7]}-{contact_id[7:]}"
    # Elsewhere: the country code by the ITU's plan, the rest in groups of three from its end.
    code = _country_code(contact_id)
    rest = contact_id[len(code) :]
    groups = [rest[max(0, end - 3) : end] for end in range(len(rest), 0, -3)]
    return " ".join([f"+{code}", *reversed(groups)])


# Country codes of one or two digits (E.164); every other code has three.
_SHORT_CODES: Final = frozenset(
    {"1", "7", "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44"}
    | {"45", "46", "47", "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60"}
    | {"61", "62", "63", "64", "65", "66", "81", "82", "84", "86", "90", "91", "92", "93"}
    | {"94", "95", "98"}
)


def _country_code(digits: str) -> str:
    for size in (1, 2):
        if digits[:size] in _SHORT_CODES:
            return digits[:size]
    return digits[:3]


def contact_label(contact_id: str, contact_name: str | None) -> str:
    """How a page names a customer: `Ana Souza · +55 11 97777-6666`, or the number alone."""
    number = formatted_number(contact_id)
    return f"{contact_name} · {number}" if contact_name else number


def name_for_model(contact_name: str | None) -> str | None:
    """The name as the model may read it: cut to MODEL_NAME_CHARS, quotes and brackets
    removed so it cannot close the line it is given on."""
    if not contact_name:
        return None
    cleaned = re.sub(r"[\[\]\"<>{}]", "", contact_name)[:MODEL_NAME_CHARS].strip()
    return cleaned or None
