"""Keyword matching of an inbound message against installed skills (pure: no I/O, no clock).

Rules, the contract the turn and the tests rely on:

- A skill is *matched* (its body is injected) when one of its ``any_keywords`` occurs in the
  text. It is a *probe* (only recorded) when one of its ``probe_keywords`` occurs and none of
  its ``any_keywords`` does.
- Only the first ``MAX_MATCHED_TEXT_BYTES`` (8 KiB of UTF-8) of the text are read: a burst
  longer than that is matched on its start. When the cut falls inside a word, that partial
  word is dropped too (``precoce`` cut to ``preco`` must not hit ``preço``).
- Keywords and text are normalized alike: casefold, Unicode NFKD, combining marks dropped.
  So ``Não``/``nao``, ``preço``/``PRECO`` and ``2ª``/``2a`` compare equal.
- Both are split into words (``\\w+`` after normalization). A keyword matches whole words
  only: ``cep`` never matches inside ``exceção``, ``frete`` never matches ``fretado``. A
  multi-word keyword matches its words in order, with any run of non-word characters between
  them (``segunda via`` matches ``segunda-via`` and ``Segunda   via``). A keyword with no
  word characters (``""``, ``"!!"``) never matches, nor does one of more than
  ``MAX_PHRASE_WORDS`` (32) words (a package keyword has at most 64 characters, so at most 32
  words).
- Abbreviations: after normalization, a word of ``ABBREVIATIONS`` is read as the word it
  stands for, in keywords and messages alike: ``vc``/``vce`` -> ``voce``, ``q`` -> ``que``,
  ``pq`` -> ``porque``, ``tb``/``tbm`` -> ``tambem``, ``mt``/``mto`` -> ``muito``, ``ta``/``tah``
  (tá) -> ``esta`` (está), ``to``/``tou`` (tô) -> ``estou``, ``pra`` -> ``para``, ``n``/``naum``
  -> ``nao``, ``hj`` -> ``hoje``, ... So the keyword ``tá salgado`` matches ``está salgado``
  and ``ta salgado``, and ``muito puxado`` matches ``mto puxado``. Only whole words are
  replaced, one word by one word; ``esta`` (this) and ``está`` already compared equal.
- One filler word: a keyword of ``MIN_GAPPED_PHRASE_WORDS`` (3) or more words also matches
  when exactly one extra word stands between two of its consecutive words, once, anywhere
  inside the phrase: ``fora do orçamento`` matches ``fora do meu orçamento`` and ``fora, do
  meu... orçamento`` and ``fora mesmo do orçamento``, but not ``fora do meu próprio
  orçamento`` (two extra words together), ``fora meu do seu orçamento`` (one in each of two
  places) nor ``do fora orçamento`` (order). A keyword of one or two words never takes a
  filler word: ``segunda via`` does not match ``segunda e via``.
- Plurals: each keyword word also matches its simple Portuguese plural, derived from the
  normalized word: ``-ao`` -> ``-oes``/``-aes``/``-aos`` (cartão -> cartões, pão -> pães,
  mão -> mãos); ``-il`` -> ``-is``/``-eis`` (barril -> barris, fácil -> fáceis); other ``-l``
  -> ``-is`` (papel -> papéis); ``-m`` -> ``-ns`` (item -> itens); ``-r``/``-z``/``-s`` ->
  ``+es`` (valor -> valores, mês -> meses); ``-x`` and words ending in a digit get none (pix,
  tórax, 24); anything else ``+s`` (frete -> fretes, preço -> preços, cep -> ceps). It is one
  way: the keyword ``boletos`` does not match ``boleto``; write the singular. Irregular
  plurals (mal -> males) are not derived; list them as keywords when they matter.
- Order: ``matched`` by number of distinct ``any_keywords`` hits (after normalization)
  descending, then name ascending (code point order); ``max_matched`` keeps the first N and
  lists the rest, in the same order, in ``capped``. ``probes`` sorted by name. A skill name
  that appears twice in the input is taken from its first occurrence only.

Cost: linear in the message's words, whatever the keywords. The index (built once per skill
set: ``compile_matcher``, or the LRU of ``match_skills`` keyed by the skills' names and
matchers) puts the phrases sharing a first word into *groups* of at most 64 phrases, each run
as one bit-parallel automaton (Shift-And over words: one bit per keyword word, and a second
bit vector for "the filler word is used"). A group's bit masks are keyed by each keyword word
and its plurals, built the first time a message starts the group, then kept. A message word
costs its singulars (``singular_forms``), a few dict lookups, and one *step* per live group:
a fixed handful of operations on ints of at most 64 x 32 bits. A group is live only while one
of its first words (or a plural of it) occurred in the last ``longest phrase + 1`` words, and
one message word starts the groups of at most 5 first words (itself and up to 4 singulars),
so ``steps <= words x (longest phrase + 2) x widest``, with ``widest`` = 5 x the groups of
the most shared first word (1 unless more than 64 phrases share one); ``scan_work`` counts
them. No phrase is re-checked word by word, so 100 phrases sharing 30 words (``a a ... a
b1``...) cost two steps per message word, where they cost 3,000 before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from skills.models import LoadedSkill, SkillMatcher
from skills.package_limits import BYTES_PER_KIB, MAX_KEYWORD_CHARS

# A phrase is a keyword as its normalized words, e.g. ("segunda", "via").
Phrase = tuple[str, ...]
# What the compiled index depends on: each input skill's (name, matcher), in input order.
_ContentKey = tuple[tuple[str, SkillMatcher], ...]

# A burst's text is matched on its first 8 KiB (UTF-8): bounds the work whatever its length.
MAX_MATCHED_TEXT_BYTES = 8 * BYTES_PER_KIB
# Keywords of this many words or more tolerate one filler word inside.
MIN_GAPPED_PHRASE_WORDS = 3
# A 64-character keyword has at most 32 words ("a b c ..."); longer phrases never match.
MAX_PHRASE_WORDS = (MAX_KEYWORD_CHARS + 1) // 2
# Phrases per automaton group: its bit vectors stay within 64 x 32 = 2048 bits, so the index's
# memory grows linearly with the keywords even when thousands share a first word.
_PHRASES_PER_GROUP = 64

_WORD_RE = re.compile(r"\w+")
# WhatsApp abbreviations (normalized) -> the normalized word they stand for (one word each).
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
    }
)
# Last letters whose plural is "+es"; and those whose plural is not a plain "+s".
_ES_PLURAL_ENDINGS = frozenset("rzs")
_NOT_PLAIN_S_ENDINGS = frozenset("xlmrzs")
# Distinct skill-sets (orgs) whose compiled index stays warm in this process.
_INDEX_CACHE_SIZE = 16
# Distinct matchers whose normalized phrases stay cached (platform skills repeat across orgs).
_MATCHER_CACHE_SIZE = 8192
# Distinct keyword words whose plural forms stay cached.
_FORMS_CACHE_SIZE = 65_536
# A message word stands for itself and at most 4 singulars (papeis: papeil, papel, papil,
# papei), so it starts the groups of at most 5 first words.
_MAX_FIRST_WORDS_PER_WORD = 5
# A UTF-8 continuation byte is 0b10xxxxxx.
_UTF8_CONTINUATION_MASK = 0xC0
_UTF8_CONTINUATION = 0x80
# Every character takes at most 4 bytes of UTF-8: texts this short are never cut.
_MAX_UTF8_BYTES_PER_CHAR = 4


@dataclass(frozen=True)
class MatchResult:
    """Skills whose bodies go into this turn, probes to record, and matches cut by the cap."""

    matched: list[LoadedSkill]
    probes: list[str]
    capped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ScanWork:
    """What matching one text cost, in steps rather than seconds (bench/ measures seconds).

    Invariant: ``steps <= step_bound = words x (longest phrase + 2) x widest start``.
    """

    words: int  # message words read, after the 8 KiB cut
    steps: int  # group updates, each a fixed handful of int operations of <= 2048 bits
    hits: int  # distinct phrases found (each reported once)
    step_bound: int


def normalize_text(text: str) -> str:
    """Casefold, NFKD and drop combining marks: the form both keywords and messages take."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    if decomposed.isascii():
        return decomposed
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words_of(text: str) -> list[str]:
    """The words keywords and messages are compared by: normalized, abbreviations expanded."""
    return [ABBREVIATIONS.get(w, w) for w in _WORD_RE.findall(normalize_text(text))]


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


