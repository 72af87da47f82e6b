"""A reply cut by the model's output cap, trimmed to its last full sentence (pure).

A model that hits its output cap (`ModelResponse.truncated`) stops mid-word; sending that
reads as broken. `trim_to_sentence` keeps the text up to the last sentence end followed by
more text, or the last line break (list items, paragraphs), whichever comes later:
- ends: `.`, `!`, `?`, `…` (and runs like `?!` or `...`), with the closers right after them
  (`)`, `"`, `*`) and emoji-only words (`😊`) kept, followed by white space;
- not ends: a period after a pt-BR abbreviation (`Sr.`, `Dra.`, `Av.`, `nº.`, `p.ex.`,
  `aprox.`, single initials like `J.`), inside a number (`R$ 1.200,00`, `3.5`: no space
  follows; and a number at the very end, which the cut may have split: `R$ 1.`), or after a
  list number at the start of a line (`1. Boleto`); `etc.` ends a sentence only when the
  next word starts with a capital letter;
- nothing to keep (no end, no line break): the text is cut at its last space and ends in
  `…`, so the customer sees it goes on rather than a half word.
"""

from __future__ import annotations

import re

from turn.model import ModelResponse

ELLIPSIS = "…"
# The end mark, closers glued to it, then emoji-only words after it (kept with the sentence).
_END = re.compile(r"[.!?…]+[^\s\w]*(?:[ \t]+[^\s\w]+)*(?=\s)")
_WORD_BEFORE = re.compile(r"(\S+)$")
# Lowercase, without the final period. Titles, addresses, units, months and weekdays, Latin
# shorthands; not those that are also words that end sentences ("mar", "ter", "no").
ABBREVIATIONS = frozenset(
    {
        "sr", "sra", "srta", "srs", "sras", "dr", "dra", "drs", "dras", "prof", "profa",
        "eng", "exmo", "exma", "av", "r", "rod", "n", "nº", "núm", "num", "pág", "pg",
        "p", "tel", "cel", "fone", "ex", "p.ex", "obs", "aprox", "máx", "mín", "max", "min",
        "ltda", "cia", "s.a", "s/a", "dept", "depto", "apto", "ap", "bl", "qd", "lt", "km",
        "vs", "i.e", "e.g", "cf", "op", "vol", "cap", "art", "inc", "jan", "fev", "abr",
        "jun", "jul", "ago", "set", "out", "nov", "dez", "seg", "qua", "qui", "sex",
        "sáb", "dom",
    }
)  # fmt: skip
_CLOSERS = ")]}\"'”’»*_~"


def trims_reply(response: ModelResponse) -> bool:
    """The agent loop trims this answer's text: cut by the output cap, a text reply."""
    return response.truncated and not response.tool_calls and bool((response.text or "").strip())


def trim_to_sentence(text: str) -> str:
    """`text` (cut by the output cap) up to its last full sentence; see the module docstring."""
    text = text.rstrip()
    if _ends_sentence(text):
        return text
    end = max(_last_sentence_end(text), _last_line_end(text))
    if end > 0:
        return text[:end].rstrip()
    space = text.rfind(" ")
    kept = text[:space].rstrip(" ,;:-–—") if space > 0 else text
    return kept + ELLIPSIS


def _ends_sentence(text: str) -> bool:
    stripped = text.rstrip(_CLOSERS)
    return stripped.endswith((".", "!", "?", ELLIPSIS)) and _is_end(text, len(stripped) - 1, "")


def _last_sentence_end(text: str) -> int:
    """Index just past the last sentence end followed by more text, or 0."""
    for match in reversed(list(_END.finditer(text))):
        following = text[match.end() :].lstrip()
        if _is_end(text, match.start(), following):
            return match.end()
    return 0


def _last_line_end(text: str) -> int:
    """Index of the last line break that ends a non-empty line, or 0."""
    index = text.rfind("\n")
    while index > 0 and not text[:index].strip():
        index = text.rfind("\n", 0, index)
    return max(index, 0)


def _is_end(text: str, mark: int, following: str) -> bool:
    """Whether the punctuation at `mark` ends a sentence, given the text after it."""
    if text[mark] != ".":
        return True  # ! ? … always end
    if text[mark - 1 : mark + 1] == "..":
        return True
    found = _WORD_BEFORE.search(text[:mark])
    if found is None:
        return False
    word = found.group(1).lstrip("([\"'“*_~").lower()
    if word == "etc":
        return not following or following[0].isupper()
    if not following and word[-1:].isdigit():
        return False  # the cut may have stopped at a thousands separator: "R$ 1."
    if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return False
    line_start = text.rfind("\n", 0, found.start()) + 1
    return not (word.isdigit() and not text[line_start : found.start()].strip())
