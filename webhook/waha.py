"""WAHA webhook events -> customer texts (pure: no I/O).

Only `message` events count (`message.any` would repeat them and add our own messages).
The receiving number is the event's `session`; the customer is payload.from, plus the
alternate id some engines put in `_data` when `from` is an opaque `@lid` (NOWEB:
key.remoteJidAlt / key.senderPn; GOWS: Info.SenderAlt), so both forms map to one contact.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from channels.contacts import contact_ids, normalize_whatsapp_id
from channels.models import ChannelKind
from webhook.events import Delivery, InboundText, epoch_to_utc


def parse_waha(document: Any, received_at: datetime) -> Delivery:
    delivery = Delivery()
    event = _get(document, "event")
    session = _get(document, "session")
    payload = _get(document, "payload")
    if event != "message":
        delivery.skip("event", event)
    elif not isinstance(session, str) or not session or not isinstance(payload, dict):
        delivery.skip("malformed", "session/payload")
    elif payload.get("fromMe") is True:
        delivery.skip("from_me")
    elif normalize_whatsapp_id(payload.get("from")) is None:
        delivery.skip("not_a_person", payload.get("from"))  # group, broadcast, newsletter
    else:
        _parse_message(session, payload, received_at, delivery)
    return delivery


def _parse_message(
    session: str, payload: dict[str, Any], received_at: datetime, delivery: Delivery
) -> None:
    message_id = payload.get("id")
    body = payload.get("body")
    sender = contact_ids(_sender_candidates(payload))
    if not isinstance(message_id, str) or not message_id:
        delivery.skip("malformed", "id")
    elif payload.get("hasMedia") is True:
        delivery.skip("non_text", "media")
    elif not isinstance(body, str) or not body.strip():
        delivery.skip("non_text", "no body")
    elif sender is None:
        delivery.skip("no_sender")
    else:
        delivery.texts.append(
            InboundText(
                kind=ChannelKind.WAHA,
                address=session,
                message_id=message_id,
                sender=sender,
                text=body,
                sent_at=epoch_to_utc(payload.get("timestamp"), received_at),
            )
        )


def _sender_candidates(payload: dict[str, Any]) -> list[Any]:
    data = _get(payload, "_data")
    key = _get(data, "key")
    info = _get(data, "Info")
    return [
        payload.get("from"),
        _get(key, "remoteJidAlt"),
        _get(key, "senderPn"),
        _get(info, "SenderAlt"),
        _get(info, "Sender"),
    ]


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None
