"""Meta WhatsApp Cloud API webhook payloads -> customer texts (pure: no I/O).

A POST holds a batch: entry[] -> changes[] -> value.messages[] (and value.statuses[] for
delivery receipts of our own messages). The receiving number is
value.metadata.phone_number_id; the customer is messages[].from (their wa_id).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from channels.contacts import contact_ids
from channels.models import ChannelKind
from webhook.events import Delivery, InboundText, epoch_to_utc

OBJECT = "whatsapp_business_account"


def parse_cloud_api(document: Any, received_at: datetime) -> Delivery:
    """Every text message of every entry and change; everything else is skipped, with why."""
    delivery = Delivery()
    if not isinstance(document, dict) or document.get("object") != OBJECT:
        delivery.skip("not_whatsapp", _get(document, "object"))
        return delivery
    for entry in _items(document.get("entry")):
        for change in _items(_get(entry, "changes")):
            if _get(change, "field") != "messages":
                delivery.skip("field", _get(change, "field"))
                continue
            _parse_value(_get(change, "value"), received_at, delivery)
    return delivery


def _parse_value(value: Any, received_at: datetime, delivery: Delivery) -> None:
    for _ in _items(_get(value, "statuses")):
        delivery.skip("status")
    for _ in _items(_get(value, "errors")):
        delivery.skip("error")
    address = _get(_get(value, "metadata"), "phone_number_id")
    for message in _items(_get(value, "messages")):
        if not isinstance(address, str | int) or not str(address):
            delivery.skip("no_phone_number_id")
            continue
        _parse_message(message, str(address), received_at, delivery)


def _parse_message(message: Any, address: str, received_at: datetime, delivery: Delivery) -> None:
    kind = _get(message, "type")
    if kind != "text":
        delivery.skip("non_text", kind)
        return
    message_id = _get(message, "id")
    sender = contact_ids([_get(message, "from")])
    body = _get(_get(message, "text"), "body")
    if not isinstance(message_id, str) or not message_id:
        delivery.skip("malformed", "id")
    elif sender is None:
        delivery.skip("no_sender")
    elif not isinstance(body, str) or not body.strip():
        delivery.skip("empty_text")
    else:
        delivery.texts.append(
            InboundText(
                kind=ChannelKind.CLOUD_API,
                address=address,
                message_id=message_id,
                sender=sender,
                text=body,
                sent_at=epoch_to_utc(_get(message, "timestamp"), received_at),
            )
        )


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
