"""Whether a customer's message asks for a person (pure: no I/O, no clock), read before any
model call so that a customer who asks for a human is handed off without the agent answering.

What counts (``asks_for_person`` is true):

- An explicit wish to talk to, or be served by, a person of the business: "quero falar com
  um atendente", "falar c/ atendente", "me passa pra uma pessoa", "me transfere pro
  atendente", "atendimento humano", "quero um humano", "preciso de um atendente", "cadê o
  atendente?", "quero falar com o gerente / o responsável / a dona / o financeiro", "quero ser
  atendida por uma pessoa", "me passa o contato de um atendente", and a line that is nothing
  but the word: "atendente", "HUMANO!!", "atendente pfv".
- Asking whether a person is there: "tem alguém aí?", "tem alguém aí de verdade?", "alguém
  pode me atender?", "vcs tem atendente?", "não tem ninguém aí?", "tô falando com uma
  pessoa?", "vc é humano?", "é robô ou pessoa?", "uma pessoa de verdade pfv".
- Refusing the bot: "não quero falar com robô", "chega de robô", "cansei desse robô",
  "robô não, por favor", "não quero resposta automática", "só tem robô aqui?".

What does not: a person named in another role or another sense. The attendant praised,
thanked, blamed or quoted ("o atendente foi ótimo", "a atendente me passou o preço errado",
"falei com a atendente ontem"); a job ("tem vaga de atendente?"); opening hours and service
("vocês atendem sábado?", "horário de atendimento", "atendimento humanizado"); "humano" as a
name or an adjective ("Humano Suplementos", "corpo humano", "errar é humano"); "pessoa" as a
count or a legal kind ("por pessoa", "pessoa jurídica", "outra pessoa vai buscar"); "a
gente" (we) and "gente," (folks); someone for a task ("tem alguém pra montar o móvel?");
talking about something or to someone else ("quero falar sobre o pedido", "vou falar com o
banco", "com meu marido"); and questions or jokes about the bot that neither ask for a
person nor refuse the bot ("é um robô? kkkk", "vc é robô?", "esse robô não entende nada"):
the agent answers those itself, and can offer a person.

Negation: a request whose verb is negated is not one. A negator (não, nem, nunca, jamais,
sem) directly before the frame's verb, or before a wish verb (quero, preciso, precisa, vou,
gostaria, ...) directly before it, cancels it, with "me", "eu", "mais", "mesmo", "ser" and
"de" allowed in between: "não quero falar com atendente", "não precisa me passar pra
ninguém", "não quero mais falar com atendente", "quero resolver sem falar com atendente".
Negation cancels the person word, not only one frame: "não precisa me passar pra uma pessoa
de verdade" does not ask by "pessoa de verdade" either. Not every "não" is a refusal: "não
consigo falar com um atendente" and "não tem atendente?" still ask (consigo and tem are not
wish verbs), and a negated bot ("não quero robô") is a refusal of the bot, so it asks.
Negation never crosses a clause: "não, quero falar com atendente" and "não quero robô, quero
uma pessoa" ask.

How it reads: the text's first ``MAX_MATCHED_TEXT_BYTES`` (8 KiB, the matcher's cut, so a
partial word at the cut is dropped the same way), then at most ``MAX_READ_WORDS`` words,
split into lines (a burst joins its messages with newlines) and clauses (at ``. , ; ! ?``),
each clause's words taken as the matcher takes them (``keywords.words.words_of``:
casefold, no accents, stretched letters once, WhatsApp abbreviations read: vc, pra, n, qro,
kero, dexa, to...). The spellings the matcher has no use for (atendende, hmn, algm, c/, cm,
kd, pfv, ...) live in conversation.handoff.vocabulary. A clause asks when one of its *person words*
(an attendant, a human, a person, someone, nobody, "gente", a role of the business, the bot)
stands in one of the *frames* of its kind (``HandoffRule``: the shapes listed under "What
counts", in conversation.handoff.frames), and none of its frames is negated. The first such person
word decides, by its first frame (``HandoffMatch`` names the frame and the words it spans,
for logs).

Not detected, on purpose: a person named by their first name ("queria falar com a Ju"). A
name is any word, and reading one would also hand off "falar com o banco"; the agent reads
those and can hand off through its tool.

Cost: linear in the words read, with no regular expression run on a customer's words
beyond the two splits (character classes, no backtracking) and ``words_of``. A word that is
no person word costs a few set look-ups (one bounded spelling check of at most 11 letters
for "atendente"); the frames of a person word read only words within ``CONTEXT_WORDS`` of it
and at most ``MAX_LOOKS_PER_ANCHOR`` of them (a budget enforced where they read), so the
whole text costs at most ``MAX_READ_WORDS x (MAX_LOOKS_PER_ANCHOR + 1)`` looks;
``handoff_work`` counts them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from conversation.handoff import vocabulary as v
from conversation.handoff.frames import (
    CONTEXT_WORDS,
    MAX_LOOKS_PER_ANCHOR,
    Clause,
    HandoffRule,
    anchor_request,
    person_kind_at,
)
from keywords.words import matched_text, words_of

__all__ = [
    "CONTEXT_WORDS",
    "MAX_LOOKS_PER_ANCHOR",
    "MAX_READ_WORDS",
    "HandoffMatch",
    "HandoffRule",
    "HandoffWork",
    "asks_for_person",
    "find_handoff_request",
    "handoff_work",
]

# A WhatsApp request for a person is a few words; 1,024 words (about 6 KiB of pt-BR) is
# already far past a burst, so the cap only bounds the work on pasted or hostile text.
MAX_READ_WORDS = 1024
# Lines (messages of a burst) and clauses; both are one character class, so linear.
_LINE_RE = re.compile(r"[^\n]+")
_CLAUSE_RE = re.compile(r"[^.,;!?]+")


@dataclass(frozen=True)
class HandoffMatch:
    """Why a text asks for a person: the frame and the (normalized) words it spans."""

    rule: HandoffRule
    phrase: str


@dataclass(frozen=True)
class HandoffWork:
    """What reading one text cost, in looks rather than seconds.

    Invariant: ``words <= MAX_READ_WORDS``, ``anchors <= words``, ``most_anchor_looks <=
    MAX_LOOKS_PER_ANCHOR`` and ``looks <= anchors x MAX_LOOKS_PER_ANCHOR + words`` (the last
    term: each line read once as a whole).
    """

    words: int  # words read, after the 8 KiB cut and the word cap
    anchors: int  # person words whose frames were tried
    looks: int  # words looked at: by the frames, and once each by the whole-line check
    most_anchor_looks: int  # the most the frames of one person word looked at


def _clause_request(c: Clause) -> tuple[HandoffMatch | None, int]:
    """The first person word of the clause that asks, and how many were tried."""
    anchors = 0
    for i in range(len(c.words)):
        kind = person_kind_at(c, i)
        if kind is None:
            continue
        anchors += 1
        c.read_around(i)
        hit = anchor_request(c, kind)
        if hit is not None:
            phrase = " ".join(c.words[hit.start : hit.end + 1])
            return HandoffMatch(hit.rule, phrase), anchors
    return None, anchors


def _alone(words: list[str]) -> HandoffMatch | None:
    """A line that is only an attendant or a human, and fillers ("atendente pfv")."""
    named = [w for w in words if w in v.HUMAN or v.is_attendant(w)]
    if named and all(w in v.FILLERS or w in v.HUMAN or v.is_attendant(w) for w in words):
        return HandoffMatch(HandoffRule.ALONE, " ".join(words))
    return None


def _lines(text: str) -> Iterator[list[list[str]]]:
    """The read part of `text` as lines of clauses of words, at most MAX_READ_WORDS in all."""
    left = MAX_READ_WORDS
    for line in _LINE_RE.finditer(matched_text(text)):
        clauses = []
        for clause in _CLAUSE_RE.finditer(line.group()):
            words = words_of(clause.group())[:left]
            left -= len(words)
            if words:
                clauses.append(words)
            if not left:
                break
        yield clauses
        if not left:
            return


def _read(text: str) -> tuple[HandoffMatch | None, HandoffWork]:
    words = anchors = looks = most = 0
    found: HandoffMatch | None = None
    for clauses in _lines(text):
        line = [w for clause in clauses for w in clause]
        words += len(line)
        looks += len(line)
        found = _alone(line)
        for clause_words in clauses:
            if found is not None:
                break
            clause = Clause(clause_words)
            found, tried = _clause_request(clause)
            anchors += tried
            looks += clause.looks
            most = max(most, clause.most_anchor_looks)
        if found is not None:
            break
    return found, HandoffWork(words, anchors, looks, most)


def find_handoff_request(text: str) -> HandoffMatch | None:
    """The frame by which `text` asks for a person, or None (rules in the module docstring)."""
    return _read(text)[0]


def asks_for_person(text: str) -> bool:
    """Whether `text` (a customer's message or burst) asks for a person of the business."""
    return find_handoff_request(text) is not None


def handoff_work(text: str) -> HandoffWork:
    """The work `asks_for_person(text)` does, counted (for tests and benches)."""
    return _read(text)[1]
