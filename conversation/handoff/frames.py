"""The frames of conversation.handoff.request (pure): how a person word of a clause, read with
the words around it, asks for a person, and how a negator cancels that.

The rules are stated once, in the docstring of conversation.handoff.request; this module is their
implementation. A frame takes the clause and the position of one person word and returns
the words that make it a request (a ``Hit``), or None; ``anchor_request`` runs the frames of
the word's kind and applies negation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from conversation.handoff import vocabulary as v

# How far from its person word a frame reads: "não quero mais falar com um atendente" puts
# the negator six words before "atendente", the farthest any frame needs.
CONTEXT_WORDS = 6
# Context words the frames of one person word may read, a hard stop (a look past it reads
# ""): they take at most 45 on the corpus and on the hostile texts, which
# tests/hostile/test_hostile_handoff.py holds under half of it, so the stop never decides;
# it makes each word read cost at most this many looks whatever a frame does.
MAX_LOOKS_PER_ANCHOR = 128


class HandoffRule(StrEnum):
    """The frame that decided (stable names, for logs and metrics)."""

    TALK = "talk"  # falar com um atendente
    TRANSFER = "transfer"  # me passa pra uma pessoa
    CALL = "call"  # quero um atendente, cadê o humano
    PRESENCE = "presence"  # tem alguém aí?, vcs tem atendente?
    HERE = "here"  # alguém aí?, alguém pode me atender?
    REAL = "real"  # uma pessoa de verdade
    IS_HUMAN = "is_human"  # vc é humano?, é robô ou pessoa?
    SERVICE = "service"  # atendimento humano, ser atendido por uma pessoa
    CONTACT = "contact"  # o contato de um atendente
    ALONE = "alone"  # a line that is only "atendente" or "humano" (and pfv...)
    REFUSE_BOT = "refuse_bot"  # não quero robô, chega de robô


@dataclass(frozen=True)
class Hit:
    rule: HandoffRule
    start: int  # first and last word of the frame, in the clause
    end: int
    head: int | None  # the verb a negator would cancel; None: never negated


class Clause:
    """One clause's words, read by the frames of one person word (the anchor) at a time, the
    looks they take counted and limited to ``CONTEXT_WORDS`` either side of the anchor and
    ``MAX_LOOKS_PER_ANCHOR`` in all."""

    __slots__ = ("anchor", "anchor_looks", "looks", "most_anchor_looks", "words")

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.anchor = 0
        self.anchor_looks = 0
        self.looks = 0
        self.most_anchor_looks = 0

    def read_around(self, i: int) -> None:
        """Let the frames of the person word at `i` read its context, with a fresh budget."""
        self.anchor = i
        self.anchor_looks = 0

    def at(self, j: int) -> str:
        """The word at `j`; "" outside the clause, the anchor's reach, or its budget."""
        if not 0 <= j < len(self.words) or abs(j - self.anchor) > CONTEXT_WORDS:
            return ""
        if self.anchor_looks >= MAX_LOOKS_PER_ANCHOR:
            return ""
        self.anchor_looks += 1
        self.looks += 1
        self.most_anchor_looks = max(self.most_anchor_looks, self.anchor_looks)
        return self.words[j]

    def before(self, j: int, skip: frozenset[str]) -> int:
        """The nearest position before `j` whose word is not in `skip` (< 0: none)."""
        k = j - 1
        while (word := self.at(k)) and word in skip:
            k -= 1
        return k

    def after(self, j: int, skip: frozenset[str]) -> int:
        k = j + 1
        while (word := self.at(k)) and word in skip:
            k += 1
        return k

    def ends_at(self, j: int) -> bool:
        return j == len(self.words) - 1


Frame = Callable[[Clause, int], Hit | None]


def _talk(c: Clause, i: int) -> Hit | None:
    """falar / conversar / resolver com (um) <person>; "tô falando com uma pessoa?"."""
    k = c.before(i, v.DETERMINERS)
    if c.at(k) not in v.WITH:
        return None
    if c.words[i] in v.PEOPLE and k != i - 1:
        return None  # "com a gente" is "with us"
    at = c.before(k, v.ADVERBS)  # "falar direto com o dono"
    verb = c.at(at)
    if verb in v.TALK_VERBS or (verb == "falando" and c.at(at - 1) in v.PRESENT_AUXILIARIES):
        return Hit(HandoffRule.TALK, at, i, head=at)
    return None


