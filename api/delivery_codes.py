"""A reply's delivery as the API shows it: its status and, when it failed, Meta's error code.

The code is read back from the stored reason (pure): a failed receipt keeps
`131026 Message undeliverable: ...` (webhook.cloud_api), a refused send keeps
`<our code>: HTTP 400, Graph error 131047: ...` (channels.cloud_api). WAHA's acks carry no
code: None.
"""

from __future__ import annotations

import re
from typing import Any

# Meta's codes are integers of a few digits; anything longer is not one.
_CODE = re.compile(r"(?:^|Graph error )(\d{1,9})\b")


def meta_error_code(error: str | None) -> int | None:
    """Meta's error code in a stored delivery reason, None when it carries none."""
    if not error:
        return None
    found = _CODE.search(error[:200])
    return int(found.group(1)) if found else None


def delivery_json(status: str | None, error: str | None) -> dict[str, Any] | None:
    """`{"status", "error"}`, with `error_code` added when it failed (null: no code known)."""
    if status is None:
        return None
    shown: dict[str, Any] = {"status": status, "error": error}
    if status == "failed":
        shown["error_code"] = meta_error_code(error)
    return shown
