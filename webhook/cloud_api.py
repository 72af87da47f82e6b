"""Meta WhatsApp Cloud API webhook payloads -> customer messages and delivery statuses (pure).

A POST holds a batch: entry[] -> changes[] -> value.messages[] (and value.statuses[] for
delivery receipts of our own messages). The receiving number is
value.metadata.phone_number_id; the customer is messages[].from (their wa_id), and their
WhatsApp profile name is the value's contacts[].profile.name of that wa_id.

WhatsApp Business app coexistence adds the field `smb_message_echoes`: value.message_echoes[]
holds what the business sent from the app (or a linked device), each shaped like a message
but addressed `to` the customer. Those are echoes (Delivery.echoes); the worker tells them
from our own sends.

A message the customer swiped to reply to another names it in `context.id`; a `reaction`
message (reaction.message_id, reaction.emoji; "" takes it back) is a reaction, never a message
(Delivery.reactions).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from core.channel_kind import ChannelKind
from delivery.outbound_choices import chosen_marker
from inbox.contacts import ContactIds, contact_ids, normalize_whatsapp_id
from inbox.file_names import safe_file_name
from inbox.message import FETCHED_MEDIA_KINDS, InboundMedia, MessageKind
from inbox.profile_names import profile_name
from webhook.events import (
    RECEIPT_STATUSES,
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
from webhook.non_text import describe, describe_location

OBJECT = "whatsapp_business_account"
ECHOES_FIELD = "smb_message_echoes"


def parse_cloud_api(document: Any, received_at: datetime) -> Delivery:
    """Every customer message of every entry and change (non-text ones described, see
    webhook.non_text) and every delivery status of our messages; the rest is skipped, with
    why. Never raises: a message or status the parser fails on is skipped as `unparseable`
    (see Delivery.unparseable_skipped) and the rest of the batch still counts."""
    delivery = Delivery()
    with delivery.unparseable_skipped():
        _parse_document(document, received_at, delivery)
    return delivery


def _parse_document(document: Any, received_at: datetime, delivery: Delivery) -> None:
    if not isinstance(document, dict) or document.get("object") != OBJECT:
        delivery.skip("not_whatsapp", _get(document, "object"))
        return
    for entry in _items(document.get("entry")):
        for change in _items(_get(entry, "changes")):
            field = _get(change, "field")
            if field == ECHOES_FIELD:
                _parse_echoes(_get(change, "value"), received_at, delivery)
            elif field != "messages":
                delivery.skip("field", field)
            else:
                _parse_value(_get(change, "value"), received_at, delivery)


def _address(value: Any) -> str | None:
    raw_address = _get(_get(value, "metadata"), "phone_number_id")
    return storable_id(str(raw_address) if isinstance(raw_address, int) else raw_address)


def _parse_echoes(value: Any, received_at: datetime, delivery: Delivery) -> None:
    address = _address(value)
    for message in _items(_get(value, "message_echoes")):
        if address is None:
            delivery.skip("no_phone_number_id")
            continue
        with delivery.unparseable_skipped():
            _parse_message(message, address, received_at, delivery, echo=True)


def _parse_value(value: Any, received_at: datetime, delivery: Delivery) -> None:
    for _ in _items(_get(value, "errors")):
        delivery.skip("error")
    address = _address(value)
    for status in _items(_get(value, "statuses")):
        with delivery.unparseable_skipped():
            _parse_status(status, address, delivery)
    names = _profile_names(_get(value, "contacts"))
    for message in _items(_get(value, "messages")):
        if address is None:
            delivery.skip("no_phone_number_id")
            continue
        with delivery.unparseable_skipped():
            _parse_message(message, address, received_at, delivery, names=names)


# Senders named per change: a batch holds one contact per sender; more is not a sender's.
MAX_PROFILES = 100


def _profile_names(contacts: Any) -> dict[str, str]:
    """wa_id (normalized) -> profile name, from a change's `contacts[]` (the senders of its
    messages: `{"profile": {"name"}, "wa_id"}`); at most MAX_PROFILES read."""
    names: dict[str, str] = {}
    for contact in _items(contacts)[:MAX_PROFILES]:
        wa_id = normalize_whatsapp_id(_get(contact, "wa_id"))
        name = profile_name(_get(_get(contact, "profile"), "name"))
        if wa_id is not None and name is not None:
            names[wa_id] = name
    return names


def _parse_status(status: Any, address: str | None, delivery: Delivery) -> None:
    message_id, state = storable_id(_get(status, "id")), _get(status, "status")
    if address is None:
        delivery.skip("no_phone_number_id")
    elif message_id is None:
        delivery.skip("malformed", "status id")
    elif not isinstance(state, str) or state not in RECEIPT_STATUSES:  # a list is unhashable
        delivery.skip("status", state)  # e.g. `deleted`: nothing to record
    else:
        update = StatusUpdate(ChannelKind.CLOUD_API, address, message_id, state)
        if state == "failed":
            update = dataclasses.replace(update, error=_status_error(_get(status, "errors")))
        delivery.statuses.append(update)


def _status_error(errors: Any) -> str:
    """`131026 Message undeliverable: details`, from the first of a failed status's errors."""
    error = next(iter(_items(errors)), None)
    details = _get(_get(error, "error_data"), "details") or _get(error, "message")
    words = [str(w) for w in (_get(error, "code"), _get(error, "title")) if w]
    reason = " ".join(words) or "failed"
    return storable_text(f"{reason}: {details}" if details else reason)[:500]