def _phrases(keywords: Sequence[str]) -> tuple[Phrase, ...]:
    """Normalized, deduplicated phrases of keywords, in first-seen order; empty ones dropped."""
    phrases: dict[Phrase, None] = {}  # a dict keeps first-seen order, unlike a set
    for keyword in keywords:
        phrase = tuple(words_of(keyword))
        if phrase:
            phrases[phrase] = None
    return tuple(phrases)


@lru_cache(maxsize=_MATCHER_CACHE_SIZE)
def _matcher_phrases(matcher: SkillMatcher) -> tuple[tuple[Phrase, ...], tuple[Phrase, ...]]:
    return _phrases(matcher.any_keywords), _phrases(matcher.probe_keywords)


def _phrase_owners(key: _ContentKey) -> tuple[dict[Phrase, list[int]], dict[Phrase, list[int]]]:
    """Phrase -> positions of the skills listing it in any_keywords, and in probe_keywords."""
    hard: dict[Phrase, list[int]] = {}
    probe: dict[Phrase, list[int]] = {}
    seen: set[str] = set()
    for position, (name, matcher) in enumerate(key):
        if name in seen:  # first occurrence wins
            continue
        seen.add(name)
        any_phrases, probe_phrases = _matcher_phrases(matcher)
        for phrase in any_phrases:
            hard.setdefault(phrase, []).append(position)
        for phrase in probe_phrases:
            probe.setdefault(phrase, []).append(position)
    return hard, probe


