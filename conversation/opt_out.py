"""Whether a customer's message is an opt-out or opt-in word (pure: no I/O, no clock).

A message opts its contact out of templates and follow-ups (LGPD) when it is *only* one of the
opt-out words (a setting, SKILLET_OPT_OUT_WORDS: "PARAR", "STOP", "PARAR MENSAGENS", "SAIR DA
LISTA" by default), and back in when it is only one of the opt-in words (SKILLET_OPT_IN_WORDS,
"VOLTAR"). Accents, case, punctuation, emoji and spacing are ignored ("parar!!", "Sair da
lista.", " STOP 🙏"); anything else around the word makes it an ordinary message ("parar de
receber o quê?", "quero parar o pedido"), which the agent answers. A bare "SAIR" or "CANCELAR"
is not in the lists on purpose: customers send those about an order ("cancelar o pedido?").

Bounded: a message longer than MAX_CHOICE_CHARS characters is never a choice, and is not
normalized at all, so a hostile 1 MB message costs one length check.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

OptChoice = Literal["out", "in"]

# Longer than any sensible word list entry with its punctuation and emoji around it.
MAX_CHOICE_CHARS = 64

DEFAULT_OPT_OUT_WORDS = ("PARAR", "STOP", "PARAR MENSAGENS", "SAIR DA LISTA")
DEFAULT_OPT_IN_WORDS = ("VOLTAR",)

OPT_OUT_CONFIRMATION = (
    "Pronto: você não vai mais receber nossas mensagens automáticas (lembretes e avisos). "
    "Se mudar de ideia, é só mandar VOLTAR. Se precisar de algo, pode escrever por aqui "
    "normalmente."
)
OPT_IN_CONFIRMATION = (
    "Combinado: você voltou a receber nossos lembretes e avisos. Para parar, é só mandar PARAR."
)


def normalized(text: str) -> str:
    """Casefolded, without accents, every run of non-alphanumerics one space, trimmed."""
    decomposed = unicodedata.normalize("NFKD", text)
    letters = (c if c.isalnum() else " " for c in decomposed if not unicodedata.combining(c))
    return " ".join("".join(letters).casefold().split())


@dataclass(frozen=True)
class OptWords:
    """The opt-out and opt-in words, normalized once (settings are read at start-up)."""

    out: frozenset[str]
    back_in: frozenset[str]

    @classmethod
    def of(cls, out: Iterable[str], back_in: Iterable[str]) -> OptWords:
        out_set = frozenset(n for n in map(normalized, out) if n)
        in_set = frozenset(n for n in map(normalized, back_in) if n)
        if out_set & in_set:
            raise ValueError(f"a word is both opt-out and opt-in: {sorted(out_set & in_set)}")
        return cls(out_set, in_set)

    def choice_of(self, text: str) -> OptChoice | None:
        """'out', 'in', or None for an ordinary message."""
        if len(text) > MAX_CHOICE_CHARS:
            return None
        word = normalized(text)
        if word in self.out:
            return "out"
        if word in self.back_in:
            return "in"
        return None


DEFAULT_OPT_WORDS = OptWords.of(DEFAULT_OPT_OUT_WORDS, DEFAULT_OPT_IN_WORDS)


def confirmation(choice: OptChoice) -> str:
    return OPT_OUT_CONFIRMATION if choice == "out" else OPT_IN_CONFIRMATION
