"""Sending a reply through Meta's WhatsApp Cloud API: POST /{phone-number-id}/messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import structlog

from channels.credential_queries import NO_SEND_CREDENTIALS, SendCredentials
from channels.errors import SendFailure, send_failed, send_parked
from channels.http import PartsSender, Verdict
from channels.templates import template_message
from channels.text import split_text
from turn.outbox import Recipient
from turn.outbox_queries import OutboxRow

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
        url = f"{self._config.base_url.rstrip('/')}/{phone_number_id}/messages"
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


def _message_id(body: Any) -> str | None:
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        found = messages[0].get("id")
        return found if isinstance(found, str) else None
    return None
