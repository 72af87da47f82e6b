"""Connecting a number, and changing its credentials, as the CLI and the API both do it: the
proof first (channels.ownership), then the writes, in one transaction of the caller's.

Who learns what: a number connected to the caller's own org answers `channel_exists`; one of
another org answers `channel_not_verified` like any number the token cannot see, unless the
token proves it, then `channel_claimed_elsewhere` (an operator moves it: `skillet channels
move`). A WAHA session on the shared, globally keyed server proves nothing: only an operator
connects those.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace

import aiohttp
import asyncpg

from channels.credential_queries import update_channel_credentials
from channels.models import Channel
from channels.ownership import (
    ChannelClaimedElsewhere,
    ChannelNotVerified,
    Verified,
    verify_cloud_api,
    verify_waha,
)
from channels.queries import fetch_channel_by_address, insert_channel
from core.address_guard import AddressGuard
from core.addresses import EventsUrlRefused
from core.channel_kind import ChannelKind
from core.errors import SkilletError


class ChannelExists(SkilletError):
    code = "channel_exists"


@dataclass(frozen=True)
class ProofConfig:
    """Where proofs are asked, and the deployment's global credentials (the fallback)."""

    graph_api_base_url: str
    waha_base_url: str  # the shared WAHA
    global_access_token: str | None = field(default=None, repr=False)
    global_waha_api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Credentials:
    """What a caller gives of a number's own credentials (None: not given)."""

    access_token: str | None = field(default=None, repr=False)
    waba_id: str | None = None
    waha_base_url: str | None = None
    waha_api_key: str | None = field(default=None, repr=False)


class Prover:
    """Asks the provider whether the credentials given control the number."""

    def __init__(
        self, http: aiohttp.ClientSession, config: ProofConfig, *, guard: AddressGuard | None = None
    ) -> None:
        self._http = http
        self._config = config
        # The API's: a WAHA URL an org's admin gives must be a public address (an operator's
        # is trusted as given).
        self._guard = guard

    async def prove(
        self, kind: ChannelKind, address: str, given: Credentials, *, operator: bool
    ) -> Verified:
        if kind is ChannelKind.CLOUD_API:
            token = given.access_token or self._config.global_access_token
            return await verify_cloud_api(
                self._http, self._config.graph_api_base_url, address, token
            )
        if given.waha_base_url is not None:
            if self._guard is not None:
                try:
                    await self._guard.check_url(given.waha_base_url)
                except EventsUrlRefused as exc:
                    raise ChannelNotVerified(
                        f"A URL do servidor WAHA foi recusada: {exc.message}. Use o endereço "
                        "público (https://) do seu servidor WAHA."
                    ) from exc
            proven = await verify_waha(self._http, given.waha_base_url, address, given.waha_api_key)
            return replace(proven, waha_server_vouched=operator)
        if not operator:
            raise ChannelNotVerified(
                "Uma sessão do servidor WAHA compartilhado não prova de quem é o número: só o "
                "operador a conecta (skillet channels add). Para conectar pela API, informe "
                "waha_base_url e waha_api_key do seu próprio servidor WAHA."
            )
        return Verified()  # the operator vouches for a session of the shared WAHA


@dataclass(frozen=True)
class NewChannel:
    organization_id: uuid.UUID
    kind: ChannelKind
    address: str
    agent_id: uuid.UUID | None = None
    display_phone: str | None = None
    reply_to_non_text: bool = False


async def insert_proven_channel(
    conn: asyncpg.Connection, wanted: NewChannel, given: Credentials, proven: Verified
) -> Channel:
    """Insert a number whose proof held (the caller stores its secrets next, same
    transaction); ChannelExists / ChannelClaimedElsewhere when it is connected already."""
    channel = await insert_channel(
        conn,
        organization_id=wanted.organization_id,
        agent_id=wanted.agent_id,
        kind=wanted.kind,
        address=wanted.address,
        display_phone=wanted.display_phone or proven.display_phone,
        reply_to_non_text=wanted.reply_to_non_text,
        waba_id=given.waba_id,
        waha_base_url=given.waha_base_url,
        waha_server_vouched=proven.waha_server_vouched,
    )
    if channel is None:
        # The API's connection sees its own org's channels only: whose else stays unsaid.
        mine = await fetch_channel_by_address(conn, wanted.kind, wanted.address)
        if mine is not None and mine.organization_id == wanted.organization_id:
            raise ChannelExists(
                f"O número {wanted.kind.value} {wanted.address} já está conectado a esta "
                "organização."
            )
        raise ChannelClaimedElsewhere(
            f"O token prova o número {wanted.address}, mas ele está conectado a outra "
            "organização. Peça ao operador para movê-lo (skillet channels move)."
        )
    updated = await update_channel_credentials(
        conn,
        channel.id,
        access_token=given.access_token,
        waha_api_key=given.waha_api_key,
    )
    assert updated is not None  # inserted in this transaction
    return updated


class InvalidCredentials(SkilletError):
    """A credential given is malformed, or does not fit the channel's kind."""

    code = "invalid_credentials"


def check_credentials(kind: ChannelKind, given: Credentials) -> Credentials:
    """The credentials as given when well formed for `kind`, else InvalidCredentials."""
    from channels.credential_queries import MAX_TOKEN_CHARS, MAX_WAHA_KEY_CHARS, MIN_TOKEN_CHARS

    cloud = given.access_token is not None or given.waba_id is not None
    waha = given.waha_base_url is not None or given.waha_api_key is not None
    if kind is ChannelKind.CLOUD_API and waha:
        raise InvalidCredentials(
            "waha_base_url e waha_api_key são de canais WAHA, não da Cloud API",
            code="invalid_credentials",
        )
    if kind is ChannelKind.WAHA and cloud:
        raise InvalidCredentials(
            "access_token e waba_id são de canais da Cloud API, não do WAHA",
            code="invalid_credentials",
        )
    token = given.access_token
    if token is not None and not (
        MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS and token.isascii() and _printable(token)
    ):
        raise InvalidCredentials(
            f"o token de acesso deve ter de {MIN_TOKEN_CHARS} a {MAX_TOKEN_CHARS} caracteres "
            "ASCII, sem espaços",
            code="invalid_access_token",
        )
    if given.waba_id is not None and not (
        given.waba_id.isascii() and given.waba_id.isdigit() and len(given.waba_id) <= 32
    ):
        raise InvalidCredentials(
            "o waba_id é o número do WhatsApp Business Account (só dígitos, até 32)",
            code="invalid_waba_id",
        )
    url = given.waha_base_url
    if url is not None and not (
        len(url) <= 500 and url.startswith(("http://", "https://")) and _printable(url)
    ):
        raise InvalidCredentials(
            "a URL do servidor WAHA deve começar com http:// ou https://, sem espaços "
            "(até 500 caracteres)",
            code="invalid_waha_base_url",
        )
    key = given.waha_api_key
    if key is not None and not (0 < len(key) <= MAX_WAHA_KEY_CHARS and _printable(key)):
        raise InvalidCredentials(
            f"a chave de API do WAHA deve ter de 1 a {MAX_WAHA_KEY_CHARS} caracteres, sem espaços",
            code="invalid_waha_api_key",
        )
    if url is not None and key is None:
        raise InvalidCredentials(
            "um servidor WAHA próprio precisa da sua chave de API (waha_api_key)",
            code="invalid_waha_api_key",
        )
    return given


def _printable(value: str) -> bool:
    return bool(value) and all(33 <= ord(c) < 127 or ord(c) > 159 for c in value)
