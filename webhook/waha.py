"""WAHA webhook events -> customer messages, non-text ones described (pure: no I/O).

Customer messages come as `message` events (`message.any` repeats them). The receiving number
is the event's `session`; the customer is payload.from, plus the alternate id some engines put
in `_data` when `from` is an opaque `@lid` (NOWEB: key.remoteJidAlt / key.senderPn; GOWS:
Info.SenderAlt), so both forms map to one contact. Their profile name is the engine's push
name (`_push_name`); never read on an echo, where it is the business's own.

A `message.any` event with `fromMe` is a message the session's own number sent: by the owner
from the phone, or by us (every reply skillet sends comes back so). It is an echo
(Delivery.echoes), its customer the chat: `to` where the engine names it (WEBJS), else `from`
(NOWEB, GOWS), never the session's own id (`me`); the worker tells ours from the owner's.

A `message` event that quotes another (swiped to reply) names it in payload.replyTo
({id, participant, body}). A `message.reaction` event is a reaction (payload.reaction:
{text, messageId}; "" takes it back): kept on that message, never a message itself.

A `message.ack` event says what became of a message the session sent (payload.id, the id
WAHA answered our send with): `ack` -1 ERROR, 0 PENDING, 1 SERVER, 2 DEVICE, 3 READ, 4 PLAYED
(`ackName` read when the number is missing). It becomes a delivery status as a Cloud API
status does: SERVER `sent`, DEVICE `delivered`, READ and PLAYED `read`, ERROR `failed`;
PENDING records nothing (the send's answer already did). The receipt never moves back
(skillet_receipt_rank), so an ack arriving late or twice changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.channel_kind import ChannelKind
from inbox.contacts import ContactIds, contact_ids, normalize_whatsapp_id
from inbox.file_names import safe_file_name
from inbox.message import FETCHED_MEDIA_KINDS, InboundMedia, MessageKind, QuotedMessage
from inbox.profile_names import profile_name
from webhook.events import (
    Delivery,
    InboundReaction,
    InboundText,
    StatusUpdate,
    epoch_to_utc,
    quoted_message,
    reaction_emoji,
    storable_id,
    storable_text,
)
from webhook.non_text import describe, describe_location, vcard_names


def parse_waha(document: Any, received_at: datetime) -> Delivery:
    """The event's message, or why it is skipped. Never raises: an event the parser fails on
    is skipped as `unparseable` (see Delivery.unparseable_skipped)."""
    delivery = Delivery()
    with delivery.unparseable_skipped():
        _parse_event(document, received_at, delivery)
    return delivery


def _parse_event(document: Any, received_at: datetime, delivery: Delivery) -> None:
    event = _get(document, "event")
    session = storable_id(_get(document, "session"))
    payload = _get(document, "payload")
    from_me = isinstance(payload, dict) and payload.get("fromMe") is True
    if event == "message.any" and from_me and session is not None:
        _parse_echo(session, _me(document), payload, received_at, delivery)
    elif event == "message.ack":
        _parse_ack(session, payload, delivery)
    elif event == "message.reaction":
        _parse_reaction(session, payload, received_at, delivery)
    elif event != "message":
        delivery.skip("event", event)
    elif session is None or not isinstance(payload, dict):
        delivery.skip("malformed", "session/payload")
    elif from_me:
        delivery.skip("from_me")  # its echo comes on `message.any`
    elif normalize_whatsapp_id(payload.get("from")) is None:
        delivery.skip("not_a_person", payload.get("from"))  # group, broadcast, newsletter
    else:
        _parse_message(session, payload, received_at, delivery)


def _parse_echo(
    session: str, me: str | None, payload: dict[str, Any], received_at: datetime, delivery: Delivery
) -> None:
    message_id = storable_id(payload.get("id"))
    chat = _echo_chat(payload, me)
    content = _content(payload)
    if message_id is None:
        delivery.skip("malformed", "id")
    elif chat is None:
        delivery.skip("not_a_person", "echo")  # group, broadcast, newsletter, own chat
    elif isinstance(content, str):
        delivery.skip(content)
    else:
        message_kind, text = content
        delivery.echoes.append(
            InboundText(
                kind=ChannelKind.WAHA,
                address=session,
                message_id=message_id,
                sender=chat,
                text=storable_text(text),
                sent_at=epoch_to_utc(payload.get("timestamp"), received_at),
                message_kind=message_kind,
            )
        )


# WAHA's WAMessageAck, by number and by name, as the receipt status it moves to (None: none).
_ACK_STATUSES: dict[int, str | None] = {-1: "failed", 0: None, 1: "sent", 2: "delivered"}
_ACK_STATUSES |= {3: "read", 4: "read"}
_ACK_NUMBERS = {"ERROR": -1, "PENDING": 0, "SERVER": 1, "DEVICE": 2, "READ": 3, "PLAYED": 4}


def _ack_number(payload: dict[str, Any]) -> int | None:
    ack = payload.get("ack")
    if isinstance(ack, int) and not isinstance(ack, bool):
        return ack if ack in _ACK_STATUSES else None
    name = payload.get("ackName")
    return _ACK_NUMBERS.get(name) if isinstance(name, str) else None


def _parse_ack(session: str | None, payload: Any, delivery: Delivery) -> None:
    if session is None or not isinstance(payload, dict):
        delivery.skip("malformed", "session/payload")
        return
    message_id = storable_id(payload.get("id"))
    ack = _ack_number(payload)
    status = None if ack is None else _ACK_STATUSES[ack]
    if payload.get("fromMe") is not True:
        delivery.skip("status", "not_ours")  # an ack of the customer's message: no receipt
    elif message_id is None:
        delivery.skip("malformed", "ack id")
    elif status is None:
        delivery.skip("status", payload.get("ackName") if ack is not None else "unknown")
    else:
        error = f"WAHA ack {ack} ERROR" if status == "failed" else None
        delivery.statuses.append(
            StatusUpdate(ChannelKind.WAHA, session, message_id, status, error=error)
        )


def _echo_chat(payload: dict[str, Any], me: str | None) -> ContactIds | None:
    """The customer an own message went to: the chat, never the session's own number."""
    to, sent_from = payload.get("to"), payload.get("from")
    chat = to if isinstance(to, str) and to and normalize_whatsapp_id(to) != me else sent_from
    if normalize_whatsapp_id(chat) in (None, me) or not isinstance(chat, str):
        return None  # a group's id does not normalize: it is not a person
    data = _get(payload, "_data")
    key, info = _get(data, "key"), _get(data, "Info")
    candidates = [chat, _get(key, "remoteJid"), _get(key, "remoteJidAlt"), _get(info, "Chat")]
    return contact_ids(c for c in candidates if normalize_whatsapp_id(c) != me)


