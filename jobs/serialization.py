"""JSON job (de)serialization for arq: pickle would let anyone with Redis access run code."""

from __future__ import annotations

import json
from typing import Any


def dumps(obj: Any) -> bytes:
    # default=str: arq stores exceptions as results; they become their text, not a crash.
    return json.dumps(obj, default=str, separators=(",", ":")).encode("utf-8")


def loads(data: bytes) -> Any:
    return json.loads(data)
