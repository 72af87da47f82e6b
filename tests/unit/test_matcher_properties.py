"""Property-based: the matcher agrees with a readable oracle that tries every start and every
filler position of every keyword (hypothesis), on words chosen to collide through plurals."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import (
    ABBREVIATIONS,
    compile_matcher,
    match_skills,
    normalize_text,
    plural_forms,
)

PROPERTIES = settings(max_examples=400, deadline=None, database=None, derandomize=True)

# Words whose plurals are other words of the list ("a"/"as"/"ases", "papel"/"papeis"), so
# one message word often stands for two keyword words.
# "ta"/"esta"/"tá"/"vc" exercise the abbreviations on both sides.
VOCABULARY = ["a", "as", "ases", "b", "bs", "papel", "papeil", "papeis", "mes", "meses", "pix"]
VOCABULARY += ["ta", "tá", "esta", "vc", "voces"]
SEPARATORS = [" ", ", ", "-", " ... "]


def occurs(phrase: list[str], words: list[str]) -> bool:
    """The rules, spelled out: consecutive words, or one filler inside a 3+ word phrase."""

    def read(word: str) -> str:
        return ABBREVIATIONS.get(normalize_text(word), normalize_text(word))

    def same(message_word: str, keyword_word: str) -> bool:
        message_word, keyword_word = read(message_word), read(keyword_word)
        return message_word == keyword_word or message_word in plural_forms(keyword_word)

    def exact_at(start: int, part: list[str]) -> bool:
        window = words[start : start + len(part)]
        return len(window) == len(part) and all(map(same, window, part))

    for start in range(len(words)):
        if exact_at(start, phrase):
            return True
        if len(phrase) >= 3:
            for gap in range(1, len(phrase)):
                if exact_at(start, phrase[:gap]) and exact_at(start + gap + 1, phrase[gap:]):
                    return True
    return False


Spec = tuple[str, list[list[str]], list[list[str]]]  # name, any_keywords, probe_keywords


def oracle(skills: list[Spec], words: list[str]) -> tuple[set[str], set[str]]:
    hard = {name for name, any_kw, _ in skills if any(occurs(k, words) for k in any_kw)}
    probes = {
        name
        for name, _, probe_kw in skills
        if name not in hard and any(occurs(k, words) for k in probe_kw)
    }
    return hard, probes


phrases = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5)
skill_specs = st.lists(
    st.tuples(st.lists(phrases, max_size=4), st.lists(phrases, max_size=2)),
    min_size=1,
    max_size=4,
)


@PROPERTIES
@given(
    specs=skill_specs,
    words=st.lists(st.sampled_from([*VOCABULARY, "x", "papeiss"]), max_size=25),
    separator=st.sampled_from(SEPARATORS),
)
def test_matcher_agrees_with_the_oracle(
    specs: list[tuple[list[list[str]], list[list[str]]]], words: list[str], separator: str
) -> None:
    named = [(f"s{i}", any_kw, probe_kw) for i, (any_kw, probe_kw) in enumerate(specs)]
    skills = [
        LoadedSkill(
            name=name,
            description="d",
            body="b",
            matcher=SkillMatcher(
                any_keywords=[" ".join(k) for k in any_kw],
                probe_keywords=[" ".join(k) for k in probe_kw],
            ),
            version_id=uuid.uuid4(),
        )
        for name, any_kw, probe_kw in named
    ]
    text = separator.join(words)
    result = match_skills(skills, text)
    hard, probes = oracle(named, words)
    assert {s.name for s in result.matched} == hard
    assert set(result.probes) == probes
    work = compile_matcher(skills).scan_work(text)
    assert work.steps <= work.step_bound
