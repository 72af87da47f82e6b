"""Text Postgres can store: no U+0000 and no lone UTF-16 surrogate (U+D800-U+DFFF). Pure.

Postgres `text` and `jsonb` refuse U+0000, and UTF-8 cannot encode a lone surrogate, which
JSON's `"\\ud800"` and YAML's `"\\ud800"` escapes and Python's `str` all allow; either fails
its statement in the driver. The edges that take text from outside (api.text for the admin
API, skills.package.skill_md for a SKILL.md) refuse it with these before anything is written.
"""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def storable(text: str) -> str:
    """`text` with each character Postgres cannot store as U+FFFD (for traces of refusals)."""
    return _UNSTORABLE.sub("\ufffd", text)


def what_unstorable(text: str) -> str:
    """Names, in pt-BR, the character of `text` that cannot be stored."""
    if "\x00" in text:
        return "o caractere nulo (U+0000)"
    return "um substituto UTF-16 isolado (U+D800 a U+DFFF, como \\ud800)"


def first_unstorable(document: Any) -> tuple[str, str] | None:
    """(where, the text) of the first string of a parsed JSON or YAML document, key or value,
    that cannot be stored; `where` is dotted (`metadata.autor`, `itens.0`), "" for the root.
    Walked without recursion: the depth is the sender's choice."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if unstorable(value):
                return where, value
        elif isinstance(value, dict):
            for key, item in value.items():
                at = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and unstorable(key):
                    return at, key
                stack.append((at, item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}" if where else str(i), v) for i, v in enumerate(value))
    return None
