"""Satisfaction's pure part: the question as three reply buttons, the score of each, and the
rules of the three texts a business may set."""

from __future__ import annotations

import pytest

from channels.interactive import interactive_message
from conversation.satisfaction import (
    DEFAULT_BUTTONS,
    ButtonsRefused,
    checked_buttons,
    question_choices,
    score_of,
)
from delivery.outbound_choices import read_choice


def test_the_question_goes_as_three_buttons_best_first() -> None:
    question = question_choices(DEFAULT_BUTTONS)
    body = interactive_message("5511", question)["interactive"]
    assert body["type"] == "button"
    assert [b["reply"]["title"] for b in body["action"]["buttons"]] == list(DEFAULT_BUTTONS)
    assert [score_of(c.id) for c in question.choices] == [3, 2, 1]
    assert score_of("s1") is None
    # WAHA: "3" is the worst answer.
    chosen = read_choice("3", question)
    assert chosen is not None and score_of(chosen.id) == 1


@pytest.mark.parametrize(
    ("texts", "why"),
    [
        (["a", "b"], "exatamente três"),
        (["a", "b", "c", "d"], "exatamente três"),
        (["x" * 21, "b", "c"], "de 1 a 20"),
        (["  ", "b", "c"], "de 1 a 20"),
        (["Bom", "bom", "c"], "diferentes"),
    ],
)
def test_button_texts_break_a_rule_in_portuguese(texts: list[str], why: str) -> None:
    with pytest.raises(ButtonsRefused, match=why):
        checked_buttons(texts)


def test_button_texts_are_trimmed() -> None:
    assert checked_buttons(["  Amei ", "Ok", "Não  gostei"]) == ("Amei", "Ok", "Não gostei")


def test_only_a_burst_after_a_possible_tap_looks_for_its_comment() -> None:
    from conversation.satisfaction import QUESTION
    from conversation.satisfaction_taps import follows_a_tap

    tap = "[escolheu: «😐 Ok» (id: satisfacao:ok)]"
    assert follows_a_tap([("outbound", QUESTION), ("inbound", tap)])
    assert follows_a_tap([("outbound", QUESTION), ("inbound", "2")])  # WAHA's number
    assert not follows_a_tap([("outbound", "Oi!"), ("inbound", "2")])
    assert not follows_a_tap([("inbound", "[escolheu: «Sexta 14h» (id: s2)]")])
    assert not follows_a_tap([("inbound", tap), ("outbound", "Obrigada!")])
    assert not follows_a_tap([])
