"""core.text and the cursor keysets built on it: what Postgres cannot store is found at any
depth, without recursion, and a cursor's values are held to the shape their list issues."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from api.pagination import id_keyset, name_keyset, time_id_keyset
from core.text import first_unstorable, storable, unstorable


@pytest.mark.parametrize("text", ["a\x00b", "\ud800", "x\udfff", "\x00"])
def test_nul_and_lone_surrogates_are_unstorable(text: str) -> None:
    assert unstorable(text)
    assert not unstorable(storable(text))


@pytest.mark.parametrize("text", ["", "olá", "\x01\x1f", "😀", "\ufffd", "ção\u2028"])
def test_other_text_is_storable(text: str) -> None:
    assert not unstorable(text)
    assert storable(text) == text


def test_the_first_unstorable_string_is_named_by_where_it_is() -> None:
    assert first_unstorable({"a": [1, "ok", {"b": "x\x00"}]}) == ("a.2.b", "x\x00")
    assert first_unstorable({"chave\ud800": 1}) == ("chave\ud800", "chave\ud800")
    assert first_unstorable("\x00") == ("", "\x00")
    assert first_unstorable({"a": [1, 2.5, None, True, "ok"]}) is None


def test_a_document_deeper_than_the_recursion_limit_is_walked() -> None:
    deep: Any = "fim\x00"
    for _ in range(100_000):
        deep = [deep]
    found = first_unstorable(deep)
    assert found is not None and found[1] == "fim\x00"


NOW = datetime(2026, 12, 1, 12, 30, 15, 123456, tzinfo=UTC)
ID = uuid.uuid4()


def test_the_keysets_we_issue_read_back() -> None:
    assert time_id_keyset([NOW.isoformat(), str(ID)]) == (NOW, ID)
    assert id_keyset([2**63 - 1]) == 2**63 - 1
    assert name_keyset(["frete-expresso"]) == "frete-expresso"


@pytest.mark.parametrize(
    ("parse", "values"),
    [
        (time_id_keyset, [NOW.isoformat(), 5]),
        (time_id_keyset, [NOW.replace(tzinfo=None).isoformat(), str(ID)]),
        (time_id_keyset, ["0001-01-01T00:00:00+14:00", str(ID)]),
        (time_id_keyset, ["9999-12-31T23:59:59-14:00", str(ID)]),
        (time_id_keyset, [NOW.isoformat()]),
        (time_id_keyset, [NOW.isoformat(), str(ID), 1]),
        (id_keyset, [2**63]),
        (id_keyset, [0]),
        (id_keyset, [True]),
        (id_keyset, ["1"]),
        (name_keyset, ["a\x00b"]),
        (name_keyset, ["\ud800"]),
        (name_keyset, [["frete"]]),
        (name_keyset, ["a" * 201]),
    ],
)
def test_a_keyset_of_another_shape_type_or_range_is_refused(parse: Any, values: list[Any]) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)):
        parse(values)
