"""Cursor pagination: `limit` from the query string, and opaque `next` cursors. Pure.

A cursor is base64url JSON of the keyset of the last item a page showed, tagged with the
list it belongs to; clients pass it back untouched. A cursor cannot widen what a key sees:
every list query is also filtered by the key's org (and row-level security).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from api.errors import ApiError

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

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
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        tag, keyset = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
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
    except (ValueError, TypeError, IndexError, KeyError):
        raise _bad_cursor() from None


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
