"""What a change of skills would have done to an org's customer bursts (pure: no I/O).

Contract: for each burst, its text is matched as the turn matches it (turn.matcher, the first
8 KiB, the catalog's intent models, the per-turn cap `max_matched`) against the installed set
(`before`) and the changed one (`after`); a burst is
- *gained* when it matched no skill before and some skill after,
- *lost* when it matched some skill before and none after,
- *moved* when it matched before and after, by a different set of skill names,
- *probes_served* (a part of gained) when before only a probe keyword of it was seen.

Cost, the reason for the shape: a naive replay matches every burst twice against every skill.
Here a burst is matched (once, against the union of both sets) only when its result *can*
differ, i.e. when a skill whose matcher changed (removed, added, or new keywords) can match it:
- the bursts' words are read with one `words_of` call over all their matched parts joined by
  a separator word (words never span a line, so the words are the same, read at C speed);
- each distinct word is asked once whether it starts a keyword phrase of the changed skills
  (`CompiledMatcher.starts_keyword`: the phrase automaton's own first-word look-up); only
  bursts holding such a word are candidates;
- each candidate is then matched against the changed skills alone (a small matcher), and
  only the bursts they match, by keyword, probe or intent, are matched against the union;
- when an intent model applies to a changed skill (a catalog skill as shipped), it can match
  a burst without a keyword: every other burst's words are asked to the model (once per
  distinct word list); the slow case, as the model reads each burst's features.
A burst no changed skill can match has the same result before and after: every other skill's
hits, their order and the cap are the same in both sets.

The union: the changed skills' `after` versions are renamed `name + "\\x00"` (which no skill
name holds, and which sorts exactly where `name` does against every other name), with their
intent models keyed under that name, so one `match` ranks both versions and each set's result
is the union's ranking with the other set's versions left out, then cut by the cap.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from skills.models import LoadedSkill
from turn.matcher import compile_matcher, matched_text, words_of
from turn.matcher.intent_model import IntentModels, keywords_sha256, shipped_intent_models
from turn.skill_index import render_skill_index

# Samples kept per kind (the answer's contract): a few gained, every lost one up to 50.
MAX_GAINED_SAMPLES = 10
MAX_LOST_SAMPLES = 50
# A sample's text, in characters: enough to recognize the message, bounded in the answer.
SAMPLE_TEXT_CHARS = 300
# Stands between bursts in the one text their words are read from: ASCII letters and digits,
# no letter three times in a row and no abbreviation, so words_of keeps it as it is. A burst
# that holds it itself is noticed (a count off by one) and the words are read burst by burst.
_SEPARATOR_WORD = "0skilletrehearsalsep0"
_RENAMED = "\x00"


@dataclass(frozen=True)
class Burst:
    """Customer messages the turn answered together; `message_id` names the burst."""

    message_id: str
    text: str


@dataclass(frozen=True)
class Sample:
    message_id: str
    text: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "message_id": self.message_id,
            "text": self.text,
            "before": list(self.before),
            "after": list(self.after),
        }


@dataclass(frozen=True)
class Outcome:
    messages: int
    gained: int = 0
    lost: int = 0
    moved: int = 0
    probes_served: int = 0
    index_bytes_before: int = 0
    index_bytes_after: int = 0
    gained_samples: tuple[Sample, ...] = ()
    lost_samples: tuple[Sample, ...] = ()
    # Bursts matched against the union (a measure of the work, for tests and the bench).
    replayed: int = field(default=0, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "messages": self.messages,
            "gained": self.gained,
            "lost": self.lost,
            "moved": self.moved,
            "probes_served": self.probes_served,
            "index_bytes_before": self.index_bytes_before,
            "index_bytes_after": self.index_bytes_after,
            "samples": {
                "gained": [s.to_json() for s in self.gained_samples],
                "lost": [s.to_json() for s in self.lost_samples],
            },
        }


def rehearse(
    bursts: Sequence[Burst],
    before: Sequence[LoadedSkill],
    after: Sequence[LoadedSkill],
    *,
    max_matched: int | None,
    intent_models: IntentModels | None = None,
) -> Outcome:
    """What `after` instead of `before` would have done to `bursts` (module docstring)."""
    models = shipped_intent_models() if intent_models is None else intent_models
    before, after = _first_of_each(before), _first_of_each(after)
    changed_before, changed_after = _changed(before, after)
    counts = _Counts(messages=len(bursts))
    if changed_before or changed_after:
        union = _Union(before, changed_before, changed_after, models)
        for index in _candidates(bursts, union):
            counts.add(bursts[index], *union.results(bursts[index].text, max_matched))
    return counts.outcome(_index_bytes(before), _index_bytes(after))


def _first_of_each(skills: Sequence[LoadedSkill]) -> tuple[LoadedSkill, ...]:
    """The skills with a name taken from its first occurrence only (as the matcher reads)."""
    seen: dict[str, LoadedSkill] = {}
    for skill in skills:
        seen.setdefault(skill.name, skill)
    return tuple(seen.values())


def _changed(
    before: Sequence[LoadedSkill], after: Sequence[LoadedSkill]
) -> tuple[tuple[LoadedSkill, ...], tuple[LoadedSkill, ...]]:
    """The skills whose matching differs: gone, new, or with other keywords (a new body or
    description matches the same messages)."""
    old = {s.name: s.matcher for s in before}
    new = {s.name: s.matcher for s in after}
    return (
        tuple(s for s in before if new.get(s.name) != s.matcher),
        tuple(s for s in after if old.get(s.name) != s.matcher),
    )


def _index_bytes(skills: Sequence[LoadedSkill]) -> int:
    return len(render_skill_index(skills).encode("utf-8"))


class _Union:
    """One matcher for the unchanged skills and both versions of the changed ones, and one
    for the changed ones alone (which bursts can differ)."""

    def __init__(
        self,
        before: Sequence[LoadedSkill],
        changed_before: Sequence[LoadedSkill],
        changed_after: Sequence[LoadedSkill],
        models: IntentModels,
    ) -> None:
        renamed = tuple(replace(s, name=s.name + _RENAMED) for s in changed_after)
        union_models = _renamed_models(models, changed_after)
        self.old_names = frozenset(s.name for s in changed_before)
        self.new_names = frozenset(s.name for s in renamed)
        self.matcher = compile_matcher((*before, *renamed), intent_models=union_models)
        self.changed = compile_matcher((*changed_before, *renamed), intent_models=union_models)

    def results(
        self, text: str, max_matched: int | None
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """(matched before, matched after, probes before) of `text`, as the turn cuts them."""
        union = self.matcher.match(text)
        ranked = [s.name for s in union.matched]
        matched_before = [n for n in ranked if n not in self.new_names]
        matched_after = [n.removesuffix(_RENAMED) for n in ranked if n not in self.old_names]
        probes_before = tuple(n for n in union.probes if n not in self.new_names)
        cut = len(ranked) if max_matched is None else max_matched
        return tuple(matched_before[:cut]), tuple(matched_after[:cut]), probes_before


def _renamed_models(models: IntentModels, renamed_from: Iterable[LoadedSkill]) -> IntentModels:
    """`models`, plus each renamed skill's model under its new name (same keywords)."""
    extra = {}
    for skill in renamed_from:
        key = (skill.name, keywords_sha256(skill.matcher))
        if key in models:
            extra[(skill.name + _RENAMED, key[1])] = models[key]
    if not extra:
        return models
    return MappingProxyType({**models, **extra})


