"""Sending a reply through Meta's WhatsApp Cloud API: POST /{phone-number-id}/messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp
import structlog

from channels.credential_queries import NO_SEND_CREDENTIALS, SendCredentials
from channels.errors import SendFailure, send_failed, send_parked
from channels.http import ONE_ATTEMPT, PartsSender, Verdict, post_json
from channels.interactive import interactive_message, refusal_reason
from channels.templates import template_message
from channels.text import split_text
from delivery.contract import Recipient
from delivery.errors import SendError
from delivery.outbound_file import FileMessage, OutboundFile, upload_type
from delivery.outbox_queries import OutboxRow

log = structlog.get_logger(__name__)

# Graph API error codes (in a 4xx body) that mean "later", not "never".
_RETRYABLE_CODES = frozenset(
    {
        1,  # API unknown (transient)
        2,  # API service temporarily unavailable
        4,  # application request limit reached
        80007,  # WhatsApp Business Account rate limit
        130429,  # Cloud API throughput reached
        131016,  # service unavailable
        131056,  # too many messages to this user from this number: pair rate limit
    }
)
_OUTSIDE_WINDOW_CODE = 131047  # re-engagement: more than 24 h since the customer wrote
_TOKEN_REFUSED_CODE = 190  # access token invalid, expired or revoked
TEXT_MAX_CHARS = 4096  # Cloud API limit on text.body


@dataclass(frozen=True)
class CloudApiConfig:
    base_url: str  # https://graph.facebook.com/v23.0 (tests: a local fake)
    # The global token: the fallback for a number without one of its own. Never printed.
    access_token: str | None = field(repr=False)
    reply_context: bool = False  # quote the customer's message in the first part
    max_text_chars: int = TEXT_MAX_CHARS


class CloudApiSender(PartsSender[CloudApiConfig]):
    """One reply = one or more text messages from the channel's phone number to the wa_id."""

    async def send(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials = NO_SEND_CREDENTIALS,
    ) -> Sequence[str] | None:
        """With the number's own token when it has one, else the global one."""
        token, base = self._target(recipient, credentials)
        url = f"{base}/messages"
        parts = split_text(row.body, self._config.max_text_chars)
        payloads = [self._payload(recipient, part, first=i == 0) for i, part in enumerate(parts)]
        if row.template is not None:  # one message, whatever the length of its filled body
            t = row.template
            payloads = [
                template_message(recipient.contact_id, t.name, t.language, t.params, t.placeholders)
            ]
        bodies = await self._post_parts(
            url,
            payloads,
            headers={"Authorization": f"Bearer {token}"},
            classify=classify_graph_answer,
        )
        provider_ids = [i for i in map(_message_id, bodies) if i is not None]
        log.info(
            "outbox.sent_cloud_api",
            outbox_id=str(row.id),
            parts=len(parts),
            provider_message_ids=provider_ids,
        )
        return provider_ids

    async def send_file(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials,
        data: bytes,
    ) -> Sequence[str] | None:
        """A file part: uploaded to POST /{phone-number-id}/media (multipart), then sent as a
        document, image or audio message by the media id Meta answers (a link would need a
        public bucket). Meta's size for the kind was checked before (channels.dispatch)."""
        file = row.file
        assert file is not None
        token, base = self._target(recipient, credentials)
        headers = {"Authorization": f"Bearer {token}"}

        def form() -> aiohttp.FormData:
            body = aiohttp.FormData()
            body.add_field("messaging_product", "whatsapp")
            mime = upload_type(file.kind, file.mime)
            body.add_field("type", mime)
            body.add_field("file", data, filename=file.filename, content_type=mime)
            return body

        try:
            uploaded = await self._post_form(
                f"{base}/media", form, headers=headers, classify=classify_graph_answer
            )
        except SendError as exc:
            if exc.code != SendFailure.DELIVERY_UNKNOWN.value:
                raise
            # Only an upload, never a message: nothing reached the customer, a later try may.
            raise SendError(exc.message, code=exc.code, retryable=True) from exc
        media_id = uploaded.get("id") if isinstance(uploaded, dict) else None
        if not isinstance(media_id, str) or not media_id:
            raise send_failed(SendFailure.REJECTED, f"the upload answered no media id: {uploaded}")
        [body] = await self._post_parts(
            f"{base}/messages",
            [media_message(recipient.contact_id, file, media_id)],
            headers=headers,
            classify=classify_graph_answer,
        )
        provider_ids = [i for i in [_message_id(body)] if i is not None]
        log.info(
            "outbox.sent_cloud_api_file",
            outbox_id=str(row.id),
            kind=file.kind.value,
            bytes=len(data),
            provider_message_ids=provider_ids,
        )
        return provider_ids

    async def send_choices(
        self,
        row: OutboxRow,
        recipient: Recipient,
        credentials: SendCredentials,
    ) -> Sequence[str] | None:
        """A choices part: one interactive message (reply buttons or a list). Meta refusing
        it fails this part only, with a pt-BR reason; the text before it went already."""
        offered = row.choices
        assert offered is not None
        token, base = self._target(recipient, credentials)
        try:
            [body] = await self._post_parts(
                f"{base}/messages",
                [interactive_message(recipient.contact_id, offered)],
                headers={"Authorization": f"Bearer {token}"},
                classify=classify_graph_answer,
            )
        except SendError as exc:
            if exc.code != SendFailure.REJECTED.value:
                raise
            raise send_failed(
                SendFailure.REJECTED, refusal_reason(_graph_code(exc.message), exc.message)
            ) from exc
        provider_ids = [i for i in [_message_id(body)] if i is not None]
        log.info(
            "outbox.sent_cloud_api_choices",
            outbox_id=str(row.id),
            choices=len(offered.choices),
            provider_message_ids=provider_ids,
        )
        return provider_ids

    async def mark_read(
        self,
        recipient: Recipient,
        credentials: SendCredentials,
        message_id: str,
        *,
        typing: bool,
    ) -> None:
        """One POST /{phone-number-id}/messages with `status: read` for the customer's message
        (Meta marks the earlier ones read too) and, with `typing`, the typing indicator (shown
        until the reply arrives, 25 s at most). One attempt: it is never worth a retry."""
        token, base = self._target(recipient, credentials)
        payload: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": message_id,
        }
        if typing:
            payload["typing_indicator"] = {"type": "text"}
        await post_json(
            self._http,
            f"{base}/messages",
            payload,
            headers={"Authorization": f"Bearer {token}"},
            classify=classify_graph_answer,
            policy=ONE_ATTEMPT,
        )

    def _target(self, recipient: Recipient, credentials: SendCredentials) -> tuple[str, str]:
        """The token to send with and the number's Graph API URL, or the SendError why not."""
        if recipient.route is None:
            raise send_failed(SendFailure.NO_CHANNEL, "reply has no Cloud API channel")
        token = credentials.access_token or self._config.access_token
        if not token:
            raise send_failed(
                SendFailure.NOT_CONFIGURED,
                "the number has no access token of its own and SKILLET_WHATSAPP_ACCESS_TOKEN "
                "is not set",
            )
        if not (recipient.contact_id.isascii() and recipient.contact_id.isdigit()):
            raise send_failed(
                SendFailure.REJECTED, "the Cloud API needs the contact's phone number (wa_id)"
            )
        phone_number_id = quote(recipient.route.address, safe="")
        return token, f"{self._config.base_url.rstrip('/')}/{phone_number_id}"

    def _payload(self, recipient: Recipient, part: str, *, first: bool) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": recipient.contact_id,
            "type": "text",
            "text": {"preview_url": False, "body": part},
        }
        if first and self._config.reply_context and recipient.reply_to_external_id:
            payload["context"] = {"message_id": recipient.reply_to_external_id}
        return payload


