"""JSON job (de)serialization for arq: pickle would let anyone with Redis access run code.

A job whose bytes are not a JSON job (written by something else, or corrupted) must not
vanish as an arq-only failure: `loads` turns it into a call of `undecodable_job`, which
dead-letters what it can show of the bytes.
"""

from __future__ import annotations

import json
import time
from typing import Any

UNDECODABLE_JOB = "undecodable_job"
# What of an undecodable job is kept in its dead letter.
MAX_KEPT_CHARS = 2_000


def dumps(obj: Any) -> bytes:
    # default=str: arq stores exceptions as results; they become their text, not a crash.
    return json.dumps(obj, default=str, separators=(",", ":")).encode("utf-8")


def loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:  # not JSON, or not UTF-8 (a pickle, say): never unpickled
        return _undecodable(data)


def _undecodable(data: bytes) -> dict[str, Any]:
    """An arq job dict that runs `undecodable_job` with the bytes' text."""
    kept = data[: MAX_KEPT_CHARS * 4].decode("utf-8", errors="replace")[:MAX_KEPT_CHARS]
    return {"f": UNDECODABLE_JOB, "a": [kept], "k": {}, "t": 1, "et": int(time.time() * 1000)}
