"""conversation.search: what a person types becomes a pattern in which nothing is an operator,
accents and case fold, and a phone-like text also matches numbers by their digits."""

from __future__ import annotations

import re

import pytest

from conversation.search import MAX_CHARS, fold, literal_regex, search_patterns


def _matches(typed: str, stored: str) -> bool:
    # Python's `re` reads these expressions as Postgres' ARE does (escapes and classes only).
    return re.search(literal_regex(typed), stored, re.IGNORECASE) is not None


@pytest.mark.parametrize(
    ("typed", "stored", "found"),
    [
        ("joao", "João Araújo", True),
        ("JOÃO", "joao", True),
        ("araujo", "ARAÚJO", True),
        ("acao", "Ação", True),
        ("pix", "Vocês aceitam PIX?", True),
        ("50%", "tem 50% de desconto?", True),
        ("50%", "quero 500", False),
        ("a_b", "a_b", True),
        ("a_b", "axb", False),
        ("a.b", "axb", False),
        ("(11)", "(11) 9999", True),
        ("***=x", "***=x", True),
        ("(?i)x", "x", False),
        ("\\d", "5", False),
        ("[a]", "a", False),
        ("x|y", "y", False),
        ("ñandu", "Ñandú", True),
    ],
)
def test_what_is_typed_is_found_literally_whatever_the_accents(
    typed: str, stored: str, found: bool
) -> None:
    assert _matches(typed, stored) is found


def test_every_non_letter_is_escaped_so_nothing_is_an_operator() -> None:
    hostile = "(a+)+$^.*?{1000}[z-a]\\1|" * 4
    pattern = literal_regex(hostile[:MAX_CHARS])
    assert re.fullmatch(r"(\\.|\[[^\]]+\]|\w)*", pattern)
    assert _matches(hostile[:MAX_CHARS], "x" + hostile[:MAX_CHARS])


def test_a_phone_like_text_also_matches_numbers_by_digits() -> None:
    assert search_patterns("+55 (11) 97777-6666").number == "%5511977776666%"
    assert search_patterns("pedido 4242").number is None
    assert search_patterns("7").number is None
    assert fold("Ação É") == "acao e"
