"""Finds keyword phrases in a sequence of words in one pass (pure), linear in the words.

Phrases sharing a first word form *groups* of at most 64 phrases, each run as one bit-parallel
automaton (Shift-And over words: one bit per keyword word, and a second bit vector for "the
filler word is used"). A group's bit masks are keyed by each keyword word and its plurals
(a stem by ``stem*``, the number by ``#``; alternatives set the same bit under each key),
built the first time a message starts the group, then kept. A message word costs its
singulars (``singular_forms``), its *keys* (itself, then ``word[:n] + "*"`` for each stem
length n in use and ``#`` if it begins with a digit, kept only when some keyword uses them:
at most 1 + 14 + 1), and one *step* per live group: one mask lookup per key and a fixed
handful of operations on ints of at most 64 x 32 bits. A group is live only while one of its
first words (or a plural of it) occurred in the last ``longest phrase + 1`` words, and one
message word starts the groups of at most 5 plain first words (itself and up to 4 singulars)
plus one per stem length used by first words and one for ``#``, so ``steps <= words x
(longest phrase + 2) x widest``, with ``widest`` = that count x the groups of the most shared
first word (1 unless more than 64 phrases share one). No phrase is re-checked word
by word, so 100 phrases sharing 30 words (``a a ... a b1``...) cost two steps per message
word, where re-checking them cost 3,000.

Matching rules (turn.matcher.match's docstring) implemented here: whole words in order, each keyword
word also matching its plurals, stems, ``#`` and alternatives (keywords.patterns), one
filler word inside phrases of 3+ words, phrases of more than ``MAX_PHRASE_WORDS`` words never
found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from keywords.patterns import (
    STEM_MARK,
    Phrase,
    alternatives_of,
    is_special,
    matched_forms,
    special_keys,
)
from keywords.words import singular_forms
from skills.package.limits import MAX_KEYWORD_CHARS

# Keywords of this many words or more tolerate one filler word inside.
MIN_GAPPED_PHRASE_WORDS = 3
# A 64-character keyword has at most 32 words ("a b c ..."); longer phrases never match.
MAX_PHRASE_WORDS = (MAX_KEYWORD_CHARS + 1) // 2
# Phrases per automaton group: its bit vectors stay within 64 x 32 = 2048 bits, so the index's
# memory grows linearly with the keywords even when thousands share a first word.
_PHRASES_PER_GROUP = 64
# Distinct keyword word patterns whose matched forms stay cached.
_FORMS_CACHE_SIZE = 65_536
# A message word stands for itself and at most 4 singulars (papeis: papeil, papel, papil,
# papei), so it starts the groups of at most 5 plain first words (plus one per stem length
# and one for the number, when first words use them).
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
            for j, pattern in enumerate(phrase):
                bit = 1 << (offset + j)
                for form in _forms(pattern):
                    self.masks[form] = self.masks.get(form, 0) | bit
            end = offset + len(phrase) - 1
            self.first |= 1 << offset
            self.last |= 1 << end
            self.ends[end] = phrase
            if len(phrase) >= MIN_GAPPED_PHRASE_WORDS:
                self.gap |= ((1 << (len(phrase) - 1)) - 1) << offset
            offset += len(phrase)


@lru_cache(maxsize=_FORMS_CACHE_SIZE)
def _forms(pattern: str) -> tuple[str, ...]:
    """The keys that find a keyword word pattern: each alternative's word and its plurals, or
    its stem or number key."""
    return tuple(dict.fromkeys(f for a in alternatives_of(pattern) for f in matched_forms(a)))


class PhraseAutomaton:
    """Every phrase of a skill set, grouped by first word; `scan` reads a text's words once.

    Compiling only sorts phrases by first word (by each alternative of it; a stem or the
    number by its key); a group's bit masks are built the first time a message starts it and
    kept, so a large catalog compiles in one cheap pass.
    """

    __slots__ = (
        "_built",
        "_by_first",
        "_first_specials",
        "_numbers",
        "_specials",
        "_stem_lengths",
        "longest",
        "widest",
    )

    def __init__(self, phrases: Iterable[Phrase]) -> None:
        self._by_first: dict[str, list[Phrase]] = {}
        specials: set[str] = set()  # stem and number keys of every position
        for phrase in phrases:
            if len(phrase) > MAX_PHRASE_WORDS:
                continue
            for first in alternatives_of(phrase[0]):
                self._by_first.setdefault(first, []).append(phrase)
            specials.update(a for p in phrase for a in alternatives_of(p) if is_special(a))
        self._specials = frozenset(specials)
        self._first_specials = frozenset(k for k in self._by_first if is_special(k))
        self._stem_lengths = tuple(sorted({len(k) - 1 for k in specials if k != "#"}))
        self._numbers = "#" in specials
        self._built: dict[str, tuple[_Group, ...]] = {}
        self.longest = max((len(p) for m in self._by_first.values() for p in m), default=0)
        chunks = max((len(m) for m in self._by_first.values()), default=0)
        # At most this many groups start at one message word: its plain first words, plus one
        # stem key per stem length and the number key, when first words use them.
        starts = _MAX_FIRST_WORDS_PER_WORD + len(
            {len(k) for k in self._first_specials if k.endswith(STEM_MARK)}
        )
        starts += "#" in self._first_specials
        self.widest = starts * -(-chunks // _PHRASES_PER_GROUP)

    def _keys(self, word: str) -> tuple[str, ...]:
        """The keys a message word is looked up by: itself, then the stem and number keys of
        the index it stands for (at most 1 + 14 + 1)."""
        if not self._specials:
            return (word,)
        found = special_keys(word, self._stem_lengths, self._numbers)
        return (word, *(k for k in found if k in self._specials))

    def _started(self, word: str, keys: tuple[str, ...]) -> list[_Group]:
        """The groups whose first word is `word` or a singular of it, or one of its keys."""
        firsts: list[str] = [k for k in keys[1:] if k in self._first_specials]
        if word in self._by_first or word[-1:] == "s":
            firsts += (word, *singular_forms(word))
        started: list[_Group] = []
        for first in firsts:
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

    def starts(self, word: str) -> bool:
        """Whether message word `word` (as words_of reads it) starts a phrase of this index:
        a text none of whose words starts one has no phrase found in it."""
        return bool(self._started(word, self._keys(word)))

    def scan(self, words: Sequence[str]) -> tuple[set[Phrase], int]:
        """Phrases occurring in `words` (rules in the module docstring), and the steps taken."""
        live: dict[_Group, tuple[int, int]] = {}  # group -> (exact, gapped) after the last word
        pending: dict[_Group, int] = {}  # group -> last-word bits of phrases not found yet
        found: set[Phrase] = set()
        steps = 0
        for word in words:
            keys = self._keys(word)
            started = self._started(word, keys)
            if not live and not started:
                continue  # the common case: a word that starts nothing, nothing in flight
            todo = live
            live = {}
            for group in started:
                if pending.get(group) != 0:  # 0: every phrase of that group is found already
                    todo.setdefault(group, (0, 0))
            for group, (exact, gapped) in todo.items():
                steps += 1
                mask = 0
                for key in keys:
                    mask |= group.masks.get(key, 0)
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