def _parse_message(
    message: Any,
    address: str,
    received_at: datetime,
    delivery: Delivery,
    *,
    echo: bool = False,
    names: dict[str, str] | None = None,
) -> None:
    """A customer's message, or with `echo` one the business sent them (its `to`); `names`:
    the senders' profile names by wa_id (an echo carries none of the customer's)."""
    message_id = storable_id(_get(message, "id"))
    sender = contact_ids([_get(message, "to" if echo else "from")])
    if _get(message, "type") == "reaction" and message_id and sender:
        _parse_reaction(message, address, message_id, sender, received_at, delivery, echo=echo)
        return
    content = _content(message)
    if message_id is None:
        delivery.skip("malformed", "id")
    elif sender is None:
        delivery.skip("no_sender")
    elif isinstance(content, str):
        delivery.skip(content, _get(message, "type"))
    else:
        message_kind, text = content
        (delivery.echoes if echo else delivery.texts).append(
            InboundText(
                kind=ChannelKind.CLOUD_API,
                address=address,
                message_id=message_id,
                sender=sender,
                text=storable_text(text),
                sent_at=epoch_to_utc(_get(message, "timestamp"), received_at),
                message_kind=message_kind,
                media=None if echo else _media(message, message_kind),
                contact_name=None if echo else (names or {}).get(sender.preferred),
                # Swiped to reply: context.id names the quoted message (a forwarded message's
                # context has no id).
                quoted=None if echo else quoted_message(_get(_get(message, "context"), "id")),
            )
        )


def _parse_reaction(
    message: Any,
    address: str,
    message_id: str,
    sender: ContactIds,
    received_at: datetime,
    delivery: Delivery,
    *,
    echo: bool,
) -> None:
    """reaction.message_id (the message reacted to) and reaction.emoji ("" takes it back)."""
    reaction = _get(message, "reaction")
    target = storable_id(_get(reaction, "message_id"))
    emoji = reaction_emoji(_get(reaction, "emoji"))
    if echo:
        delivery.skip("reaction", "echo")  # the business reacting from its phone
    elif target is None:
        delivery.skip("malformed", "reaction message_id")
    elif emoji is None:
        delivery.skip("malformed", "reaction emoji")  # not one emoji: refused at the door
    else:
        delivery.reactions.append(
            InboundReaction(
                kind=ChannelKind.CLOUD_API,
                address=address,
                message_id=message_id,
                sender=sender,
                target_id=target,
                emoji=emoji,
                sent_at=epoch_to_utc(_get(message, "timestamp"), received_at),
            )
        )


