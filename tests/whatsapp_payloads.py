"""Webhook bodies shaped like Meta's Cloud API and WAHA send them, and their signatures."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

APP_SECRET = "meta-app-secret-de-teste"
VERIFY_TOKEN = "verify-token-de-teste"
WAHA_HMAC_KEY = "waha-hmac-key-de-teste"
ACCESS_TOKEN = "graph-access-token-de-teste"
WAHA_API_KEY = "waha-api-key-de-teste"


def cloud_text(
    message_id: str,
    text: str,
    *,
    sender: str = "5511999990000",
    timestamp: int = 1_764_000_000,
    quoting: str | None = None,
) -> dict[str, Any]:
    """`quoting`: the id of the message the customer swiped to reply to (Meta's `context`:
    the quoted message's sender, here the business's number, and its id)."""
    message: dict[str, Any] = {
        "from": sender,
        "id": message_id,
        "timestamp": str(timestamp),
        "type": "text",
        "text": {"body": text},
    }
    if quoting is not None:
        message["context"] = {"from": "551140000000", "id": quoting}
    return message


def cloud_reaction(
    message_id: str,
    target: str,
    emoji: str,
    *,
    sender: str = "5511999990000",
    timestamp: int = 1_764_000_000,
) -> dict[str, Any]:
    """A reaction as Meta posts it: type `reaction`, reaction.message_id (the message reacted
    to) and reaction.emoji ("" when the customer takes it back)."""
    return {
        "from": sender,
        "id": message_id,
        "timestamp": str(timestamp),
        "type": "reaction",
        "reaction": {"message_id": target, "emoji": emoji},
    }


def cloud_message(message_id: str, kind: str, content: Any = None) -> dict[str, Any]:
    """A non-text Cloud API message: `content` goes under the key named by its type."""
    message: dict[str, Any] = {
        "from": "5511999990000",
        "id": message_id,
        "timestamp": "1764000000",
        "type": kind,
    }
    if content is not None:
        message[kind] = content
    return message


def cloud_value(
    phone_number_id: str,
    messages: list[dict[str, Any]] | None = None,
    statuses: list[dict[str, Any]] | None = None,
    *,
    profile_names: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`profile_names`: the senders' profile names by wa_id (default "Cliente" for each);
    a sender mapped to None is sent with no contact entry."""
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "551140000000", "phone_number_id": phone_number_id},
    }
    if messages is not None:
        names = profile_names or {}
        senders = dict.fromkeys(m.get("from") for m in messages)
        value["contacts"] = [
            {"profile": {"name": names.get(sender, "Cliente")}, "wa_id": sender}
            for sender in senders
            if names.get(sender, "Cliente") is not None
        ]
        value["messages"] = messages
    if statuses is not None:
        value["statuses"] = statuses
    return value


def cloud_delivery(*values: dict[str, Any], entries: int = 1) -> dict[str, Any]:
    """`values` spread over `entries` entries, one change per value."""
    entry_list: list[dict[str, Any]] = [
        {"id": f"WABA{n}", "changes": []} for n in range(max(1, entries))
    ]
    for n, value in enumerate(values):
        entry_list[n % len(entry_list)]["changes"].append({"value": value, "field": "messages"})
    return {"object": "whatsapp_business_account", "entry": entry_list}


def cloud_status(message_id: str, status: str = "delivered") -> dict[str, Any]:
    return {
        "id": message_id,
        "status": status,
        "timestamp": "1764000000",
        "recipient_id": "5511999990000",
    }


def waha_event(
    session: str,
    message_id: str,
    body: str,
    *,
    sender: str = "5511999990000@c.us",
    from_me: bool = False,
    has_media: bool = False,
    data: dict[str, Any] | None = None,
    event: str = "message",
    timestamp: int = 1_764_000_000,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`extra`: more payload fields (media, location, vCards)."""
    return {
        "id": f"evt_{message_id}",
        "timestamp": timestamp * 1000,
        "event": event,
        "session": session,
        "me": {"id": "551140000000@c.us", "pushName": "Loja"},
        "engine": "NOWEB",
        "payload": {
            "id": message_id,
            "timestamp": timestamp,
            "from": sender,
            "fromMe": from_me,
            "to": "551140000000@c.us",
            "body": body,
            "hasMedia": has_media,
            "ack": 1,
            "_data": data or {},
            **(extra or {}),
        },
    }


def waha_reaction(
    session: str,
    message_id: str,
    target: str,
    emoji: str,
    *,
    sender: str = "5511999990000@c.us",
    timestamp: int = 1_764_000_000,
) -> dict[str, Any]:
    """A `message.reaction` event (WAMessageReaction: the reaction's own id, from, fromMe,
    and reaction {text, messageId}; text "" when taken back)."""
    return {
        "id": f"evt_{message_id}",
        "timestamp": timestamp * 1000,
        "event": "message.reaction",
        "session": session,
        "me": {"id": "551140000000@c.us", "pushName": "Loja"},
        "engine": "WEBJS",
        "payload": {
            "id": message_id,
            "timestamp": timestamp,
            "from": sender,
            "fromMe": False,
            "to": "551140000000@c.us",
            "participant": None,
            "reaction": {"text": emoji, "messageId": target},
        },
    }


def waha_reply_to(message_id: str, body: str | None) -> dict[str, Any]:
    """The `extra` of a waha_event that quotes another message (payload.replyTo)."""
    return {"replyTo": {"id": message_id, "participant": "551140000000@c.us", "body": body}}


WAHA_ACK_NAMES = {-1: "ERROR", 0: "PENDING", 1: "SERVER", 2: "DEVICE", 3: "READ", 4: "PLAYED"}


def waha_ack(
    session: str,
    message_id: str,
    ack: int,
    *,
    chat: str = "5511999990000@c.us",
    from_me: bool = True,
    timestamp: int = 1_764_000_000,
) -> dict[str, Any]:
    """A `message.ack` event as WAHA posts it (WAMessageAckBody: id, from, to, participant,
    fromMe, ack, ackName, _data) for a message the session sent to `chat`."""
    return {
        "id": f"evt_ack_{message_id}_{ack}",
        "timestamp": timestamp * 1000,
        "event": "message.ack",
        "session": session,
        "me": {"id": "551140000000@c.us", "pushName": "Loja"},
        "engine": "WEBJS",
        "payload": {
            "id": message_id,
            "from": chat if not from_me else "551140000000@c.us",
            "to": chat,
            "participant": None,
            "fromMe": from_me,
            "ack": ack,
            "ackName": WAHA_ACK_NAMES[ack],
            "_data": {},
        },
    }


def encode(document: Any) -> bytes:
    return json.dumps(document).encode("utf-8")


def cloud_signature(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def waha_signature(body: bytes, key: str = WAHA_HMAC_KEY) -> str:
    return hmac.new(key.encode(), body, hashlib.sha512).hexdigest()