def _candidates(bursts: Sequence[Burst], union: _Union) -> list[int]:
    """Indexes of the bursts whose result can differ, in order (module docstring): those
    holding a word that starts a changed skill's phrase (every burst, when a changed skill
    has an intent model), kept when the changed skills alone match them."""
    flat, starts, ends = _words(bursts)
    starting = {w for w in set(flat) if union.changed.starts_keyword(w)}
    hits = {bisect_right(starts, i) - 1 for i, word in enumerate(flat) if word in starting}
    finds = union.changed.finds_keyword
    found = {i for i in hits if finds(flat[starts[i] : ends[i]])}
    if union.changed.has_intent_models:
        # The models read only the words: bursts of the same words share one answer.
        accepts = union.changed.intent_accepts
        verdicts: dict[tuple[str, ...], bool] = {}
        for i in range(len(bursts)):
            if i in found:
                continue
            words = tuple(flat[starts[i] : ends[i]])
            verdict = verdicts.get(words)
            if verdict is None:
                verdict = verdicts[words] = accepts(words)
            if verdict:
                found.add(i)
    return sorted(found)


def _words(bursts: Sequence[Burst]) -> tuple[list[str], list[int], list[int]]:
    """Every burst's matched words in one list, and where each burst's words start and end
    (burst i's words are ``flat[starts[i]:ends[i]]``; a separator word lies between)."""
    joined = f"\n{_SEPARATOR_WORD}\n".join(matched_text(b.text) for b in bursts)
    flat = words_of(joined)
    cuts = [i for i, word in enumerate(flat) if word == _SEPARATOR_WORD]
    if len(cuts) == len(bursts) - 1 or not bursts:
        return flat, [0, *(c + 1 for c in cuts)], [*cuts, len(flat)]
    # A burst held the separator word: read them one by one (same words, slower).
    flat, starts, ends = [], [], []
    for burst in bursts:
        starts.append(len(flat))
        flat.extend(words_of(matched_text(burst.text)))
        ends.append(len(flat))
    return flat, starts, ends


@dataclass
class _Counts:
    messages: int
    gained: int = 0
    lost: int = 0
    moved: int = 0
    probes_served: int = 0
    replayed: int = 0
    gained_samples: list[Sample] = field(default_factory=list)
    lost_samples: list[Sample] = field(default_factory=list)

    def add(
        self,
        burst: Burst,
        before: tuple[str, ...],
        after: tuple[str, ...],
        probes_before: tuple[str, ...],
    ) -> None:
        self.replayed += 1
        if not before and after:
            self.gained += 1
            self.probes_served += bool(probes_before)
            if len(self.gained_samples) < MAX_GAINED_SAMPLES:
                self.gained_samples.append(_sample(burst, before, after))
        elif before and not after:
            self.lost += 1
            if len(self.lost_samples) < MAX_LOST_SAMPLES:
                self.lost_samples.append(_sample(burst, before, after))
        elif before and set(before) != set(after):
            self.moved += 1

    def outcome(self, index_bytes_before: int, index_bytes_after: int) -> Outcome:
        return Outcome(
            messages=self.messages,
            gained=self.gained,
            lost=self.lost,
            moved=self.moved,
            probes_served=self.probes_served,
            index_bytes_before=index_bytes_before,
            index_bytes_after=index_bytes_after,
            gained_samples=tuple(self.gained_samples),
            lost_samples=tuple(self.lost_samples),
            replayed=self.replayed,
        )


def _sample(burst: Burst, before: tuple[str, ...], after: tuple[str, ...]) -> Sample:
    return Sample(burst.message_id, burst.text[:SAMPLE_TEXT_CHARS], before, after)