def _me(document: Any) -> str | None:
    return normalize_whatsapp_id(_get(_get(document, "me"), "id"))


def _parse_message(
    session: str, payload: dict[str, Any], received_at: datetime, delivery: Delivery
) -> None:
    message_id = storable_id(payload.get("id"))
    sender = contact_ids(_sender_candidates(payload))
    content = _content(payload)
    if message_id is None:
        delivery.skip("malformed", "id")
    elif sender is None:
        delivery.skip("no_sender")
    elif isinstance(content, str):
        delivery.skip(content)
    else:
        message_kind, text = content
        delivery.texts.append(
            InboundText(
                kind=ChannelKind.WAHA,
                address=session,
                message_id=message_id,
                sender=sender,
                text=storable_text(text),
                sent_at=epoch_to_utc(payload.get("timestamp"), received_at),
                message_kind=message_kind,
                media=_media(payload, message_kind),
                contact_name=_push_name(payload),
                quoted=_quoted(payload.get("replyTo")),
            )
        )


def _quoted(reply_to: Any) -> QuotedMessage | None:
    """payload.replyTo: the quoted message's id and, as WAHA read it, its body."""
    return quoted_message(_get(reply_to, "id"), _get(reply_to, "body"))


def _parse_reaction(
    session: str | None, payload: Any, received_at: datetime, delivery: Delivery
) -> None:
    """payload.reaction: `messageId` (the message reacted to) and `text` ("" takes it back)."""
    if session is None or not isinstance(payload, dict):
        delivery.skip("malformed", "session/payload")
        return
    message_id = storable_id(payload.get("id"))
    sender = contact_ids(_sender_candidates(payload))
    reaction = payload.get("reaction")
    target = storable_id(_get(reaction, "messageId"))
    emoji = reaction_emoji(_get(reaction, "text"))
    if payload.get("fromMe") is True:
        delivery.skip("reaction", "from_me")  # the business reacting from its phone
    elif normalize_whatsapp_id(payload.get("from")) is None:
        delivery.skip("not_a_person", payload.get("from"))  # group, broadcast, newsletter
    elif message_id is None or target is None or sender is None:
        delivery.skip("malformed", "reaction id")
    elif emoji is None:
        delivery.skip("malformed", "reaction emoji")  # not one emoji: refused at the door
    else:
        delivery.reactions.append(
            InboundReaction(
                kind=ChannelKind.WAHA,
                address=session,
                message_id=message_id,
                sender=sender,
                target_id=target,
                emoji=emoji,
                sent_at=epoch_to_utc(payload.get("timestamp"), received_at),
            )
        )


