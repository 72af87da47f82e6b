"""Where an events URL may point: an https URL whose host is a global unicast address.

Pure: `parse_events_url` checks the URL's shape (scheme, host, port, no credentials) and
`refusal` (core.special_addresses: IANA's special-purpose registries, kept as a table in
skillet_data) says why an address is not public (None when it is). An IPv6 address that
embeds an IPv4 one (IPv4-mapped, NAT64, 6to4) is judged by the IPv4 address, so
`::ffff:127.0.0.1` is loopback. With `allow_private` (development
and tests) http is accepted and no address is refused.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.errors import SkilletError
from core.special_addresses import IPAddress, refusal

__all__ = ["IPAddress", "refusal"]  # the one public test, from IANA's registries (a table)

MAX_URL_CHARS = 2048
ALLOW_HINT = "use um endereço público (em desenvolvimento: SKILLET_EVENTS_ALLOW_PRIVATE_URLS=true)"


class EventsUrlRefused(SkilletError):
    """events_url_refused: not https, or a host that is (or resolves to) a private, loopback,
    link-local, multicast or otherwise non-global address (unless
    SKILLET_EVENTS_ALLOW_PRIVATE_URLS). Every guard of an outside URL raises it."""

    code = "events_url_refused"


@dataclass(frozen=True)
class EventsTarget:
    url: str
    host: str  # as in the URL, without brackets
    port: int
    literal: IPAddress | None  # the host, when it is an address itself


def parse_events_url(url: str, *, allow_private: bool) -> EventsTarget:
    """The URL's target, or EventsUrlRefused saying what to fix."""
    if not url or len(url) > MAX_URL_CHARS or any(c.isspace() or ord(c) < 32 for c in url):
        raise _refused(f"a URL de eventos deve ter de 1 a {MAX_URL_CHARS} caracteres, sem espaços")
    parts = urlsplit(url)
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes:
        raise _refused("a URL de eventos precisa começar com https://")
    if parts.username is not None or parts.password is not None:
        raise _refused("a URL de eventos não pode levar usuário e senha; assine com o segredo")
    host = parts.hostname
    if not host:
        raise _refused("a URL de eventos não tem host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise _refused("a porta da URL de eventos é inválida") from None
    target = EventsTarget(url=url, host=host, port=port, literal=_literal(host))
    if target.literal is not None and not allow_private:
        reason = refusal(target.literal)
        if reason is not None:
            raise _refused(f"o host {host} é um endereço {reason}, não público: {ALLOW_HINT}")
    return target


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def refused_address(host: str, address: IPAddress, reason: str) -> EventsUrlRefused:
    return _refused(
        f"o host {host} resolve para {address} ({reason}), que não é público: {ALLOW_HINT}"
    )


def _refused(message: str) -> EventsUrlRefused:
    return EventsUrlRefused(message)
