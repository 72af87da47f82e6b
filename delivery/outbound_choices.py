"""Choices the customer taps (send_choices, the satisfaction question): their limits, how they
are stored on an outbox row, how WAHA shows them as a numbered text, and how a reply is read
as one of them (pure).

1-3 choices leave as WhatsApp reply buttons, 4-10 as a list (Meta's interactive `button` and
`list` messages, with Meta's lengths); WAHA has no buttons every phone shows, so there they go
as a numbered text and the customer's number (or the exact title) is read as the choice.
A tap reaches the model as `[escolheu: «Sexta 14h» (id: s1)]` (chosen_marker).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

MAX_CHOICES: Final = 10  # Meta's rows in one list message
MAX_BUTTONS: Final = 3  # Meta's reply buttons in one message
MAX_BUTTON_TITLE_CHARS: Final = 20
MAX_ROW_TITLE_CHARS: Final = 24
MAX_DESCRIPTION_CHARS: Final = 72
MAX_LIST_BUTTON_CHARS: Final = 20
MAX_TEXT_CHARS: Final = 1024  # Meta's interactive body.text
MAX_ID_CHARS: Final = 200  # Meta's list row id (a button id takes 256)
DEFAULT_LIST_BUTTON: Final = "Ver opções"
# The choices' own text when the reply's text already said what they are for.
CHOICES_PROMPT: Final = "Escolha uma opção:"
# Read as a choice: a reply of a number or a title, never a long message.
MAX_READ_CHARS: Final = 40
# What a customer's message must be to say "I choose this": a number, maybe with a dot or ")".
_NUMBER = re.compile(r"^\s*(\d{1,2})\s*[.)]?\s*$")
_MARKER = re.compile(r"^\[escolheu: «(?P<title>[^«»\[\]]*)» \(id: (?P<id>[^()\[\]]*)\)\]$")
# The options a message offered, as its stored body ends (history_note).
NOTE_START: Final = "\n\n[opções: "
_NOTE = re.compile(r"\n\n\[opções: (?P<items>[^\[\]]*)\]\Z")
_NOTE_ITEM = re.compile(r"«(?P<title>[^«»\[\]]*)» \(id: (?P<id>[^()\[\]]*)\)")


@dataclass(frozen=True)
class Choice:
    id: str
    title: str
    description: str | None = None


@dataclass(frozen=True)
class OutboundChoices:
    """One choices part of a reply (outbox.choices): its text and the options."""

    text: str
    choices: tuple[Choice, ...]
    button: str = DEFAULT_LIST_BUTTON  # the list's button label (buttons have none)

    def spoken_first(self) -> tuple[str, OutboundChoices]:
        """A reply with nothing to say but these choices: their text leads as the reply's
        text, and the choices follow under a short prompt (a fallback apology before
        them would tell the customer something went wrong when nothing did)."""
        return self.text, replace(self, text=CHOICES_PROMPT)

    @property
    def as_list(self) -> bool:
        """More than Meta's three buttons: a list message."""
        return len(self.choices) > MAX_BUTTONS

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "button": self.button,
            "choices": [
                {"id": c.id, "title": c.title, "description": c.description} for c in self.choices
            ],
        }

    @classmethod
    def from_json(cls, value: Any) -> OutboundChoices | None:
        """outbox.choices as stored (jsonb text, as asyncpg returns it, or decoded)."""
        if value is None:
            return None
        data = json.loads(value) if isinstance(value, str) else value
        choices = tuple(
            Choice(
                str(c["id"]),
                str(c["title"]),
                None if c.get("description") is None else str(c["description"]),
            )
            for c in data["choices"]
        )
        return cls(str(data["text"]), choices, str(data.get("button") or DEFAULT_LIST_BUTTON))

    def numbered_text(self) -> str:
        """WAHA's form: the text, then one numbered line per choice, then how to answer."""
        lines = [self.text, ""]
        for number, choice in enumerate(self.choices, start=1):
            line = f"{number}. {choice.title}"
            if choice.description:
                line += f" ({choice.description})"
            lines.append(line)
        lines += ["", "Responda com o número da opção."]
        return "\n".join(lines)


@dataclass(frozen=True)
class Refusal:
    """Why a set of choices cannot leave: a stable code and a pt-BR message for the model."""

    code: str
    message: str


def _folded(title: str) -> str:
    return unicodedata.normalize("NFC", " ".join(title.split())).casefold()


