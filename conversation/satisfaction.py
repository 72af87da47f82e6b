"""Satisfaction: after a person releases a conversation they answered, the customer gets one
question with three buttons; their tap is stored with whoever held it and is never answered
by the agent, and a text right after it is kept as its comment (and answered as usual). The
pure part: the question, its buttons' ids and scores, the settings' rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from delivery.outbound_choices import MAX_BUTTON_TITLE_CHARS, Choice, OutboundChoices

QUESTION: Final = "Como foi o seu atendimento? Toque numa opção."
DEFAULT_BUTTONS: Final = ("😀 Ótimo", "😐 Ok", "🙁 Ruim")
# The buttons' ids, best first, and the score each tap records (3 good .. 1 bad).
BUTTON_IDS: Final = ("satisfacao:otimo", "satisfacao:ok", "satisfacao:ruim")
SCORES: Final = {"satisfacao:otimo": 3, "satisfacao:ok": 2, "satisfacao:ruim": 1}
ID_PREFIX: Final = "satisfacao:"
MAX_COMMENT_CHARS: Final = 2000


def question_choices(buttons: Sequence[str]) -> OutboundChoices:
    """The question as a choices part: three reply buttons (WAHA: a numbered text)."""
    return OutboundChoices(
        QUESTION,
        tuple(Choice(i, t) for i, t in zip(BUTTON_IDS, buttons, strict=True)),
    )


def score_of(choice_id: str) -> int | None:
    """The score a tapped button records; None for an id that is none of ours."""
    return SCORES.get(choice_id)


class ButtonsRefused(ValueError):
    """The three texts break a rule: `message` says which, in pt-BR."""


def checked_buttons(texts: Sequence[str]) -> tuple[str, str, str]:
    """The three button texts trimmed, or ButtonsRefused: exactly three, each 1 to 20
    characters (Meta's button title), all different."""
    trimmed = tuple(" ".join(t.split()) for t in texts)
    if len(trimmed) != 3:
        raise ButtonsRefused("Informe exatamente três textos de botão (ótimo, ok, ruim).")
    for text in trimmed:
        if not 1 <= len(text) <= MAX_BUTTON_TITLE_CHARS:
            raise ButtonsRefused(
                f"Cada botão deve ter de 1 a {MAX_BUTTON_TITLE_CHARS} caracteres; "
                f"{text!r} tem {len(text)}."
            )
    if len({t.casefold() for t in trimmed}) != 3:
        raise ButtonsRefused("Os três botões precisam de textos diferentes.")
    return trimmed[0], trimmed[1], trimmed[2]
