"""A person's WhatsApp ids -> one contact id (pure: no I/O).

WhatsApp names a person by phone number (`5511999990000@c.us`, `5511999990000@s.whatsapp.net`,
or bare digits: the Cloud API's `wa_id`) or, since the 2025 privacy rollout, by an opaque
linked id (`123456789012345@lid`). One person can reach the same number under both forms, and
a WAHA event may carry both (the `from` field plus an alternate in `_data`). So:

- every id is normalized: phone forms -> digits only (`5511999990000`), linked ids ->
  `NNN@lid`; device suffixes (`:12`) are dropped; groups, broadcasts, newsletters and status
  updates are not a person (None);
- a conversation's contact_id is the first id ever seen for the person (the phone number when
  that first message carried both); every id seen alongside it is stored as an alias of it
  (`contact_aliases`), so a later message under the other form joins the same conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_PHONE_SERVERS = frozenset({"c.us", "s.whatsapp.net"})
_LID_SERVER = "lid"
_PHONE_RE = re.compile(r"^\d{5,20}$")
_LID_USER_RE = re.compile(r"^\d{5,25}$")


def normalize_whatsapp_id(raw: object) -> str | None:
    """`5511999990000@c.us` -> `5511999990000`, `123@lid` -> `123@lid`; None if not a person."""
    if not isinstance(raw, str):
        return None
    user, _, server = raw.strip().partition("@")
    user = user.split(":", 1)[0]  # `5511999990000:12@s.whatsapp.net`: device 12 of that phone
    user = user[1:] if user.startswith("+") else user
    if server in ("", *_PHONE_SERVERS):
        return user if _PHONE_RE.match(user) else None
    if server == _LID_SERVER:
        return f"{user}@{_LID_SERVER}" if _LID_USER_RE.match(user) else None
    return None  # g.us (group), broadcast, newsletter, ...


@dataclass(frozen=True)
class ContactIds:
    """The sender's ids found in one event: at most one phone number and one linked id."""

    phone: str | None
    lid: str | None

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(i for i in (self.phone, self.lid) if i is not None)

    @property
    def preferred(self) -> str:
        """The contact id of a person never seen before: the phone number when known."""
        return self.aliases[0]


def contact_ids(candidates: Iterable[object]) -> ContactIds | None:
    """The first phone number and the first linked id among `candidates` (raw ids, any form)."""
    phone: str | None = None
    lid: str | None = None
    for raw in candidates:
        normalized = normalize_whatsapp_id(raw)
        if normalized is None:
            continue
        if normalized.endswith("@" + _LID_SERVER):
            lid = lid or normalized
        else:
            phone = phone or normalized
    if phone is None and lid is None:
        return None
    return ContactIds(phone=phone, lid=lid)


def waha_chat_id(contact_id: str) -> str:
    """The WAHA chatId that reaches a contact: `digits@c.us`, or the linked id as it is."""
    return contact_id if "@" in contact_id else f"{contact_id}@c.us"
