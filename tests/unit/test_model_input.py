"""What a conversation sends to the model stays under the caps, whatever the customer writes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turn.model_input import InputCaps, cap_burst, cap_history, cap_message

CAPS = InputCaps(max_message_chars=10, max_burst_chars=25, max_history_chars=30)


def test_a_long_message_keeps_its_start_and_says_how_much_was_cut() -> None:
    assert cap_message("a" * 10, 10) == "a" * 10
    assert cap_message("a" * 15, 10) == "a" * 10 + "\n[… mensagem cortada: 5 caracteres omitidos]"


def test_a_burst_keeps_its_newest_messages_and_notes_the_older_ones() -> None:
    burst = ["primeira " * 3, "segunda", "terceira", "quarta"]
    assert cap_burst(burst, CAPS) == [
        "[mensagem anterior omitida: 27 caracteres]",
        "segunda",
        "terceira",
        "quarta",
    ]


def test_the_newest_message_always_stays_even_alone_over_the_cap() -> None:
    [only] = cap_burst(["x" * 1000], InputCaps(max_message_chars=50, max_burst_chars=5))
    assert only.startswith("x" * 50) and "950 caracteres omitidos" in only


def test_history_keeps_the_newest_exchange_within_its_cap() -> None:
    turns = [
        ("inbound", "a" * 10),
        ("outbound", "b" * 10),
        ("inbound", "c" * 10),
        ("outbound", "d"),
    ]
    assert cap_history(turns, CAPS) == [
        ("outbound", "b" * 10),
        ("inbound", "c" * 10),
        ("outbound", "d"),
    ]


@given(st.lists(st.text(max_size=200), min_size=1, max_size=30))
def test_a_burst_never_exceeds_its_cap_plus_notes(texts: list[str]) -> None:
    out = cap_burst(texts, CAPS)
    whole = [t for t in out if not t.startswith("[mensagem anterior omitida")]
    notice = len("\n[… mensagem cortada: 999 caracteres omitidos]")
    assert sum(len(t) for t in whole) <= max(CAPS.max_burst_chars, CAPS.max_message_chars + notice)
    assert len(out) == len(texts)  # every message is there, whole or as a note
    assert out[-1].startswith(texts[-1][: CAPS.max_message_chars])