def media_message(to: str, file: OutboundFile, media_id: str) -> dict[str, Any]:
    """The message of an uploaded file: a document keeps its file name; audio has no
    caption in Meta's API."""
    media: dict[str, Any] = {"id": media_id}
    if file.caption and file.kind is not FileMessage.AUDIO:
        media["caption"] = file.caption
    if file.kind is FileMessage.DOCUMENT:
        media["filename"] = file.filename
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": file.kind.value,
        file.kind.value: media,
    }


def classify_graph_answer(status: int, body: Any) -> Verdict:
    """Graph API answer -> delivered / retry / permanent failure with Meta's reason."""
    if 200 <= status < 300:
        return "ok"
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    reason = f"HTTP {status}, Graph error {code}: {error.get('message') or body}"[:500]
    if status == 429 or status >= 500 or code in _RETRYABLE_CODES:
        return "retry"
    if code == _OUTSIDE_WINDOW_CODE:
        return send_failed(SendFailure.OUTSIDE_WINDOW, reason)
    if code == _TOKEN_REFUSED_CODE:
        return send_parked(reason)  # the number waits for a new token (channels.dispatch)
    if status in (401, 403):
        return send_failed(SendFailure.UNAUTHORIZED, reason)
    return send_failed(SendFailure.REJECTED, reason)


def _graph_code(reason: str) -> int | None:
    """The Graph error code in classify_graph_answer's reason (`..., Graph error 131009: ...`)."""
    _, found, rest = reason.partition("Graph error ")
    digits = rest.split(":", 1)[0].strip()
    return int(digits) if found and digits.isdigit() and len(digits) <= 9 else None


def _message_id(body: Any) -> str | None:
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        found = messages[0].get("id")
        return found if isinstance(found, str) else None
    return None