def _transfer(c: Clause, i: int) -> Hit | None:
    """(me) passa / transfere / encaminha pra (um) <person>; "me passa um atendente"."""
    k = c.before(i, v.DETERMINERS)
    word = c.at(k)
    if word in v.TO:
        verb = c.before(k, frozenset({"me", "nos", "logo", "agora", "ja"}))
        if c.at(verb) in v.TRANSFER_VERBS:
            return Hit(HandoffRule.TRANSFER, verb, i, head=verb)
    elif word in v.TRANSFER_VERBS and c.at(k - 1) == "me" and k < i - 1:
        return Hit(HandoffRule.TRANSFER, k - 1, i, head=k - 1)
    return None


_WHERE_IS = frozenset({"cade", "cad", "kd", "kde"})
_NEED = frozenset({"preciso", "precisava", "precisamos", "precisando"})
_I_AM = frozenset({"estou", "tou", "eu"})
# "como (se) chama o atendente?" asks a name.
_NAMING = frozenset({"como", "se", "qual"})
_DEFINITE = frozenset({"o", "a", "os", "as"})


def _call(c: Clause, i: int) -> Hit | None:
    """quero / preciso de / chama / cadê (um) atendente or humano; "chama alguém / o dono";
    "quero uma pessoa" (with nothing after it but "aí", "pra me atender"...)."""
    k = c.before(i, v.DETERMINERS)
    verb = c.at(k)
    if verb == "de" and c.at(k - 1) in _NEED:
        k -= 1
        verb = c.at(k)
    if verb == "precisando" and c.at(k - 1) not in _I_AM:
        return None  # "vcs tão precisando de atendente?" is a job
    word = c.words[i]
    allowed = v.SUMMON_VERBS if word in v.SOMEONE or word in v.STAFF else v.CALL_VERBS
    if verb not in allowed or (verb in v.SUMMON_VERBS and c.at(k - 1) in _NAMING):
        return None
    # "quero uma pessoa" asks; "preciso de uma pessoa pra montar" is a fitter.
    if word in v.PERSON and (verb in _NEED or not _is_here(c, i + 1)):
        return None
    # "quero a Humano de 900g" is the brand; only "cadê o humano" takes "o"/"a".
    if word in v.HUMAN and c.at(i - 1) in _DEFINITE and verb not in _WHERE_IS:
        return None
    return Hit(HandoffRule.CALL, k, i, head=k)


def _serves(c: Clause, j: int) -> bool:
    """A word that makes someone a person to talk to: "pra (me) atender", "pra falar"."""
    if c.at(j) in ("me", "mim"):
        j += 1
    word = c.at(j)
    if word in v.HELP_VERBS:  # "pra me ajudar aí?", not "pra me ajudar a montar"
        return c.ends_at(j) or c.at(j + 1) in v.HERE
    return word in v.SERVE_VERBS


def _is_here(c: Clause, j: int) -> bool:
    """What may follow someone who is asked for: the clause's end, "aí", "online", "pra
    me atender", "ou" (or a robot)."""
    if c.ends_at(j - 1):
        return True
    word = c.at(j)
    return word in v.HERE or (word == "para" and _serves(c, j + 1))


_ALWAYS_PRESENT = frozenset({"attendant", "human"})


def _presence(c: Clause, i: int) -> Hit | None:
    """tem (algum) atendente / humano?; tem alguém / gente / uma pessoa aí?"""
    k = c.before(i, v.DETERMINERS)
    if c.at(k) not in v.HAVE:
        return None
    if _kind(c.words[i]) in _ALWAYS_PRESENT or _is_here(c, i + 1):
        return Hit(HandoffRule.PRESENCE, k, i, head=None)  # "não tem ninguém aí?" asks too
    return None


_CAN = frozenset({"pode", "poderia", "podia", "consegue", "vai"})


