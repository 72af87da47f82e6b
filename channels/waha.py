"""Sending a reply through WAHA (self-hosted WhatsApp HTTP API): POST /api/sendText, and a
reply's files through /api/sendFile and /api/sendImage."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from channels.credential_queries import NO_SEND_CREDENTIALS, SendCredentials
from channels.errors import SendFailure, send_failed
from channels.http import PartsSender, Verdict
from channels.text import split_text
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


class WahaSender(PartsSender[WahaConfig]):
    """One reply = one or more sendText calls on the channel's session."""

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
        base_url, api_key = self._server(credentials)
        parts = split_text(row.body, self._config.max_text_chars)
        bodies = await self._post_parts(
            f"{base_url}/api/sendText",
            [
                self._payload(recipient.route.address, recipient, part, first=i == 0)
                for i, part in enumerate(parts)
            ],
            headers={"X-Api-Key": api_key} if api_key else {},
            classify=classify_waha_answer,
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
        base_url, api_key = self._server(credentials)
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
        [body] = await self._post_parts(
            f"{base_url}/api/{endpoint}",
            [payload],
            headers={"X-Api-Key": api_key} if api_key else {},
            classify=classify_waha_answer,
        )
        provider_ids = [i for i in [waha_message_id(body)] if i is not None]
        log.info("outbox.sent_waha_file", outbox_id=str(row.id), kind=file.kind.value)
        return provider_ids

    def _server(self, credentials: SendCredentials) -> tuple[str, str | None]:
        """The session's own WAHA server and key when it has one, else the shared."""
        if credentials.waha_base_url is not None:
            return credentials.waha_base_url.rstrip("/"), credentials.waha_api_key
        api_key = credentials.waha_api_key or self._config.api_key
        return self._config.base_url.rstrip("/"), api_key

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
