"""What a verified webhook delivery holds once parsed: messages to enqueue, statuses, skips."""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath

from core.channel_kind import ChannelKind
from inbox.message import (
    MAX_EMOJI_CODE_POINTS,
    MAX_MESSAGE_ID_CHARS,
    MAX_QUOTE_CHARS,
    InboundReaction,
    InboundText,
    QuotedMessage,
)

__all__ = [
    "RECEIPT_STATUSES",
    "UNPARSEABLE",
    "Delivery",
    "InboundReaction",
    "InboundText",  # inbox.message's: the parsed message goes to its row as it is
    "Skipped",
    "StatusUpdate",
    "epoch_to_utc",
    "failure_site",
    "quoted_message",
    "reaction_emoji",
    "storable_id",
    "storable_text",
]


@dataclass(frozen=True)
class Skipped:
    """An event that never reaches a conversation, and why (`status`, `from_me`, ...)."""

    reason: str
    detail: str = ""


# Postgres text holds neither NUL nor a lone surrogate (asyncpg cannot even encode one), and
# JSON carries both (`\u0000`, `\ud800`): a provider id holding one would be refused by the
# database on every retry (503 forever), a text by the worker that stores it.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_ID_CHARS = MAX_MESSAGE_ID_CHARS

# The reason of an event the parser raised on: the provider gets 200 (a retry would fail the
# same way, and a 500 makes it retry until it gives up, losing the message), and the log
# says where the parser failed, never what the content was.
UNPARSEABLE = "unparseable"

# The statuses a receipt records; their order (a status never moves back, `failed` is final)
# is the database's skillet_receipt_rank (skillet_data/functions.sql).
RECEIPT_STATUSES = frozenset({"sent", "delivered", "read", "failed"})


@dataclass(frozen=True)
class StatusUpdate:
    """What the provider says became of one message we sent (a reply's part)."""

    kind: ChannelKind
    address: str  # the number it was sent from
    provider_message_id: str
    status: str  # one of RECEIPT_STATUSES
    error: str | None = None  # the provider's reason, for `failed`


@dataclass
class Delivery:
    texts: list[InboundText] = field(default_factory=list)
    # Messages the business's own number sent (WAHA fromMe, Cloud API smb_message_echoes),
    # in the same shape: `sender` holds the ids of the customer they went to. Whether one is
    # ours or the owner's, the worker decides (jobs.message_echo).
    echoes: list[InboundText] = field(default_factory=list)
    statuses: list[StatusUpdate] = field(default_factory=list)
    # Customers' reactions: kept on the message they react to, never a message or a turn.
    reactions: list[InboundReaction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, reason: str, detail: object = "") -> None:
        # Only scalars are shown: str() of a deeply nested list raises RecursionError.
        shown = detail if isinstance(detail, str | int | float | None) else type(detail).__name__
        self.skipped.append(Skipped(reason, str(shown)[:100]))

    @contextmanager
    def unparseable_skipped(self) -> Iterator[None]:
        """Parse one event inside: whatever it raises (content we cannot read, or a parser
        bug that content hits) is recorded as one skipped `unparseable` event instead."""
        try:
            yield
        except Exception as exc:  # any parser failure, by design: see UNPARSEABLE
            self.skip(UNPARSEABLE, failure_site(exc))


def storable_id(value: object) -> str | None:
    """A provider's id or address (message id, session, phone_number_id) as we can store and
    look it up: 1 to MAX_ID_CHARS characters, no NUL or lone surrogate; else None."""
    if isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS and not _UNSTORABLE.search(value):
        return value
    return None


def storable_text(text: str) -> str:
    """The customer's text with what Postgres cannot store replaced by U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def reaction_emoji(value: object) -> str | None:
    """A reaction's emoji as stored ("": taken back), or None when it is none we keep: not a
    string, over MAX_EMOJI_CODE_POINTS code points (refused at the door), or unstorable."""
    if not isinstance(value, str) or len(value) > MAX_EMOJI_CODE_POINTS:
        return None
    return None if _UNSTORABLE.search(value) else value.strip()


def quoted_message(external_id: object, text: object = None) -> QuotedMessage | None:
    """The quoted message of an inbound one (None: no usable id); the provider's text of it
    cut at MAX_QUOTE_CHARS (a quote of a megabyte stops here)."""
    found = storable_id(external_id)
    if found is None:
        return None
    if not isinstance(text, str) or not text.strip():
        return QuotedMessage(found)
    return QuotedMessage(found, storable_text(text[:MAX_QUOTE_CHARS]))


def failure_site(exc: BaseException) -> str:
    """`IndexError at non_text.py:67`: where a parser failed, with nothing of the content."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {PurePath(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}{where}"


def epoch_to_utc(value: object, fallback: datetime) -> datetime:
    """A provider's Unix timestamp (seconds, int or numeric string) -> aware UTC datetime."""
    try:
        seconds = int(str(value))
        return datetime.fromtimestamp(seconds, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return fallback
