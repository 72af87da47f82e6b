"""Facts a model's text adds to its sources: numbers of 3+ digits, URLs, e-mails and phone
numbers that appear in none of them. Pure, bounded by the caller's text sizes.

A model that rewrites skills (consolidation's merged body, and the suggestions to come) may
reorder, shorten and merge instructions, but every price, code, link, address or phone it
writes must come from what it read: a rewrite that asks for a card's CVV at "pague-aqui.com"
or says "R$ 2.000" where the sources say "R$ 1.500" is refused. `new_facts(candidate,
sources)` lists what the candidate adds, as `kind:value` (empty: nothing new).

Compared after normalising: Unicode digits and compatibility forms folded (NFKC), so "１５００"
is 1500; a number by its value ("R$ 1.500,00", "1500", "1,500.00" are 1500; "1.5" is 1.5), and
only numbers whose whole part has 3+ digits count; a phone by its digits ("(11) 97777-6666"
is 11977776666), the same number with or without its country or area code being the same;
a URL by host and path, lower-cased host, without scheme, "www." or trailing "/"; an e-mail
lower-cased. Spelled-out numbers ("mil e quinhentos") and digits split by letters are not
seen: the rule stops a model's slip or a planted instruction, not an adversary who writes the
sources.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_TLDS = (
    "com|net|org|br|io|info|biz|co|app|dev|me|xyz|site|online|shop|store|link|ly|gl|to|cc|tk|"
    "top|club|pro|live|pay|bank|money|gov|edu|uk|pt|ar|mx|fr|ru|cn"
)
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>()\[\]{}\"'`]+"
    rf"|(?<![\w@.-])(?:[a-z0-9](?:[a-z0-9-]{{0,62}}[a-z0-9])?\.)+(?:{_TLDS})\b(?:/[^\s<>()\[\]{{}}\"'`]*)?",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]{1,63}(?:\.[\w-]{1,63})+")
_PHONE = re.compile(
    r"(?<![\w])(?:\+\s?\d{1,3}[\s.-]?)?(?:\(\d{2,3}\)[\s.-]?|\d{2,3}[\s.-])?\d{4,5}[\s.-]?\d{4}(?![\w])"
)
_NUMBER = re.compile(r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*(?:[.,]\d+)?|\d+(?:[.,]\d+)?")
_TRAILING = ".,;:!?'\")]}>"
MIN_NUMBER_DIGITS = 3
MIN_PHONE_DIGITS = 8  # a shorter suffix match is no proof of the same phone


@dataclass(frozen=True)
class Facts:
    urls: frozenset[str]
    emails: frozenset[str]
    phones: frozenset[str]  # digits
    numbers: frozenset[str]  # canonical values (see _number)


def new_facts(candidate: str, sources: Iterable[str]) -> list[str]:
    """What `candidate` states that no source does, as `kind:value`, in order found."""
    known = facts_of("\n".join(sources))
    text = _folded(candidate)
    found: list[str] = []
    text = _take(_URL, text, lambda u: _url(u) in known.urls, "url", _url, found)
    text = _take(_EMAIL, text, lambda e: e.lower() in known.emails, "email", str.lower, found)
    text = _take(_PHONE, text, lambda p: _known_phone(_digits(p), known), "phone", _digits, found)
    for match in _NUMBER.finditer(text):
        value = _number(match.group(0))
        if value is None or _whole_digits(value) < MIN_NUMBER_DIGITS:
            continue
        if value not in known.numbers and _digits(match.group(0)) not in known.phones:
            found.append(f"number:{value}")
    return list(dict.fromkeys(found))


def facts_of(text: str) -> Facts:
    """Every URL, e-mail, phone and number `text` states (numbers of any size)."""
    text = _folded(text)
    urls = {_url(m.group(0)) for m in _URL.finditer(text)}
    emails = {m.group(0).lower() for m in _EMAIL.finditer(text)}
    phones = {_digits(m.group(0)) for m in _PHONE.finditer(text)}
    numbers = {v for m in _NUMBER.finditer(text) if (v := _number(m.group(0))) is not None}
    numbers |= {_number(p) or p for p in phones}
    return Facts(frozenset(urls), frozenset(emails), frozenset(phones), frozenset(numbers))


def _take(
    pattern: re.Pattern[str],
    text: str,
    known: Callable[[str], bool],
    kind: str,
    shown: Callable[[str], str],
    found: list[str],
) -> str:
    """`text` with `pattern`'s matches blanked (so numbers inside are not judged twice); the
    ones `known` refuses appended to `found`."""

    def blank(match: re.Match[str]) -> str:
        fact = match.group(0).rstrip(_TRAILING)
        if fact and not known(fact):
            found.append(f"{kind}:{shown(fact)}")
        return " " * len(match.group(0))

    return pattern.sub(blank, text)


def _folded(text: str) -> str:
    """NFKC, every Unicode decimal digit as its ASCII digit, format characters (zero-width,
    bidi controls) dropped: what a reader sees, not how it is encoded."""
    text = unicodedata.normalize("NFKC", text)
    out = []
    for ch in text:
        if ch.isdecimal() and not ch.isascii():
            out.append(str(unicodedata.decimal(ch)))
        elif unicodedata.category(ch) != "Cf":
            out.append(ch)
    return "".join(out)


def _url(url: str) -> str:
    url = url.rstrip(_TRAILING).lower()
    for prefix in ("https://", "http://"):
        if url.startswith(prefix):
            url = url[len(prefix) :]
    if url.startswith("www."):
        url = url[4:]
    return url.rstrip("/")


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _known_phone(digits: str, known: Facts) -> bool:
    for phone in known.phones:
        shorter, longer = sorted((digits, phone), key=len)
        if len(shorter) >= MIN_PHONE_DIGITS and longer.endswith(shorter):
            return True
    return False


def _number(token: str) -> str | None:
    """The value of "1.500,00", "1,500.00", "1500", "1.500", "12,5" as a canonical text
    ("1500", "12.5": whole part without leading zeros, decimals without trailing ones),
    exact whatever its length; None if unreadable. One kind of separator before groups of
    three digits is thousands ("1.500", "1,500,000"); with both kinds the last is the
    decimal mark."""
    groups = re.split(r"[.,]", token)
    kinds = {ch for ch in token if ch in ".,"}
    if not kinds:
        whole, decimals = token, ""
    elif len(kinds) == 1 and all(len(g) == 3 for g in groups[1:]):
        whole, decimals = "".join(groups), ""
    elif len(kinds) == 1 and len(groups) > 2:
        return None  # "1.2.3": a version or a date, no amount
    else:
        whole, decimals = "".join(groups[:-1]), groups[-1]
    if not whole.isdigit() or (decimals and not decimals.isdigit()):
        return None
    whole, decimals = whole.lstrip("0") or "0", decimals.rstrip("0")
    return f"{whole}.{decimals}" if decimals else whole


def _whole_digits(value: str) -> int:
    whole = value.split(".", 1)[0]
    return 0 if whole == "0" else len(whole)