def _here(c: Clause, i: int) -> Hit | None:
    """A clause that opens with someone: "alguém aí?", "alguém??", "alguém (pode) me
    atende(r)?", "ninguém vai me responder?"."""
    if c.before(i, v.DETERMINERS) >= 0:
        return None
    if c.ends_at(i) and c.words[i] not in v.ATTENDANT_KINDS:
        return Hit(HandoffRule.HERE, i, i, head=None)  # "alguém??" ("atendente": a line)
    nxt = c.at(i + 1)
    if nxt in v.HERE and c.ends_at(i + 1):
        return Hit(HandoffRule.HERE, i, i + 1, head=None)
    j = i + 2 if nxt in _CAN else i + 1
    if c.at(j) == "me" and c.at(j + 1) in v.SERVE_VERBS:
        return Hit(HandoffRule.HERE, i, j + 1, head=None)
    return None


def _real(c: Clause, i: int) -> Hit | None:
    """(uma) pessoa / alguém / um humano de verdade, real."""
    nxt = c.at(i + 1)
    if (nxt == "de" and c.at(i + 2) in v.REAL) or nxt in v.REAL_ADJECTIVES:
        start = c.before(i, v.DETERMINERS) + 1
        return Hit(HandoffRule.REAL, start, i + 1, head=start)
    return None


_AFTER_IS = frozenset({"ou", "mesmo", "ne", "ai", "ae"})


def _is_human(c: Clause, i: int) -> Hit | None:
    """(vc) é humano / uma pessoa / gente?, with the one answering as the subject."""
    k = c.before(i, v.DETERMINERS)
    if c.at(k) not in v.IS:
        return None
    if k - 1 >= 0 and c.at(k - 1) not in v.INTERLOCUTORS:
        return None  # "errar é humano"
    if c.ends_at(i) or c.at(i + 1) in _AFTER_IS:
        return Hit(HandoffRule.IS_HUMAN, max(k - 1, 0), i, head=None)
    return None


_OR_SKIP = v.DETERMINERS | v.WITH


def _or_robot(c: Clause, i: int) -> Hit | None:
    """A person set against the bot: "é robô ou pessoa?", "humano ou robô?"."""
    k = c.before(i, _OR_SKIP)
    if c.at(k) == "ou":
        robot = c.before(k, _OR_SKIP)
        if c.at(robot) in v.ROBOT:
            return Hit(HandoffRule.IS_HUMAN, robot, i, head=None)
    k = c.after(i, _OR_SKIP)
    if c.at(k) == "ou":
        robot = c.after(k, _OR_SKIP)
        if c.at(robot) in v.ROBOT:
            return Hit(HandoffRule.IS_HUMAN, i, robot, head=None)
    return None


def _described(c: Clause, noun: int) -> bool:
    """Whether the noun and its adjective describe instead of asking: "o atendimento humano
    de vocês é ótimo", "que atendimento humano e carinhoso"."""
    before = c.at(noun - 1)
    opens = noun - 1 == 0 and before in _DEFINITE
    return opens or before in v.DESCRIBING or c.at(noun + 2) in v.DESCRIPTION_GOES_ON


def _service(c: Clause, i: int) -> Hit | None:
    """atendimento / suporte / atendente humano; ser atendido por uma pessoa."""
    before = c.at(i - 1)
    if c.words[i] in v.HUMAN and (before in v.SERVICE_NOUNS or v.is_attendant(before)):
        if _described(c, i - 1):
            return None
        return Hit(HandoffRule.SERVICE, i - 1, i, head=i - 1)
    k = c.before(i, v.DETERMINERS)
    # "ser atendido por": the wish; "fui atendido por um atendente" is the past.
    if c.at(k) in v.BY and c.at(k - 1) in v.SERVED and c.at(k - 2) == "ser":
        return Hit(HandoffRule.SERVICE, k - 1, i, head=k - 1)
    return None


def _contact(c: Clause, i: int) -> Hit | None:
    """o contato / número / whats de um atendente, do gerente."""
    k = c.before(i, v.DETERMINERS)
    if c.at(k) in v.OF and c.at(k - 1) in v.CONTACT_NOUNS:
        return Hit(HandoffRule.CONTACT, k - 1, i, head=k - 1)
    return None