def refusal(text: str, choices: Sequence[Choice], button: str) -> Refusal | None:
    """The first rule `choices` break (None: they can leave as buttons or a list)."""
    if not 1 <= len(choices) <= MAX_CHOICES:
        return Refusal(
            "too_many_choices",
            f"São {len(choices)} opções; envie de 1 a {MAX_CHOICES} (até {MAX_BUTTONS} viram "
            "botões, de 4 a 10 uma lista).",
        )
    if not text.strip() or len(text) > MAX_TEXT_CHARS:
        return Refusal(
            "choice_text_invalid",
            f"O texto das opções deve ter de 1 a {MAX_TEXT_CHARS} caracteres; este tem "
            f"{len(text)}.",
        )
    title_max = MAX_BUTTON_TITLE_CHARS if len(choices) <= MAX_BUTTONS else MAX_ROW_TITLE_CHARS
    for choice in choices:
        found = _choice_refusal(choice, title_max, as_list=len(choices) > MAX_BUTTONS)
        if found is not None:
            return found
    if len({c.id for c in choices}) != len(choices):
        return Refusal("duplicate_choice_id", "Duas opções têm o mesmo id; use ids diferentes.")
    if len({_folded(c.title) for c in choices}) != len(choices):
        return Refusal(
            "duplicate_choice_title", "Duas opções têm o mesmo título; use títulos diferentes."
        )
    if len(choices) > MAX_BUTTONS and not 1 <= len(button.strip()) <= MAX_LIST_BUTTON_CHARS:
        return Refusal(
            "choice_button_too_long",
            f"O rótulo do botão da lista deve ter de 1 a {MAX_LIST_BUTTON_CHARS} caracteres.",
        )
    return None


def _choice_refusal(choice: Choice, title_max: int, *, as_list: bool) -> Refusal | None:
    if not choice.id.strip() or len(choice.id) > MAX_ID_CHARS:
        return Refusal(
            "choice_id_invalid", f"O id de cada opção deve ter de 1 a {MAX_ID_CHARS} caracteres."
        )
    if not choice.title.strip():
        return Refusal("choice_title_empty", "Toda opção precisa de um título.")
    if len(choice.title) > title_max:
        shape = "numa lista" if as_list else "num botão"
        return Refusal(
            "choice_title_too_long",
            f"O título {choice.title!r} tem {len(choice.title)} caracteres; {shape} cabem "
            f"{title_max}.",
        )
    if choice.description is not None:
        if not as_list:
            return Refusal(
                "choice_description_not_allowed",
                "Botões (até 3 opções) não têm descrição; tire a descrição ou ponha no texto.",
            )
        if len(choice.description) > MAX_DESCRIPTION_CHARS:
            return Refusal(
                "choice_description_too_long",
                f"A descrição de {choice.title!r} passa de {MAX_DESCRIPTION_CHARS} caracteres.",
            )
    return None


def marker_text(value: str) -> str:
    """A title as it goes inside the marker (« » [ ] replaced, so it cannot close the mark
    early; blanks folded); an id has its ( ) replaced too (chosen_marker)."""
    table = str.maketrans({"«": "‹", "»": "›", "[": "(", "]": ")"})
    return " ".join(value.translate(table).split())


def chosen_marker(title: str, choice_id: str) -> str:
    """How a tapped choice reaches the model: `[escolheu: «Sexta 14h» (id: s1)]`."""
    safe_id = _safe_id(choice_id)
    return f"[escolheu: «{marker_text(title)[: MAX_ROW_TITLE_CHARS * 4]}» (id: {safe_id})]"


def _safe_id(choice_id: str) -> str:
    return marker_text(choice_id).replace("(", "‹").replace(")", "›")[:MAX_ID_CHARS]


def history_note(offered: OutboundChoices) -> str:
    """What the message that carries `offered` keeps after its text (stored, never sent):
    `\n\n[opções: «Quinta 10h» (id: s1) · «Sexta 14h» (id: s2)]`. The conversation's history
    then shows the model what it offered, and a reply is read against it with no query."""
    items = " · ".join(f"«{marker_text(c.title)}» (id: {_safe_id(c.id)})" for c in offered.choices)
    return f"{NOTE_START}{items}]"


def offered_in(body: str) -> OutboundChoices | None:
    """The choices a stored message offered (its history_note), or None."""
    found = _NOTE.search(body[-(MAX_CHOICES * (MAX_ID_CHARS + 120)) :])
    if found is None:
        return None
    choices = tuple(Choice(m["id"], m["title"]) for m in _NOTE_ITEM.finditer(found["items"]))
    return OutboundChoices(body[: len(body) - len(found[0])], choices) if choices else None


def marker_choice(body: str) -> Choice | None:
    """The choice a stored marker names (a tap), or None for any other text."""
    found = _MARKER.match(body.strip())
    return None if found is None else Choice(found["id"], found["title"])


def read_choice(reply: str, offered: OutboundChoices) -> Choice | None:
    """A customer's reply read as one of `offered`: just its number, or exactly its title
    (case, accents' composition and spaces aside); None for anything else."""
    if len(reply) > MAX_READ_CHARS:
        return None
    number = _NUMBER.match(reply)
    if number is not None:
        index = int(number[1])
        return offered.choices[index - 1] if 1 <= index <= len(offered.choices) else None
    wanted = _folded(reply)
    return next((c for c in offered.choices if _folded(c.title) == wanted), None)
