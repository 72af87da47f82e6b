"""Sending a reply through WAHA (self-hosted WhatsApp HTTP API): POST /api/sendText, and a
reply's files through /api/sendFile and /api/sendImage.

A number with a WAHA server of its own is sent through it with its own key only (the
deployment's SKILLET_WAHA_API_KEY goes to the deployment's server only). An org's admin gave
that server (the API) unless an operator vouched for it (the CLI): then it is resolved at every
send, refused unless every address is public (core.addresses), and connected to the addresses
checked only (core.pinned), so a name re-pointed inside after it was connected is refused then.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog

from channels.credential_queries import NO_SEND_CREDENTIALS, SendCredentials
from channels.errors import SendFailure, send_failed
from channels.http import ONE_ATTEMPT, PartsSender, RetryPolicy, Sleep, Verdict, post_json
from channels.text import split_text
from core.address_guard import AddressGuard, Resolve, system_resolve
from core.addresses import EventsUrlRefused
from core.pinned import pinned_session
from core.url_origin import origin_of
from delivery.contract import Recipient
from delivery.outbound_file import FileMessage
from delivery.outbox_queries import OutboxRow
from inbox.contacts import waha_chat_id

log = structlog.get_logger(__name__)

TEXT_MAX_CHARS = 65_536  # WhatsApp's own cap on one text message


@dataclass(frozen=True)
class WahaConfig:
    base_url: str  # e.g. http://waha:3000
    # Sent as X-Api-Key when set (WAHA_API_KEY on the WAHA side). Never printed.
    api_key: str | None = field(repr=False)
    reply_context: bool = False  # quote the customer's message in the first part
    max_text_chars: int = TEXT_MAX_CHARS
    allow_private: bool = False  # development: a number's own server is not checked


@dataclass(frozen=True)
class WahaServer:
    """Where one send goes: the server, its key, and whether it is checked at this call."""

    base_url: str
    api_key: str | None = field(repr=False)
    checked: bool  # an org-given server: resolved now, every address public, pinned


class WahaSender(PartsSender[WahaConfig]):
    """One reply = one or more sendText calls on the channel's session."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        config: WahaConfig,
        policy: RetryPolicy,
        *,
        sleep: Sleep = asyncio.sleep,
        resolve: Resolve = system_resolve,
    ) -> None:
        super().__init__(http, config, policy, sleep=sleep)
        self._guard = AddressGuard(resolve)

    async def send(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials = NO_SEND_CREDENTIALS,
    ) -> Sequence[str] | None:
        """On the session's own WAHA server with its key when it has one, else the shared."""
        if recipient.route is None:
            raise send_failed(SendFailure.NO_CHANNEL, "reply has no WAHA channel")
        if row.template is not None:  # refused before the outbox too (api, schedule_followup)
            raise send_failed(SendFailure.REJECTED, "WAHA has no WhatsApp templates")
        server = self.server(credentials)
        parts = split_text(row.body, self._config.max_text_chars)
        async with self._session(server) as http:
            bodies = await self._post_parts(
                f"{server.base_url}/api/sendText",
                [
                    self._payload(recipient.route.address, recipient, part, first=i == 0)
                    for i, part in enumerate(parts)
                ],
                headers=_key_header(server),
                classify=classify_waha_answer,
                http=http,
            )
        provider_ids = [i for i in map(waha_message_id, bodies) if i is not None]
        log.info("outbox.sent_waha", outbox_id=str(row.id), parts=len(parts))
        # Kept as receipts: the `message.any` echo of each part carries the same id, and is
        # how the worker tells our replies from the owner's phone (jobs.message_echo).
        return provider_ids

    async def send_file(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials,
        data: bytes,
    ) -> Sequence[str] | None:
        """A file part with its bytes (base64): /api/sendImage for an image, /api/sendFile
        for a document or audio (Meta's size for the kind checked by channels.dispatch)."""
        file = row.file
        assert file is not None
        if recipient.route is None:
            raise send_failed(SendFailure.NO_CHANNEL, "reply has no WAHA channel")
        server = self.server(credentials)
        endpoint = "sendImage" if file.kind is FileMessage.IMAGE else "sendFile"
        payload: dict[str, Any] = {
            "session": recipient.route.address,
            "chatId": waha_chat_id(recipient.contact_id),
            "file": {
                "mimetype": file.mime,
                "filename": file.filename,
                "data": base64.b64encode(data).decode("ascii"),
            },
        }
        if file.caption and file.kind is not FileMessage.AUDIO:
            payload["caption"] = file.caption
        async with self._session(server) as http:
            [body] = await self._post_parts(
                f"{server.base_url}/api/{endpoint}",
                [payload],
                headers=_key_header(server),
                classify=classify_waha_answer,
                http=http,
            )
        provider_ids = [i for i in [waha_message_id(body)] if i is not None]
        log.info("outbox.sent_waha_file", outbox_id=str(row.id), kind=file.kind.value)
        return provider_ids

    async def send_choices(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials,
    ) -> Sequence[str] | None:
        """A choices part as one numbered text (WAHA has no buttons every phone shows): the
        customer's number, or the exact title, is read as the choice."""
        offered = row.choices
        assert offered is not None
        if recipient.route is None:
            raise send_failed(SendFailure.NO_CHANNEL, "reply has no WAHA channel")
        server = self.server(credentials)
        payload = self._payload(
            recipient.route.address, recipient, offered.numbered_text(), first=False
        )
        async with self._session(server) as http:
            [body] = await self._post_parts(
                f"{server.base_url}/api/sendText",
                [payload],
                headers=_key_header(server),
                classify=classify_waha_answer,
                http=http,
            )
        log.info("outbox.sent_waha_choices", outbox_id=str(row.id), choices=len(offered.choices))
        return [i for i in [waha_message_id(body)] if i is not None]

    async def presence(
        self,
        recipient: Recipient,
        credentials: SendCredentials,
        endpoint: str,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """One POST /api/{endpoint} on the session's server for the customer's chat:
        `sendSeen` (with `messageIds`), `startTyping` or `stopTyping`; one attempt."""
        if recipient.route is None:
            raise send_failed(SendFailure.NO_CHANNEL, "no WAHA channel")
        server = self.server(credentials)
        payload = {
            "session": recipient.route.address,
            "chatId": waha_chat_id(recipient.contact_id),
            **(extra or {}),
        }
        async with self._session(server) as http:
            await post_json(
                http or self._http,
                f"{server.base_url}/api/{endpoint}",
                payload,
                headers=_key_header(server),
                classify=classify_waha_answer,
                policy=ONE_ATTEMPT,
            )

    def server(self, credentials: SendCredentials) -> WahaServer:
        """The session's own WAHA server and its own key (never the deployment's) when it
        has one, checked at this call unless an operator vouched for it; else the shared."""
        own = credentials.waha_base_url
        if own is not None:
            checked = not (
                credentials.waha_server_vouched
                or self._config.allow_private
                or origin_of(own) == origin_of(self._config.base_url)
            )
            return WahaServer(own.rstrip("/"), credentials.waha_api_key, checked)
        api_key = credentials.waha_api_key or self._config.api_key
        return WahaServer(self._config.base_url.rstrip("/"), api_key, checked=False)

    @contextlib.asynccontextmanager
    async def _session(self, server: WahaServer) -> AsyncIterator[aiohttp.ClientSession | None]:
        """None (the shared session) for a server used as given; for a checked one, a session
        pinned to its addresses resolved now, or send_rejected when one is not public."""
        if not server.checked:
            yield None
            return
        origin = origin_of(server.base_url)
        if origin is None:
            raise send_failed(SendFailure.REJECTED, "the WAHA server's URL is no http(s) URL")
        try:
            addresses = await self._guard.addresses(*origin)
        except EventsUrlRefused as exc:
            log.warning("outbox.waha_server_refused", host=origin[0][:200], reason=exc.message)
            raise send_failed(
                SendFailure.REJECTED, f"the WAHA server was refused: {exc.message}"[:500]
            ) from exc
        async with pinned_session(origin[0], addresses) as http:
            yield http

    def _payload(
        self, session: str, recipient: Recipient, part: str, *, first: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session": session,
            "chatId": waha_chat_id(recipient.contact_id),
            "text": part,
            "linkPreview": False,
        }
        if first and self._config.reply_context and recipient.reply_to_external_id:
            payload["reply_to"] = recipient.reply_to_external_id
        return payload


def _key_header(server: WahaServer) -> Mapping[str, str]:
    return {"X-Api-Key": server.api_key} if server.api_key else {}


def waha_message_id(body: Any) -> str | None:
    """The sent message's id in WAHA's answer: `id` as a string (`true_<chat>_<key>`) or as
    WEBJS's object (`_serialized`), else NOWEB's bare `key.id`."""
    if not isinstance(body, dict):
        return None
    found = body.get("id")
    if isinstance(found, dict):
        found = found.get("_serialized")
    if not isinstance(found, str):
        key = body.get("key")
        found = key.get("id") if isinstance(key, dict) else None
    return found if isinstance(found, str) and 0 < len(found) <= 256 else None


def classify_waha_answer(status: int, body: Any) -> Verdict:
    if 200 <= status < 300:
        return "ok"
    reason = f"HTTP {status}: {body}"[:500]
    if status == 429 or status >= 500:
        return "retry"
    if status in (401, 403):
        return send_failed(SendFailure.UNAUTHORIZED, reason)
    return send_failed(SendFailure.REJECTED, reason)
