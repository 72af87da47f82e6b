"""Property-based: the matcher agrees with a readable oracle that tries every start and every
filler position of every keyword (hypothesis), on words chosen to collide through plurals,
stems, numbers and alternatives, and with co-occurrence keywords (``a + b``, malformed ones
included: ``+ a``, ``a +``, ``a + b + c``)."""

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
# Word patterns, keyword side only: stems, the number, alternatives of all three.
PATTERNS = ["pap*", "mes*", "#", "a|pix", "ase*|b", "#|vc", "papel|pap*"]
# Message words that only patterns find (a number, a word a stem begins).
MESSAGE_ONLY = ["7", "10h", "papelaria", "mesa"]
SEPARATORS = [" ", ", ", "-", " ... "]


def read(word: str) -> str:
    return ABBREVIATIONS.get(normalize_text(word), normalize_text(word))


def same_alternative(message_word: str, alternative: str) -> bool:
    """A read message word against one alternative: the number, a stem, or a word."""
    if alternative == "#":
        return message_word[:1].isdigit()
    if alternative.endswith("*"):
        return message_word.startswith(alternative[:-1])
    keyword_word = read(alternative)
    return message_word == keyword_word or message_word in plural_forms(keyword_word)


def same(message_word: str, keyword_word: str) -> bool:
    return any(same_alternative(read(message_word), a) for a in keyword_word.split("|"))


def occurs(phrase: list[str], words: list[str]) -> bool:
    """The rules, spelled out: consecutive words, or one filler inside a 3+ word phrase."""

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


def keyword_occurs(keyword: list[str], words: list[str]) -> bool:
    """A keyword's words, "+" among them: one phrase, or two sides that both occur."""
    sides: list[list[str]] = [[]]
    for word in keyword:
        if word == "+":
            sides.append([])
        else:
            sides[-1].append(word)
    if len(sides) > 2 or not all(sides):
        return False  # a blank side or two marks: refused by packages, never matched
    return all(occurs(side, words) for side in sides)


Spec = tuple[str, list[list[str]], list[list[str]]]  # name, any_keywords, probe_keywords


def oracle(skills: list[Spec], words: list[str]) -> tuple[set[str], set[str]]:
    hard = {name for name, any_kw, _ in skills if any(keyword_occurs(k, words) for k in any_kw)}
    probes = {
        name
        for name, _, probe_kw in skills
        if name not in hard and any(keyword_occurs(k, words) for k in probe_kw)
    }
    return hard, probes


def phrases(vocabulary: list[str]) -> st.SearchStrategy[list[str]]:
    # The co-occurrence mark "+" is one more word, so sides (and malformed ones) come up.
    return st.lists(st.sampled_from([*vocabulary, "+"]), min_size=1, max_size=7)


def skill_specs(vocabulary: list[str]) -> st.SearchStrategy[list[tuple[list[list[str]], ...]]]:
    return st.lists(
        st.tuples(
            st.lists(phrases(vocabulary), max_size=4), st.lists(phrases(vocabulary), max_size=2)
        ),
        min_size=1,
        max_size=4,
    )


def agrees(specs: list[tuple[list[list[str]], ...]], words: list[str], separator: str) -> None:
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


@PROPERTIES
@given(
    specs=skill_specs([*VOCABULARY, *PATTERNS]),
    words=st.lists(st.sampled_from([*VOCABULARY, *MESSAGE_ONLY, "x", "papeiss"]), max_size=25),
    separator=st.sampled_from(SEPARATORS),
)
def test_matcher_agrees_with_the_oracle(
    specs: list[tuple[list[list[str]], ...]], words: list[str], separator: str
) -> None:
    agrees(specs, words, separator)


# Few words, most of them found only through a pattern, so patterns meet their words often.
PATTERN_KEYWORD_WORDS = [*PATTERNS, "mes", "pix"]
PATTERN_MESSAGE_WORDS = [*MESSAGE_ONLY, "mes", "meses", "pap", "papel", "pix", "vc", "b"]


@PROPERTIES
@given(
    specs=skill_specs(PATTERN_KEYWORD_WORDS),
    words=st.lists(st.sampled_from(PATTERN_MESSAGE_WORDS), max_size=12),
    separator=st.sampled_from(SEPARATORS),
)
def test_patterns_agree_with_the_oracle(
    specs: list[tuple[list[list[str]], ...]], words: list[str], separator: str
) -> None:
    agrees(specs, words, separator)