def _push_name(payload: dict[str, Any]) -> str | None:
    """The sender's profile name where the engine puts it: `_data.notifyName` (WEBJS),
    `_data.pushName` (NOWEB), `_data.Info.PushName` (GOWS); a top-level `pushName` too."""
    data = _get(payload, "_data")
    for raw in (
        payload.get("pushName"),
        _get(data, "notifyName"),
        _get(data, "pushName"),
        _get(_get(data, "Info"), "PushName"),
    ):
        name = profile_name(raw)
        if name is not None:
            return name
    return None


def _media(payload: dict[str, Any], kind: MessageKind) -> InboundMedia | None:
    """The file WAHA downloaded for the session (payload.media.url; None: nothing to
    fetch, WAHA kept no file, or the URL is no http(s) URL we could store)."""
    if kind not in FETCHED_MEDIA_KINDS or payload.get("hasMedia") is not True:
        return None
    media = payload.get("media")
    url = _get(media, "url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) > 2048:
        return None
    if storable_text(url) != url:
        return None
    body = payload.get("body")
    mimetype = _get(media, "mimetype")
    return InboundMedia(
        url=url,
        declared_type=storable_id(mimetype),
        caption=storable_text(body)[:4_096] if isinstance(body, str) and body.strip() else None,
        file_name=safe_file_name(_get(media, "filename")),
        voice=_get(payload.get("_data"), "type") == "ptt",
    )


# The engine's own message type (`_data.type`, WEBJS) where it names one.
_ENGINE_TYPES: dict[str, MessageKind] = {
    "chat": "text",
    "image": "image",
    "ptt": "audio",
    "audio": "audio",
    "video": "video",
    "document": "document",
    "sticker": "sticker",
    "location": "location",
    "vcard": "contacts",
    "multi_vcard": "contacts",
}
_MIME_MAJOR_KINDS: dict[str, MessageKind] = {"image": "image", "audio": "audio", "video": "video"}
_MEDIA_KINDS = frozenset({"image", "audio", "video", "document", "sticker"})


def _content(payload: dict[str, Any]) -> tuple[MessageKind, str] | str:
    """(kind, text) of one message, or why it is skipped."""
    body = payload.get("body")
    kind = _kind(payload)
    if kind == "text":
        return ("text", body) if isinstance(body, str) and body.strip() else "empty_text"
    if kind in _MEDIA_KINDS:
        caption = body if payload.get("hasMedia") is True else None
        # The file name is made safe before it reaches a prompt or a page (inbox.file_names).
        name = safe_file_name(_get(payload.get("media"), "filename"))
        return kind, describe(kind, name, caption)
    if kind == "location":
        place = payload.get("location")
        data = payload.get("_data")
        return "location", describe_location(
            _get(place, "latitude") or _get(data, "lat"),
            _get(place, "longitude") or _get(data, "lng"),
            _get(place, "description") or _get(place, "name"),
            _get(place, "address"),
        )
    if kind == "contacts":
        cards = payload.get("vCards")
        names = vcard_names(cards if isinstance(cards, list) else [])
        return "contacts", describe("contacts", *names)
    return "unsupported", describe("unsupported", _get(payload.get("_data"), "type"))


def _kind(payload: dict[str, Any]) -> MessageKind:
    engine_type = _get(payload.get("_data"), "type")
    if isinstance(engine_type, str) and engine_type:
        return _ENGINE_TYPES.get(engine_type, "unsupported")
    if payload.get("hasMedia") is True:
        mimetype = _get(payload.get("media"), "mimetype")
        major = mimetype.split("/", 1)[0] if isinstance(mimetype, str) else ""
        return _MIME_MAJOR_KINDS.get(major, "document")
    if isinstance(payload.get("location"), dict):
        return "location"
    if payload.get("vCards"):
        return "contacts"
    return "text"


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
