"""What in a customer's question or a person's answer is somebody's data, and its removal. Pure.

One customer's data must never reach a skill every customer gets, while the business's own
facts (its Pix key, its address, its prices) are what the skill is for. So:

- Kinds of value (`Kind`): phone numbers, e-mails, CPF/CNPJ-like numbers, other numbers of 4
  or more digits (orders, tracking, CEPs, prices over 999), Pix copy-and-paste codes (EMV
  strings that start with 000201), URLs with a query string, street addresses and person's
  names (the customer's WhatsApp profile name, whole and its first name: `profile_names`; a
  name a customer gives for themselves: "meu nome é Joana", and the name a person greets a
  customer by: "Oi Joana,").
- In a question every value found is replaced by REMOVED (`redact_question`).
- In answers (`redact_answers`) a value is kept only when the same value (compared by its
  `key`: digits only for numbers, case-folded otherwise) appears in answers to at least two
  different customers and in no customer's own messages or profile; every other one is
  replaced. The reviewer may restore a removed one (`allowed`).
- A sentence of an answer that repeats 5 or more consecutive words of a customer's message is
  left out (`drop_echoed_sentences`): a person quoting the customer back.

Order of detection: spans are found kind by kind in PRIORITY order, and a later kind never
takes characters an earlier one took (a Pix code holds digits that are not a phone; a URL's
query holds an e-mail-like text that is the URL's).

Bounds (customer text and answers are hostile): each text is cut to MAX_TEXT_CHARS before it
is read, every pattern is linear with bounded repeats (no nested quantifiers), and the number
of texts one call reads is the caller's (a group's lessons are capped in suggestions.lessons).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

REMOVED = "[removido]"
MAX_TEXT_CHARS = 4_000  # of one message read: a WhatsApp message is rarely past 1,000
ECHO_WORDS = 5  # consecutive words of a customer's message that make a sentence an echo
MIN_ANSWERED_CUSTOMERS = 2  # a value kept in answers appears in answers to this many


class Kind(StrEnum):
    PIX_CODE = "pix_code"
    URL = "url"
    EMAIL = "email"
    CPF_CNPJ = "cpf_cnpj"
    PHONE = "phone"
    ADDRESS = "address"
    NUMBER = "number"
    NAME = "name"


# The CRC field (6304 + 4 hex) ends a code; a code cut before it ends at the next space.
_PIX = re.compile(r"000201[^\n]{0,600}?6304[0-9A-Fa-f]{4}|000201\S{8,512}")
_URL = re.compile(r"(?:https?://|www\.)[^\s?#]{1,256}\?[^\s]{1,512}", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}")
_CPF_CNPJ = re.compile(
    r"(?<![\w.])(?:\d{3}\.\d{3}\.\d{3}-?\d{2}|\d{2}\.\d{3}\.\d{3}/\d{4}-?\d{2}|\d{11}|\d{14})"
    r"(?![\w])"
)
_PHONE = re.compile(
    r"(?<![\w])(?:\+?55[\s.-]?)?(?:\(?\d{2}\)?[\s.-]?)?9?[\s.]?\d{4}[\s.-]?\d{4}(?![\w])"
)
# A street word, then its name up to its number (first choice, so two mentions of one
# address end alike), else up to four words of name.
_STREET = (
    r"\b(?:rua|r\.|avenida|av\.?|travessa|tv\.|alameda|al\.|estrada|rodovia|rod\.|"
    r"pra[çc]a|largo|quadra|qd\.?)\s+"
)
_ADDRESS = re.compile(
    _STREET + r"(?:[A-Za-zÀ-ÿ'.-]{1,40}\s+){0,6}?[A-Za-zÀ-ÿ'.-]{1,40},?\s*(?:n[º°o.]?\s*)?\d{1,6}\b"
    r"|" + _STREET + r"[A-Za-zÀ-ÿ'.-]{1,40}(?:\s+[A-Za-zÀ-ÿ'.-]{1,40}){0,3}",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<!\w)\d{5}-\d{3}(?!\w)|(?<![\w])\d{1,3}(?:[.,]\d{3})+(?:,\d{2})?(?![\w])|\d{4,}"
)
# A name a customer gives for themselves, and a name a person greets a customer by.
_NAME_WORD = r"[A-ZÀ-Ý][a-zà-ÿ]{1,20}"
_ANY_NAME_WORD = r"[A-Za-zÀ-ÿ][a-zà-ÿ]{1,20}"
_INTRO = re.compile(
    rf"(?i:meu nome [ée]|me chamo)\s+({_ANY_NAME_WORD}(?:\s{_NAME_WORD})?)"
    rf"|(?i:aqui [ée]|sou)\s+(?i:[oa]\s+)?({_NAME_WORD}(?:\s{_NAME_WORD})?)"
)
_GREETING = re.compile(
    rf"\b(?i:oi|ol[áa]|bom dia|boa tarde|boa noite|obrigad[oa]),?\s+"
    rf"({_NAME_WORD}(?:\s{_NAME_WORD})?)\b"
)
_DIGITS = re.compile(r"\d")
_PROFILE_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,40}(?![^\W\d_])")  # a word of letters
MAX_PROFILE_CHARS = 256
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
_WORD = re.compile(r"\w+")

# Names never taken from a greeting: words that follow "oi"/"bom dia" in a sentence start.
_NOT_NAMES = frozenset(
    {
        "tudo",
        "bem",
        "pessoal",
        "gente",
        "amigo",
        "amiga",
        "querido",
        "querida",
        "senhor",
        "senhora",
        "sim",
        "claro",
        "obrigado",
        "obrigada",
        "aqui",
        "tem",
        "temos",
        "pode",
    }
)


@dataclass(frozen=True)
class Found:
    kind: Kind
    start: int
    end: int
    value: str

    @property
    def key(self) -> str:
        return value_key(self.kind, self.value)


@dataclass(frozen=True)
class Removal:
    """A value taken out of an answer (or kept in it), as the draft lists it."""

    kind: Kind
    value: str
    key: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind.value, "value": self.value, "key": self.key}


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def value_key(kind: Kind, value: str) -> str:
    """How two occurrences of a value compare: digits for numbers, folded text otherwise."""
    if kind in (Kind.PHONE, Kind.CPF_CNPJ, Kind.NUMBER):
        digits = "".join(_DIGITS.findall(value))
        if kind is Kind.PHONE and len(digits) > 11 and digits.startswith("55"):
            digits = digits[2:]  # +55 is the country, not the number
        return f"{kind.value}:{digits}"
    return f"{kind.value}:{' '.join(fold(value).split())}"


def profile_names(profile_name: str | None) -> list[str]:
    """The names a customer's WhatsApp profile name stands for in what people write: the
    whole name, and its first word when it is a word of 3+ letters ("Ana Souza": "Ana
    Souza", "Ana"); emoji and symbols around it are no part of it."""
    if not profile_name:
        return []
    words = _PROFILE_WORD.findall(profile_name[:MAX_PROFILE_CHARS])
    if not words:
        return []
    whole = " ".join(words)
    return [whole] if len(words) == 1 or len(words[0]) < 3 else [whole, words[0]]


def names_in(text: str) -> list[str]:
    """Names a customer gives for themselves ("meu nome é Joana")."""
    return [m.group(1) or m.group(2) for m in _INTRO.finditer(text[:MAX_TEXT_CHARS])]


def find_values(text: str, names: Iterable[str] = ()) -> list[Found]:
    """Every value of `text` (cut to MAX_TEXT_CHARS), by position; `names` are known names
    (profile names, names customers gave) found wherever they stand as whole words."""
    text = text[:MAX_TEXT_CHARS]
    taken: list[Found] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            group = match.lastindex or 0  # a name pattern's name; the whole match otherwise
            _take(taken, Found(kind, match.start(group), match.end(group), match.group(group)))
    for name in names:
        name = name.strip()
        if len(name) < 2:
            continue
        for match in re.finditer(rf"(?<!\w){re.escape(name[:60])}(?!\w)", text, re.IGNORECASE):
            _take(taken, Found(Kind.NAME, match.start(), match.end(), match.group()))
    return sorted(taken, key=lambda f: f.start)


def _take(taken: list[Found], found: Found) -> None:
    if found.kind is Kind.NAME and fold(found.value).split()[0] in _NOT_NAMES:
        return
    if found.kind is Kind.PHONE and len(_DIGITS.findall(found.value)) < 8:
        return
    if any(found.start < t.end and t.start < found.end for t in taken):
        return
    taken.append(found)


def redact_question(text: str, names: Iterable[str] = ()) -> tuple[str, list[Found]]:
    """A customer's message with every value replaced by REMOVED, and what was removed."""
    found = find_values(text, names)
    return _replace(text[:MAX_TEXT_CHARS], found, keep=frozenset()), found


@dataclass(frozen=True)
class AnswerText:
    customer: str  # whose question it answers (a conversation id's text)
    text: str


@dataclass(frozen=True)
class RedactedAnswers:
    texts: list[str]  # in the order given
    removed: list[Removal]  # distinct by key, first seen first
    kept: list[Removal]


def redact_answers(
    answers: Sequence[AnswerText],
    customer_texts: Sequence[str],
    names: Iterable[str] = (),
    allowed: Iterable[str] = (),
) -> RedactedAnswers:
    """Answers with each value kept or removed by the rule of the module docstring; `allowed`
    are keys a reviewer restored (kept whatever the rule says); `names` the customers' names."""
    name_list = list(names)
    per_answer = [find_values(a.text, name_list) for a in answers]
    customers_of: dict[str, set[str]] = {}
    for answer, found in zip(answers, per_answer, strict=True):
        for f in found:
            customers_of.setdefault(f.key, set()).add(answer.customer)
    theirs = {f.key for t in customer_texts for f in find_values(t, name_list)}
    theirs |= {value_key(Kind.NAME, n) for n in name_list}
    keep = frozenset(
        key
        for key, customers in customers_of.items()
        if len(customers) >= MIN_ANSWERED_CUSTOMERS and key not in theirs
    ) | frozenset(allowed)
    removed: dict[str, Removal] = {}
    kept: dict[str, Removal] = {}
    for found in per_answer:
        for f in found:
            into = kept if f.key in keep else removed
            into.setdefault(f.key, Removal(f.kind, f.value, f.key))
    texts = [
        _replace(a.text[:MAX_TEXT_CHARS], f, keep) for a, f in zip(answers, per_answer, strict=True)
    ]
    return RedactedAnswers(texts, list(removed.values()), list(kept.values()))


def _replace(text: str, found: Sequence[Found], keep: frozenset[str]) -> str:
    out: list[str] = []
    at = 0
    for f in found:
        if f.key in keep:
            continue
        out.append(text[at : f.start])
        out.append(REMOVED)
        at = f.end
    out.append(text[at:])
    return "".join(out)


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(fold(text[:MAX_TEXT_CHARS]))
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def drop_echoed_sentences(answer: str, customer_texts: Sequence[str]) -> str:
    """`answer` without each sentence that repeats ECHO_WORDS or more consecutive words of
    one of `customer_texts` (a person quoting the customer back, with the customer's data)."""
    theirs: set[tuple[str, ...]] = set()
    for text in customer_texts:
        theirs |= _ngrams(text, ECHO_WORDS)
    kept = [
        s
        for s in _SENTENCE.findall(answer[:MAX_TEXT_CHARS])
        if not (_ngrams(s, ECHO_WORDS) & theirs)
    ]
    return "".join(kept).strip()


_PATTERNS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.PIX_CODE, _PIX),
    (Kind.URL, _URL),
    (Kind.EMAIL, _EMAIL),
    (Kind.CPF_CNPJ, _CPF_CNPJ),
    (Kind.PHONE, _PHONE),
    (Kind.ADDRESS, _ADDRESS),
    (Kind.NUMBER, _NUMBER),
    (Kind.NAME, _INTRO),
    (Kind.NAME, _GREETING),
)