class _Group:
    """Phrases sharing a first word, laid out one after another in the bits of an int.

    Bit ``offset + j`` stands for word j of the phrase laid out at ``offset``. The automaton's
    state is two ints: ``exact`` (bit set: the phrase's words 0..j end at the current message
    word) and ``gapped`` (the same, with the one filler word inside).
    """

    __slots__ = ("ends", "first", "gap", "last", "masks")

    def __init__(self, phrases: Sequence[Phrase]) -> None:
        self.first = self.gap = self.last = 0  # bits of each phrase's first / last word
        # gap: the words after which a filler may come, 0..n-2 of phrases of 3+ words.
        self.masks: dict[str, int] = {}  # message word -> positions it fills
        self.ends: dict[int, Phrase] = {}  # index of a last-word bit -> its phrase
        offset = 0
        for phrase in phrases:
            for j, word in enumerate(phrase):
                bit = 1 << (offset + j)
                for form in _forms(word):
                    self.masks[form] = self.masks.get(form, 0) | bit
            end = offset + len(phrase) - 1
            self.first |= 1 << offset
            self.last |= 1 << end
            self.ends[end] = phrase
            if len(phrase) >= MIN_GAPPED_PHRASE_WORDS:
                self.gap |= ((1 << (len(phrase) - 1)) - 1) << offset
            offset += len(phrase)


@lru_cache(maxsize=_FORMS_CACHE_SIZE)
def _forms(word: str) -> tuple[str, ...]:
    """The message words a keyword word matches: itself and its plurals."""
    return (word, *plural_forms(word))


