"""Splitting a reply into parts a WhatsApp API accepts (pure: no I/O)."""

from __future__ import annotations

# Cut at the last of these that lies in the second half of a part; else mid-word.
_BOUNDARIES = ("\n\n", "\n", " ")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: what a JavaScript/Graph API `length` counts (an emoji = 2)."""
    return len(text.encode("utf-16-le")) // 2


def split_text(text: str, max_units: int) -> list[str]:
    """Parts of at most `max_units` UTF-16 code units, in order, cut at a paragraph, line or
    word boundary when possible; the whitespace at each cut is dropped. Empty text -> []."""
    if max_units < 2:
        raise ValueError("max_units must be at least 2")
    parts: list[str] = []
    rest = text.strip()
    while utf16_len(rest) > max_units:
        cut = _longest_prefix(rest, max_units)
        cut = _boundary_before(rest, cut)
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return parts


def _longest_prefix(text: str, max_units: int) -> int:
    """The largest n with utf16_len(text[:n]) <= max_units."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1  # outside the BMP: a surrogate pair
        if units > max_units:
            return index
    return len(text)


def _boundary_before(text: str, cut: int) -> int:
    for separator in _BOUNDARIES:
        index = text.rfind(separator, 0, cut)
        if index >= cut // 2 and text[:index].strip():
            return index
    return cut