# Refusal verbs that refuse only when negated: "não aguento mais", "não gosto de".
_NEGATED_REFUSALS = frozenset({"aguento", "suporto", "gosto"})
_STOP = frozenset({"para", "parar", "pare"})


def _refuses(c: Clause, j: int) -> bool:
    """Whether the word at `j` begins a refusal of what follows it."""
    word = c.at(j)
    if word in v.REFUSALS:
        return word not in _NEGATED_REFUSALS or c.at(j - 1) in v.NEGATORS
    if word in v.NEGATORS:
        return word == "sem" or c.at(j + 1) in v.WISH_VERBS
    return word in _STOP and c.at(j + 1) == "de"


_PLEASE = frozenset({"por", "pfv", "pf", "pfvr", "quero", "obrigado", "obrigada", "valeu"})


def _refuse_bot(c: Clause, i: int) -> Hit | None:
    """não quero (falar com) robô, chega de robô, robô não, só tem robô?"""
    j = i - 1
    while c.at(j):
        if _refuses(c, j):
            return Hit(HandoffRule.REFUSE_BOT, j, i, head=None)
        j -= 1
    if c.at(i + 1) == "nao" and (c.ends_at(i + 1) or c.at(i + 2) in _PLEASE):
        return Hit(HandoffRule.REFUSE_BOT, i, i + 1, head=None)
    k = c.before(i, v.DETERMINERS)
    if c.at(k) in v.HAVE | v.IS:
        k -= 1
    if c.at(k) in v.ONLY:
        return Hit(HandoffRule.REFUSE_BOT, k, i, head=None)
    return None


_FRAMES: dict[str, tuple[Frame, ...]] = {
    "attendant": (_talk, _transfer, _call, _presence, _here, _real, _service, _contact),
    "human": (_service, _talk, _transfer, _call, _presence, _here, _real, _is_human, _or_robot),
    "person": (_talk, _transfer, _call, _presence, _real, _is_human, _or_robot, _service),
    "someone": (_talk, _transfer, _call, _presence, _here, _real, _service, _contact),
    "nobody": (_talk, _presence, _here),  # "não consigo falar com ninguém"
    "people": (_talk, _presence, _real, _is_human, _or_robot),
    "staff": (_talk, _transfer, _call, _presence, _service, _contact),
    "robot": (_refuse_bot,),
}


def _kind(word: str) -> str | None:
    """Which kind of person word `word` is, if any."""
    for kind, words in (
        ("human", v.HUMAN),
        ("person", v.PERSON),
        ("someone", v.SOMEONE),
        ("nobody", v.NOBODY),
        ("people", v.PEOPLE),
        ("staff", v.STAFF),
        ("robot", v.ROBOT),
    ):
        if word in words:
            return kind
    return "attendant" if v.is_attendant(word) else None


def person_kind_at(c: Clause, i: int) -> str | None:
    """The kind of the person word at `i`, unless what follows makes it the bot
    ("atendente virtual")."""
    kind = _kind(c.words[i])
    if kind == "attendant" and i + 1 < len(c.words) and c.words[i + 1] in v.NOT_A_PERSON:
        return None
    return kind


def _negated(c: Clause, head: int) -> bool:
    """A negator before the frame's verb, or before the wish verb(s) just before it."""
    k = head - 1
    while word := c.at(k):
        if word in v.NEGATORS:
            return True
        if word not in v.WISH_VERBS and word not in v.NEGATION_GAP:
            return False
        k -= 1
    return False


def anchor_request(c: Clause, kind: str) -> Hit | None:
    """The first frame of the person word at ``c.anchor`` that asks, unless one of its
    frames is negated: "não precisa me passar pra uma pessoa de verdade" negates the person,
    not only the transfer."""
    first: Hit | None = None
    for frame in _FRAMES[kind]:
        hit = frame(c, c.anchor)
        if hit is None:
            continue
        if hit.head is not None and _negated(c, hit.head):
            return None
        first = first or hit
    return first