class _Automaton:
    """Every phrase of a skill set, grouped by first word; `scan` reads a text's words once.

    Compiling only sorts phrases by first word; a group's bit masks are built the first time a
    message starts it and kept, so a large catalog compiles in one cheap pass.
    """

    __slots__ = ("_built", "_by_first", "longest", "widest")

    def __init__(self, phrases: Iterable[Phrase]) -> None:
        self._by_first: dict[str, list[Phrase]] = {}
        for phrase in phrases:
            if len(phrase) <= MAX_PHRASE_WORDS:
                self._by_first.setdefault(phrase[0], []).append(phrase)
        self._built: dict[str, tuple[_Group, ...]] = {}
        self.longest = max((len(p) for m in self._by_first.values() for p in m), default=0)
        chunks = max((len(m) for m in self._by_first.values()), default=0)
        # At most this many groups start at one message word.
        self.widest = _MAX_FIRST_WORDS_PER_WORD * -(-chunks // _PHRASES_PER_GROUP)

    def _started(self, word: str) -> list[_Group]:
        """The groups whose first word is `word` or a singular of it."""
        if word not in self._by_first and word[-1:] != "s":
            return []  # the common case, without building a list of singulars
        started: list[_Group] = []
        for first in (word, *singular_forms(word)):
            members = self._by_first.get(first)
            if members is None:
                continue
            groups = self._built.get(first)
            if groups is None:
                chunks = range(0, len(members), _PHRASES_PER_GROUP)
                groups = tuple(_Group(members[lo : lo + _PHRASES_PER_GROUP]) for lo in chunks)
                self._built[first] = groups
            started.extend(groups)
        return started

    def scan(self, words: Sequence[str]) -> tuple[set[Phrase], int]:
        """Phrases occurring in `words` (rules in the module docstring), and the steps taken."""
        live: dict[_Group, tuple[int, int]] = {}  # group -> (exact, gapped) after the last word
        pending: dict[_Group, int] = {}  # group -> last-word bits of phrases not found yet
        found: set[Phrase] = set()
        steps = 0
        for word in words:
            started = self._started(word)
            if not live and not started:
                continue  # the common case: a word that starts nothing, nothing in flight
            todo = live
            live = {}
            for group in started:
                if pending.get(group) != 0:  # 0: every phrase of that group is found already
                    todo.setdefault(group, (0, 0))
            for group, (exact, gapped) in todo.items():
                steps += 1
                mask = group.masks.get(word, 0)
                # Filler: the exact prefix before this word, this word skipped (once only).
                gapped = ((gapped << 1) & mask) | (exact & group.gap)
                exact = ((exact << 1) | group.first) & mask
                left = pending.get(group, group.last)
                ended = (exact | gapped) & left
                if ended:
                    left ^= ended
                    pending[group] = left
                    found.update(_ended(group, ended))
                if (exact or gapped) and left:  # a finished group has nothing left to find
                    live[group] = (exact, gapped)
        return found, steps


def _ended(group: _Group, ended: int) -> Iterable[Phrase]:
    while ended:
        low = ended & -ended
        ended ^= low
        yield group.ends[low.bit_length() - 1]


class _KeywordIndex:
    """Keyword phrases of a list of skills, addressed by each skill's position in that list.

    It depends only on the (name, matcher) pairs, so one index serves any list with the same
    pairs in the same order, whatever their bodies or version ids.
    """

    __slots__ = ("automaton", "hard", "names", "probe")

    def __init__(self, key: _ContentKey) -> None:
        self.names = tuple(name for name, _ in key)
        self.hard, self.probe = _phrase_owners(key)
        self.automaton = _Automaton({**self.hard, **self.probe})

    def scan(self, text: str) -> tuple[set[Phrase], ScanWork]:
        words = words_of(matched_text(text))
        found, steps = self.automaton.scan(words)
        longest, widest = self.automaton.longest, self.automaton.widest
        bound = len(words) * (longest + 2) * widest
        return found, ScanWork(words=len(words), steps=steps, hits=len(found), step_bound=bound)


def _content_key(skills: Sequence[LoadedSkill]) -> _ContentKey:
    return tuple((s.name, s.matcher) for s in skills)


@lru_cache(maxsize=_INDEX_CACHE_SIZE)
def _cached_index(key: _ContentKey) -> _KeywordIndex:
    # Keyed by value (names and keyword tuples), so different keywords never share an index.
    return _KeywordIndex(key)


def _match(
    index: _KeywordIndex,
    skills: Sequence[LoadedSkill],
    text: str,
    max_matched: int | None,
) -> MatchResult:
    if max_matched is not None and max_matched < 0:
        raise ValueError(f"max_matched must be >= 0 or None, got {max_matched}")
    found, _ = index.scan(text)
    hard_counts: dict[int, int] = {}
    for phrase in found:
        for position in index.hard.get(phrase, ()):
            hard_counts[position] = hard_counts.get(position, 0) + 1
    probed = {p for phrase in found for p in index.probe.get(phrase, ()) if p not in hard_counts}
    names = index.names
    ranked = sorted(hard_counts, key=lambda p: (-hard_counts[p], names[p]))
    cut = len(ranked) if max_matched is None else max_matched
    return MatchResult(
        matched=[skills[p] for p in ranked[:cut]],
        probes=sorted(names[p] for p in probed),
        capped=[names[p] for p in ranked[cut:]],
    )


class CompiledMatcher:
    """A matcher compiled for one fixed list of skills, for a caller that caches it per org."""

    __slots__ = ("_index", "_skills")

    def __init__(self, skills: Sequence[LoadedSkill]) -> None:
        self._skills = tuple(skills)
        self._index = _KeywordIndex(_content_key(self._skills))

    def match(self, text: str, max_matched: int | None = None) -> MatchResult:
        return _match(self._index, self._skills, text, max_matched)

    def scan_work(self, text: str) -> ScanWork:
        """The work `match(text)` does, counted (for tests and benches; not on the turn path)."""
        return self._index.scan(text)[1]


def compile_matcher(skills: Sequence[LoadedSkill]) -> CompiledMatcher:
    """Compile the keyword index of `skills` once; `.match(text)` then costs per message only."""
    return CompiledMatcher(skills)


def match_skills(
    skills: Sequence[LoadedSkill], text: str, *, max_matched: int | None = None
) -> MatchResult:
    """Match `text` against `skills` (rules in the module docstring).

    `max_matched=None` injects every hard match, 0 injects none (all go to `capped`).
    """
    skills = tuple(skills)
    return _match(_cached_index(_content_key(skills)), skills, text, max_matched)
