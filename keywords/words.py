"""How keywords and messages become words (pure): normalization, stretched letters, WhatsApp
spellings, simple pt-BR plurals, and the cut of a long text to its first 8 KiB.

The rules themselves are stated once, in the docstring of turn.matcher.match; this module is their
implementation and is re-exported there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType

from core.units import BYTES_PER_KIB

# A burst's text is matched on its first 8 KiB (UTF-8): bounds the work whatever its length.
MAX_MATCHED_TEXT_BYTES = 8 * BYTES_PER_KIB

_WORD_RE = re.compile(r"\w+")
# Below this many characters, marks are dropped character by character (a message); above,
# by one regex of the marks the text holds (many bursts read together).
_SHORT_TEXT_CHARS = 4096
# A letter written three or more times in a row ("muitooo", "siiim", "kkkk"): one is kept.
# Digits are left alone (1000), and doubled letters (carro, voo) are real spelling.
_STRETCHED_RE = re.compile(r"([^\W\d_])\1{2,}")
# WhatsApp abbreviations and common misspellings (normalized) -> the normalized word they
# stand for (one word each).
ABBREVIATIONS: Mapping[str, str] = MappingProxyType(
    {
        "vc": "voce",
        "vce": "voce",
        "vcs": "voces",
        "q": "que",
        "pq": "porque",
        "tb": "tambem",
        "tbm": "tambem",
        "mt": "muito",
        "mto": "muito",
        "mta": "muita",
        "ta": "esta",
        "tah": "esta",
        "to": "estou",
        "tou": "estou",
        "pra": "para",
        "n": "nao",
        "naum": "nao",
        "hj": "hoje",
        "qnd": "quando",
        "qdo": "quando",
        "qto": "quanto",
        "msm": "mesmo",
        "td": "tudo",
        "agr": "agora",
        "dps": "depois",
        "qnto": "quanto",
        "qnt": "quanto",
        "nd": "nada",
        "pd": "pode",
        "vo": "vou",
        "hr": "hora",
        "hrs": "horas",
        "vg": "vaga",
        "qro": "quero",
        "qero": "quero",
        "kero": "quero",
        "qria": "queria",
        "qeria": "queria",
        "keria": "queria",
        "dexa": "deixa",
        "dxa": "deixa",
        "kro": "caro",
        "caru": "caro",
        "dezconto": "desconto",
        "ajendar": "agendar",
        "orario": "horario",
    }
)
# Last letters whose plural is "+es"; and those whose plural is not a plain "+s".
_ES_PLURAL_ENDINGS = frozenset("rzs")
_NOT_PLAIN_S_ENDINGS = frozenset("xlmrzs")
# A UTF-8 continuation byte is 0b10xxxxxx.
_UTF8_CONTINUATION_MASK = 0xC0
_UTF8_CONTINUATION = 0x80
# Every character takes at most 4 bytes of UTF-8: texts this short are never cut.
_MAX_UTF8_BYTES_PER_CHAR = 4


def normalize_text(text: str) -> str:
    """Casefold, NFKD and drop combining marks: the form both keywords and messages take."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    if decomposed.isascii():
        return decomposed
    if len(decomposed) < _SHORT_TEXT_CHARS:
        return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    # A long text (a rehearsal reads many bursts at once): each distinct character asked
    # once, then one regex pass, instead of one call per character.
    marks = sorted(ch for ch in set(decomposed) if unicodedata.combining(ch))
    if not marks:
        return decomposed
    return re.sub(f"[{''.join(marks)}]", "", decomposed)


def unstretched(word: str) -> str:
    """A letter written three or more times in a row, written once ("muitooo" -> "muito")."""
    return _STRETCHED_RE.sub(r"\1", word) if len(word) > 2 else word


def read_word(word: str) -> str:
    """A normalized word as it is compared: unstretched, then an abbreviation read."""
    word = unstretched(word)
    return ABBREVIATIONS.get(word, word)


