"""Finds keyword phrases in a sequence of words in one pass (pure), linear in the words.

Phrases sharing a first word form *groups* of at most 64 phrases, each run as one bit-parallel
automaton (Shift-And over words: one bit per keyword word, and a second bit vector for "the
filler word is used"). A group's bit masks are keyed by each keyword word and its plurals,
built the first time a message starts the group, then kept. A message word costs its
singulars (``singular_forms``), a few dict lookups, and one *step* per live group: a fixed
handful of operations on ints of at most 64 x 32 bits. A group is live only while one of its
first words (or a plural of it) occurred in the last ``longest phrase + 1`` words, and one
message word starts the groups of at most 5 first words (itself and up to 4 singulars), so
``steps <= words x (longest phrase + 2) x widest``, with ``widest`` = 5 x the groups of the
most shared first word (1 unless more than 64 phrases share one). No phrase is re-checked word
by word, so 100 phrases sharing 30 words (``a a ... a b1``...) cost two steps per message
word, where re-checking them cost 3,000.

Matching rules (turn.matcher's docstring) implemented here: whole words in order, each keyword
word also matching its plurals, one filler word inside phrases of 3+ words, phrases of more
than ``MAX_PHRASE_WORDS`` words never found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from skills.package_limits import MAX_KEYWORD_CHARS
from turn.matcher_words import plural_forms, singular_forms

# A phrase is a keyword as its words (turn.matcher_words.words_of), e.g. ("segunda", "via").
Phrase = tuple[str, ...]

# Keywords of this many words or more tolerate one filler word inside.
MIN_GAPPED_PHRASE_WORDS = 3
# A 64-character keyword has at most 32 words ("a b c ..."); longer phrases never match.
MAX_PHRASE_WORDS = (MAX_KEYWORD_CHARS + 1) // 2
# Phrases per automaton group: its bit vectors stay within 64 x 32 = 2048 bits, so the index's
# memory grows linearly with the keywords even when thousands share a first word.
_PHRASES_PER_GROUP = 64
# Distinct keyword words whose plural forms stay cached.
_FORMS_CACHE_SIZE = 65_536
# A message word stands for itself and at most 4 singulars (papeis: papeil, papel, papil,
# papei), so it starts the groups of at most 5 first words.
_MAX_FIRST_WORDS_PER_WORD = 5


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


class PhraseAutomaton:
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
