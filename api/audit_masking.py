"""What of an audit row a non-admin reads: URLs cut to their origin.

A webhook URL often carries its secret in the path or query (`/hooks/<token>`), and only an
admin may read the events settings; the audit log is readable by every role. So for a viewer
or an editor every URL in an entry's detail keeps its scheme and host and loses the rest.
Pure.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

MASKED_REST = "/…"


def masked_url(text: str) -> str:
    """`https://host:port/…` for a URL with anything after its origin; other text as it is."""
    if not text.startswith(("http://", "https://")):
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return "…"  # unparseable: show nothing of it
    origin = f"{parts.scheme}://{parts.hostname or ''}"
    if parts.port is not None:
        origin += f":{parts.port}"
    rest = text[len(parts.scheme) + 3 + len(parts.netloc) :]
    return origin + (MASKED_REST if rest.strip("/") or parts.username else "")


def masked_detail(value: Any) -> Any:
    """`value` (an audit entry's detail, JSON) with every URL in it masked."""
    if isinstance(value, str):
        return masked_url(value)
    if isinstance(value, dict):
        return {key: masked_detail(item) for key, item in value.items()}
    if isinstance(value, list):
        return [masked_detail(item) for item in value]
    return value
