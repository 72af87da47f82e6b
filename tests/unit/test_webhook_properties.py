"""Property-based: whatever JSON a provider sends, the webhook's parsers return a Delivery and
never raise (and never need their `unparseable` guard); what they fail on is skipped as
`unparseable`, and the rest of a batch still counts."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inbox.message import InboundMessage, storable_body
from tests.whatsapp_payloads import (
    cloud_delivery,
    cloud_message,
    cloud_reaction,
    cloud_status,
    cloud_text,
    cloud_value,
    waha_event,
    waha_reaction,
    waha_reply_to,
)
from webhook import non_text
from webhook.cloud_api import parse_cloud_api
from webhook.events import UNPARSEABLE, Delivery, Skipped, storable_id, storable_text
from webhook.waha import parse_waha

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PROPERTIES = settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
VCARD = "BEGIN:VCARD\nVERSION:3.0\nFN:Ana Souza\nTEL:+5511988880000\nEND:VCARD"

# Strings the parsers branch on, so mutations reach deep code rather than the first check.
_WORDS = st.sampled_from(
    [
        "message", "text", "image", "audio", "video", "document", "sticker", "location",
        "contacts", "reaction", "interactive", "button", "button_reply", "list_reply",
        "nfm_reply", "vcard", "multi_vcard", "chat", "ptt", "FN", "FN;CHARSET=UTF-8",
        "FN:Ana", "BEGIN:VCARD\nFN\nEND:VCARD", "failed", "delivered", "messages",
        "whatsapp_business_account", "5511999990000@c.us", "123@lid", "123@g.us",
        "image/jpeg", "", " ", "\u2028", "\x00", "a\x00b", "\ud800", "9" * 30, "-1", "1e400",
        "NaN",
    ]
)  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(),  # Python's json accepts NaN and Infinity, so the parsers can get them
    st.text(max_size=40),
    _WORDS,
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(_WORDS, st.text()), inner)
    ),
    max_leaves=20,
)


def _seeds() -> list[Any]:
    media = {"media": {"mimetype": "image/jpeg", "filename": "foto.jpg"}}
    place = {"location": {"latitude": -23.5, "longitude": -46.6, "description": "Casa"}}
    return [
        waha_event("loja", "m1", "oi"),
        waha_event("loja", "m2", "", has_media=True, extra=media),
        waha_event("loja", "m3", "", data={"type": "vcard"}, extra={"vCards": [VCARD]}),
        waha_event("loja", "m4", "", extra=place),
        waha_event("loja", "m5", "essa", extra=waha_reply_to("true_x_1", "Sexta às 14h?")),
        waha_reaction("loja", "m6", "true_x_1", "👎🏽"),
        cloud_delivery(
            cloud_value(
                "111",
                [
                    cloud_text("w1", "oi"),
                    cloud_message("w2", "contacts", [{"name": {"formatted_name": "Ana"}}]),
                    cloud_message(
                        "w3",
                        "interactive",
                        {"type": "button_reply", "button_reply": {"id": "b1", "title": "Sim"}},
                    ),
                    cloud_message("w4", "reaction", {"emoji": "👍"}),
                    cloud_reaction("w5", "wamid.out.1", "😡"),
                    cloud_text("w6", "essa aqui", quoting="wamid.out.1"),
                ],
                statuses=[cloud_status("out1"), {**cloud_status("out2", "failed"), "errors": []}],
            )
        ),
    ]


SEEDS = _seeds()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document a value can be put: its keys and list items, recursively."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    document = copy.deepcopy(document)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return document


def _check(delivery: Delivery) -> None:
    """A delivery of well-typed texts and short skip details, with no `unparseable` skip:
    that guard keeps production answering 200, but each one it catches is a parser bug."""
    assert isinstance(delivery, Delivery)
    assert [s for s in delivery.skipped if s.reason == UNPARSEABLE] == []
    for text in delivery.texts:
        # Postgres stores every id and text: none holds a NUL or a lone surrogate.
        assert storable_id(text.message_id) == text.message_id
        assert storable_id(text.address) == text.address
        assert isinstance(text.text, str) and storable_text(text.text) == text.text
    for status in delivery.statuses:
        assert storable_id(status.provider_message_id) == status.provider_message_id
        assert status.error is None or storable_text(status.error) == status.error
    for skipped in delivery.skipped:
        assert isinstance(skipped, Skipped) and len(skipped.detail) <= 100


def _parse_both(document: Any) -> None:
    # The parsers see what json.loads returns: round-trip so the test holds JSON only.
    document = json.loads(json.dumps(document))
    _check(parse_waha(document, NOW))
    _check(parse_cloud_api(document, NOW))


@PROPERTIES
@given(_JSON)
def test_random_json_never_raises(document: Any) -> None:
    _parse_both(document)


@PROPERTIES
@given(
    st.sampled_from(SEEDS),
    st.lists(st.tuples(st.integers(min_value=0), _JSON), min_size=1, max_size=4),
)
def test_mutated_deliveries_never_raise(seed: Any, mutations: list[tuple[int, Any]]) -> None:
    document = seed
    for position, value in mutations:
        paths = _paths(document)
        document = _replaced(document, paths[position % len(paths)], value)
    _parse_both(document)


def test_the_seeds_parse_to_messages() -> None:
    assert all(parse_waha(seed, NOW).texts for seed in SEEDS[:5])
    assert len(parse_waha(SEEDS[5], NOW).reactions) == 1
    cloud = parse_cloud_api(SEEDS[6], NOW)
    assert len(cloud.texts) == 4 and len(cloud.reactions) == 1


def test_a_vcard_line_without_a_colon_gives_no_name_and_no_error() -> None:
    cards = ["BEGIN:VCARD\nFN;CHARSET=UTF-8\nFN:Ana\nEND:VCARD", "BEGIN:VCARD\nFN\nEND:VCARD"]
    assert non_text.vcard_names(cards) == ["Ana"]
    event = waha_event("loja", "m1", "", data={"type": "vcard"}, extra={"vCards": cards[1:]})
    assert [t.text for t in parse_waha(event, NOW).texts] == ["[contato]"]


def test_a_deeply_nested_value_is_skipped_without_printing_it() -> None:
    nested: Any = "fundo"
    for _ in range(5_000):
        nested = [nested]
    delivery = parse_waha({"event": nested}, NOW)
    assert delivery.skipped == [Skipped("event", "list")]


def test_a_parser_failure_is_one_unparseable_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cards: object) -> list[str]:
        raise IndexError("list index out of range")

    monkeypatch.setattr("webhook.waha.vcard_names", broken)
    event = waha_event("loja", "m1", "", data={"type": "vcard"}, extra={"vCards": [VCARD]})
    delivery = parse_waha(event, NOW)
    assert delivery.texts == []
    [skipped] = delivery.skipped
    assert skipped.reason == UNPARSEABLE
    assert skipped.detail.startswith("IndexError at test_webhook_properties.py:")
    assert "Ana" not in skipped.detail  # where it failed, never the content


def test_one_unparseable_message_does_not_cost_the_rest_of_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*parts: object) -> str:
        raise ValueError("boom")

    monkeypatch.setattr("webhook.cloud_api.describe_location", broken)
    document = cloud_delivery(
        cloud_value(
            "111",
            [
                cloud_text("w1", "oi"),
                cloud_message("w2", "location", {"latitude": 1, "longitude": 2}),
                cloud_text("w3", "tudo bem?"),
            ],
            statuses=[cloud_status("out1")],
        )
    )
    delivery = parse_cloud_api(document, NOW)
    assert [t.message_id for t in delivery.texts] == ["w1", "w3"]
    assert [s.provider_message_id for s in delivery.statuses] == ["out1"]
    assert [s.reason for s in delivery.skipped] == [UNPARSEABLE]


def test_parsed_texts_fit_the_queue_contract() -> None:
    for seed in SEEDS:
        for text in [*parse_waha(seed, NOW).texts, *parse_cloud_api(seed, NOW).texts]:
            assert storable_body(text.text) is not None
            InboundMessage(
                organization_id="00000000-0000-0000-0000-000000000001",  # type: ignore[arg-type]
                contact_id=text.sender.preferred,
                message_id=text.message_id,
                text=text.text,
                sent_at=text.sent_at,
                kind=text.message_kind,
            )
