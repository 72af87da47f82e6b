"""Proof that whoever connects a number controls it, asked of the provider before anything
else is looked up or stored.

Cloud API: `GET {graph}/{phone_number_id}` with the token must answer that number (a token of
another business's WABA gets Meta's error 100 or 190). WAHA: `GET {waha}/api/sessions/{name}`
with the server's API key must answer that session. Anything else, a refusal, a timeout or a
garbled answer, is `channel_not_verified`, with a pt-BR message saying what to check.
Answers are read up to MAX_ANSWER_BYTES: a remote server's answer is hostile input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
import structlog

from core.errors import SkilletError

log = structlog.get_logger(__name__)

MAX_ANSWER_BYTES = 64 * 1024
VERIFY_TIMEOUT_S = 10.0
DISPLAY_PHONE_MAX_CHARS = 32  # channels.display_phone's bound


class ChannelNotVerified(SkilletError):
    """The token or key given cannot see the number: nothing is stored."""

    code = "channel_not_verified"


class ChannelClaimedElsewhere(SkilletError):
    """The token proves the number, but another org has it connected: an operator moves it."""

    code = "channel_claimed_elsewhere"


@dataclass(frozen=True)
class Verified:
    """What the provider said of the number it proved."""

    display_phone: str | None = None
    waha_server_vouched: bool = False  # an operator gave the number's own WAHA server


async def verify_cloud_api(
    http: aiohttp.ClientSession, base_url: str, phone_number_id: str, token: str | None
) -> Verified:
    """The number's `display_phone_number` when `token` can read the phone number object."""
    if not token:
        raise ChannelNotVerified(
            "Não há token de acesso para verificar o número: envie o token (access_token) do "
            "WhatsApp Business Account dono deste phone_number_id."
        )
    url = f"{base_url.rstrip('/')}/{quote(phone_number_id, safe='')}"
    status, body = await _get(http, url, {"Authorization": f"Bearer {token}"})
    if status == 200 and isinstance(body, dict) and body.get("id") == phone_number_id:
        phone = body.get("display_phone_number")
        ok = isinstance(phone, str) and 0 < len(phone) <= DISPLAY_PHONE_MAX_CHARS
        return Verified(display_phone=phone if ok else None)
    log.info("channel.not_verified", kind="cloud_api", status=status, graph_code=_code(body))
    raise ChannelNotVerified(
        f"A Graph API da Meta não confirmou o número {phone_number_id} com este token "
        f"({_why(status, body)}). Confira se o phone_number_id está certo, se o token é de um "
        "usuário do sistema do WhatsApp Business Account dono do número, com a permissão "
        "whatsapp_business_management, e se não expirou."
    )


async def verify_waha(
    http: aiohttp.ClientSession, base_url: str, session: str, api_key: str | None
) -> Verified:
    """The session exists on that WAHA server and its API key opens it."""
    url = f"{base_url.rstrip('/')}/api/sessions/{quote(session, safe='')}"
    status, body = await _get(http, url, {"X-Api-Key": api_key} if api_key else {})
    if status == 200 and isinstance(body, dict) and body.get("name") == session:
        return Verified()
    log.info("channel.not_verified", kind="waha", status=status)
    raise ChannelNotVerified(
        f"O servidor WAHA em {base_url} não confirmou a sessão {session} com esta chave "
        f"({_why(status, body)}). Confira a URL do servidor, o nome da sessão e a chave de API "
        "(WAHA_API_KEY do servidor)."
    )


async def _get(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str]
) -> tuple[int | None, Any]:
    """(status, parsed JSON body or None); status None when the server did not answer."""
    try:
        async with http.get(
            url,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=VERIFY_TIMEOUT_S),
            allow_redirects=False,
        ) as answer:
            status = answer.status
            raw = await _read_bounded(answer.content, MAX_ANSWER_BYTES + 1)
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        log.info("channel.verify_unreachable", error=type(exc).__name__)
        return None, None
    if len(raw) > MAX_ANSWER_BYTES:
        return status, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


async def _read_bounded(content: aiohttp.StreamReader, limit: int) -> bytes:
    """Up to `limit` bytes of a body (a longer one is cut there, and then refused)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in content.iter_chunked(16 * 1024):
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


def _code(body: Any) -> Any:
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def _why(status: int | None, body: Any) -> str:
    if status is None:
        return "o servidor não respondeu; tente de novo em alguns minutos"
    code = _code(body)
    if code == 190:
        return "token inválido ou expirado"
    if status == 200:
        return "a resposta não é deste número"
    return f"HTTP {status}" + (f", erro {code}" if isinstance(code, int) else "")
