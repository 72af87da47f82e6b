"""Where an http(s) URL connects: its (host, port), parsed by yarl as aiohttp parses it when
it connects, so no second parser can disagree with the one that connects. Pure."""

from __future__ import annotations

from yarl import URL


def origin_of(url: str) -> tuple[str, int] | None:
    """(host, port) an http(s) URL connects to, the scheme's port when none is written;
    None for anything else (another scheme, no host, a URL aiohttp would refuse)."""
    try:
        parsed = URL(url)
    except ValueError:
        return None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host or parsed.port is None:
        return None
    return parsed.raw_host.lower(), parsed.port
