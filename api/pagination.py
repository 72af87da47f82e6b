"""Cursor pagination: `limit` from the query string, and opaque `next` cursors. Pure.

A cursor is base64url JSON of the keyset of the last item a page showed, tagged with the
list it belongs to; clients pass it back untouched. A cursor cannot widen what a key sees:
every list query is also filtered by the key's org (and row-level security).

A cursor is the client's text all the same, so it is read strictly before any query sees it
(400 `invalid_cursor` otherwise): at most MAX_CURSOR_CHARS before it is decoded (so no
nesting deep enough to matter reaches the JSON parser), the list's own tag, and a keyset of
exactly the shape that list issues, each value of its type and range: `time_id_keyset` (an
aware time Postgres and Python both hold, a uuid's text), `id_keyset` (a bigint id),
`name_keyset` (a skill's name, text Postgres can store).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from api.errors import ApiError
from core.text import unstorable

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# The longest cursor we issue is a conversation's (a time with microseconds and offset, a
# uuid: about 120 characters); a skill name's is shorter. Four times that, and no more.
MAX_CURSOR_CHARS = 512
# Times a cursor may carry: every row's stamp is well inside, and both ends stay years away
# from where Python's datetime (years 1-9999) overflows when an offset moves them to UTC.
MIN_CURSOR_TIME = datetime(1900, 1, 1, tzinfo=UTC)
MAX_CURSOR_TIME = datetime(9000, 1, 1, tzinfo=UTC)
MAX_CURSOR_ID = 2**63 - 1  # bigint
MAX_CURSOR_NAME_CHARS = 200

T = TypeVar("T")


def parse_limit(query: Mapping[str, str]) -> int:
    text = query.get("limit")
    if text is None:
        return DEFAULT_LIMIT
    # ASCII digits only: str.isdigit() also takes "²" (int() refuses it: a 500) and "٣".
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_LIMIT:
        raise ApiError(
            400, "invalid_limit", f"`limit` deve ser um número inteiro de 1 a {MAX_LIMIT}."
        )
    return int(text)


def encode_cursor(kind: str, keyset: Sequence[Any]) -> str:
    raw = json.dumps([kind, list(keyset)], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, query: Mapping[str, str]) -> list[Any] | None:
    """The keyset of `?cursor=` (None on the first page); 400 for anything we did not issue."""
    text = query.get("cursor")
    if text is None:
        return None
    if len(text) > MAX_CURSOR_CHARS:
        raise _bad_cursor()
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        tag, keyset = json.loads(raw)
    except (binascii.Error, ValueError, TypeError, RecursionError):
        raise _bad_cursor() from None
    if tag != kind or not isinstance(keyset, list):
        raise _bad_cursor()
    return keyset


def _bad_cursor() -> ApiError:
    return ApiError(
        400, "invalid_cursor", "Cursor inválido: use o valor `next` da página anterior."
    )


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next: str | None


def page_of(
    rows: Sequence[T], limit: int, kind: str, keyset: Callable[[T], Sequence[Any]]
) -> Page[T]:
    """`rows` fetched with `limit + 1`: the extra row only says there is a next page."""
    items = list(rows[:limit])
    more = len(rows) > limit
    return Page(items, encode_cursor(kind, keyset(items[-1])) if more and items else None)


def read_cursor(kind: str, query: Mapping[str, str], parse: Callable[[list[Any]], T]) -> T | None:
    """The cursor's keyset turned into typed values by `parse`; 400 when it does not fit."""
    keyset = decode_cursor(kind, query)
    if keyset is None:
        return None
    try:
        return parse(keyset)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError):
        raise _bad_cursor() from None


def _exactly(values: list[Any], count: int) -> list[Any]:
    if len(values) != count:
        raise ValueError(f"a keyset of {count}")
    return values


def _time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise TypeError("time cursor")
    stamp = datetime.fromisoformat(value)
    # A naive time cannot be compared with the rows' (aware) ones.
    if stamp.utcoffset() is None or not MIN_CURSOR_TIME <= stamp <= MAX_CURSOR_TIME:
        raise ValueError("time cursor")
    return stamp


def _uuid(value: Any) -> uuid.UUID:
    if not isinstance(value, str):
        raise TypeError("uuid cursor")
    return uuid.UUID(value)


def time_id_keyset(values: list[Any]) -> tuple[datetime, uuid.UUID]:
    """(a row's time, its id): conversations, messages, drafts, agents, channels, keys."""
    stamp, ident = _exactly(values, 2)
    return _time(stamp), _uuid(ident)


def id_keyset(values: list[Any]) -> int:
    """A bigint id: curator runs, audit rows, dead letters."""
    [ident] = _exactly(values, 1)
    # bool is an int to Python, not to us.
    if not isinstance(ident, int) or isinstance(ident, bool) or not 0 < ident <= MAX_CURSOR_ID:
        raise ValueError("id cursor")
    return ident


def name_keyset(values: list[Any]) -> str:
    """A skill's name: installed skills, the catalog."""
    [name] = _exactly(values, 1)
    if not isinstance(name, str) or len(name) > MAX_CURSOR_NAME_CHARS or unstorable(name):
        raise ValueError("name cursor")
    return name


def page_sorted(
    rows: Sequence[T],
    query: Mapping[str, str],
    kind: str,
    keyset: Callable[[T], Sequence[Any]],
    parse: Callable[[list[Any]], Sequence[Any]],
) -> Page[T]:
    """One page of a short list already read whole and sorted by `keyset` (an org's agents,
    numbers, keys, catalog): the same `limit`/`cursor` contract as the keyset queries."""
    limit = parse_limit(query)
    after = read_cursor(kind, query, lambda k: tuple(parse(k)))
    left = [r for r in rows if after is None or tuple(keyset(r)) > after]
    return page_of(left[: limit + 1], limit, kind, lambda r: [_json_value(v) for v in keyset(r)])


def _json_value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