def _media(message: Any, kind: MessageKind) -> InboundMedia | None:
    """What the worker needs to fetch an image, voice note or document (None: nothing to
    fetch, or no usable id)."""
    if kind not in FETCHED_MEDIA_KINDS:
        return None
    media = _get(message, kind)
    media_id = storable_id(_get(media, "id"))
    if media_id is None:
        return None
    return InboundMedia(
        media_id=media_id,
        declared_type=_short(_get(media, "mime_type")),
        sha256=_short(_get(media, "sha256")),
        caption=_caption(_get(media, "caption")),
        file_name=safe_file_name(_get(media, "filename")),
        voice=_get(media, "voice") is True,
    )


def _short(value: Any) -> str | None:
    return storable_id(value)


def _caption(value: Any) -> str | None:
    return storable_text(value)[:4_096] if isinstance(value, str) and value.strip() else None


_MEDIA: dict[str, MessageKind] = {
    "image": "image",
    "audio": "audio",
    "video": "video",
    "document": "document",
    "sticker": "sticker",
}
# Not something the customer said: number changes, the "chat opened" ping.
_NOT_MESSAGES = frozenset({"system", "request_welcome", "ephemeral"})


def _content(message: Any) -> tuple[MessageKind, str] | str:
    """(kind, text) of one message, or why it is skipped."""
    kind = _get(message, "type")
    if not isinstance(kind, str):  # `in` on the tables below raises on a list or a dict
        return "unsupported", describe("unsupported", kind)
    if kind == "text":
        return _typed("text", _get(_get(message, "text"), "body"))
    if kind == "interactive":
        return _typed("interactive", _interactive_text(_get(message, "interactive")))
    if kind == "button":  # a template's quick-reply button
        return _typed("button", _get(_get(message, "button"), "text"))
    if kind in _MEDIA:
        media = _get(message, kind)
        # The file name is made safe before it reaches a prompt or a page (inbox.file_names).
        name = safe_file_name(_get(media, "filename"))
        return _MEDIA[kind], describe(_MEDIA[kind], name, _get(media, "caption"))
    if kind == "location":
        place = _get(message, "location")
        return "location", describe_location(
            _get(place, "latitude"),
            _get(place, "longitude"),
            _get(place, "name"),
            _get(place, "address"),
        )
    if kind == "contacts":
        return "contacts", describe("contacts", *_contact_cards(_get(message, "contacts")))
    if kind == "reaction":  # only one without a usable id or sender reaches here
        return "malformed"
    if kind in _NOT_MESSAGES:
        return "not_a_message"
    return "unsupported", describe("unsupported", kind)


def _typed(kind: MessageKind, text: Any) -> tuple[MessageKind, str] | str:
    return (kind, text) if isinstance(text, str) and text.strip() else "empty_text"


def _interactive_text(interactive: Any) -> Any:
    """The tapped button or list row as the model reads it, `[escolheu: «title» (id: id)]`
    (delivery.outbound_choices); a Flow's answer as its JSON."""
    reply_type = _get(interactive, "type")
    reply = _get(interactive, reply_type) if isinstance(reply_type, str) else None
    if reply_type in ("button_reply", "list_reply"):
        title, choice_id = _get(reply, "title"), _get(reply, "id")
        if not isinstance(title, str) or not title.strip():
            return None
        return chosen_marker(title, choice_id if isinstance(choice_id, str) else "")
    if reply_type == "nfm_reply":
        return describe("unsupported", "formulário", _get(reply, "response_json"))
    return None


def _contact_cards(contacts: Any) -> list[str]:
    cards = []
    for contact in _items(contacts):
        name = _get(_get(contact, "name"), "formatted_name")
        phones = [_get(p, "phone") for p in _items(_get(contact, "phones"))]
        words = [w for w in (name, *phones) if isinstance(w, str) and w.strip()]
        if words:
            cards.append(" ".join(words))
    return cards


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
