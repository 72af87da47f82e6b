"""A file name a customer sent -> one safe to put in an object key, a prompt or a page (pure).

Kept: ASCII letters, digits, `.`, `-` and `_` of the name's last path segment, accents
folded (NFKD, marks dropped: "orçamento.pdf" -> "orcamento.pdf"); every other run of
characters becomes one `_`; no leading dot (no hidden or `..` names); at most MAX_CHARS,
the extension kept. Nothing left: None (the caller names the file by its type).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

MAX_CHARS: Final = 80
MAX_INPUT_CHARS: Final = 1_024  # what is looked at of a hostile name: bounded work
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_EXTENSION_CHARS: Final = 10


def safe_file_name(name: object) -> str | None:
    if not isinstance(name, str):
        return None
    last = re.split(r"[/\\]", name[-MAX_INPUT_CHARS:])[-1]  # its end: the extension
    folded = unicodedata.normalize("NFKD", last).encode("ascii", "ignore").decode("ascii")
    cleaned = _UNSAFE.sub("_", folded).strip("._-")
    if not cleaned:
        return None
    if len(cleaned) <= MAX_CHARS:
        return cleaned
    stem, dot, extension = cleaned.rpartition(".")
    if dot and stem and len(extension) <= _MAX_EXTENSION_CHARS:
        return f"{stem[: MAX_CHARS - len(extension) - 1]}.{extension}"
    return cleaned[:MAX_CHARS]