def words_of(text: str) -> list[str]:
    """The words messages (and plain keywords) are compared by (rules in turn.matcher.match)."""
    # Unstretched once over the whole text: a run of one letter never crosses a word's end,
    # so this reads every word as read_word does, in one regex pass instead of one per word.
    plain = _STRETCHED_RE.sub(r"\1", normalize_text(text))
    return [ABBREVIATIONS.get(w, w) for w in _WORD_RE.findall(plain)]


def _is_word_part(ch: str) -> bool:
    # Combining marks count: normalization drops them, so they never split a word.
    return ch.isalnum() or ch == "_" or unicodedata.combining(ch) != 0


def matched_text(text: str) -> str:
    """The part of `text` that is matched: at most its first MAX_MATCHED_TEXT_BYTES of UTF-8,
    cut between characters and never inside a word (a word the cut splits is dropped)."""
    if len(text) * _MAX_UTF8_BYTES_PER_CHAR <= MAX_MATCHED_TEXT_BYTES:
        return text
    # Lone surrogates can come from JSON: carry them through instead of failing.
    data = text[:MAX_MATCHED_TEXT_BYTES].encode("utf-8", "surrogatepass")
    if len(data) <= MAX_MATCHED_TEXT_BYTES and len(text) <= MAX_MATCHED_TEXT_BYTES:
        return text
    cut = min(len(data), MAX_MATCHED_TEXT_BYTES)
    while cut < len(data) and data[cut] & _UTF8_CONTINUATION_MASK == _UTF8_CONTINUATION:
        cut -= 1  # back to the first byte of the character the cut splits
    kept = data[:cut].decode("utf-8", "surrogatepass")
    end = len(kept)
    if end < len(text) and _is_word_part(text[end]):
        while end and _is_word_part(kept[end - 1]):
            end -= 1
    return kept[:end]


def plural_forms(word: str) -> tuple[str, ...]:
    """Simple Portuguese plurals of a normalized word (see the module docstring)."""
    last = word[-1:]
    if not last.isalpha() or last == "x":
        return ()
    if word.endswith("ao"):
        stem = word[:-2]
        return (stem + "oes", stem + "aes", stem + "aos")
    if word.endswith("il"):
        return (word[:-1] + "s", word[:-2] + "eis")
    if last == "l":
        return (word[:-1] + "is",)
    if last == "m":
        return (word[:-1] + "ns",)
    if last in _ES_PLURAL_ENDINGS:
        return (word + "es",)
    return (word + "s",)


def singular_forms(word: str) -> tuple[str, ...]:
    """Every `s` with `word in plural_forms(s)`: the exact inverse of `plural_forms`.

    The index expands keyword words with `plural_forms` instead (a message word is then looked
    up as it is); this inverse says which keyword words a message word can stand for, and a
    test holds the two rules equal.
    """
    if not word.endswith("s"):
        return ()
    found: list[str] = []
    if word.endswith(("oes", "aes", "aos")):
        found.append(word[:-3] + "ao")  # cartoes, paes, maos
    if word.endswith("is"):
        found.append(word[:-1] + "l")  # barris -> barril
        if word[-3:-2] != "i":  # "-il" words never take "-l" -> "-is"
            found.append(word[:-2] + "l")  # papeis -> papel
    if word.endswith("eis"):
        found.append(word[:-3] + "il")  # faceis -> facil
    if word.endswith("ns"):
        found.append(word[:-2] + "m")  # itens -> item
    if word.endswith("es") and word[-3:-2] in _ES_PLURAL_ENDINGS:
        found.append(word[:-2])  # valores, luzes, meses
    stem = word[:-1]
    last = stem[-1:]
    if last.isalpha() and last not in _NOT_PLAIN_S_ENDINGS and not stem.endswith("ao"):
        found.append(stem)  # fretes, ceps
    return tuple(found)
