"""channels.text.split_text: parts under the API limit, cut at natural boundaries."""

from __future__ import annotations

import pytest

from channels.text import split_text, utf16_len


def test_short_text_is_one_part() -> None:
    assert split_text("  Olá, tudo bem?  ", 4096) == ["Olá, tudo bem?"]
    assert split_text("   ", 4096) == []


def test_exactly_the_limit_is_one_part() -> None:
    assert split_text("a" * 4096, 4096) == ["a" * 4096]


def test_cuts_at_a_paragraph_then_a_line_then_a_word() -> None:
    para = "x" * 30
    assert split_text(f"{para}\n\n{para}", 40) == [para, para]
    assert split_text(f"{para}\n{para}", 40) == [para, para]
    words = " ".join(["palavra"] * 20)
    parts = split_text(words, 40)
    assert all(len(p) <= 40 for p in parts)
    assert " ".join(parts) == words
    assert all(not p.startswith(" ") and not p.endswith(" ") for p in parts)


def test_a_word_longer_than_the_limit_is_cut() -> None:
    assert split_text("y" * 25, 10) == ["y" * 10, "y" * 10, "y" * 5]


def test_limit_counts_utf16_units_so_emoji_count_twice() -> None:
    text = "😀" * 10  # 20 UTF-16 units
    parts = split_text(text, 7)
    assert all(utf16_len(p) <= 7 for p in parts)
    assert "".join(parts) == text


def test_long_reply_round_trips_under_4096() -> None:
    text = "\n\n".join(f"Parágrafo {n}: " + "ação " * 300 for n in range(10))
    parts = split_text(text, 4096)
    assert len(parts) > 1
    assert all(utf16_len(p) <= 4096 for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(text.split())


def test_limit_must_be_usable() -> None:
    with pytest.raises(ValueError):
        split_text("abc", 1)
