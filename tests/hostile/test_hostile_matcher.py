"""Hostile keywords and messages: the matcher's work stays bounded by the words it reads.

Work is counted in automaton steps (`CompiledMatcher.scan_work`), never timed; the seconds
are printed side by side by bench/matcher_hostile.py.
"""

from __future__ import annotations

import random
import uuid

from core.units import BYTES_PER_KIB
from skills.labelled_corpus import catalog_skills
from skills.models import LoadedSkill, SkillMatcher
from skills.package.limits import MAX_KEYWORD_CHARS, MAX_KEYWORDS
from turn.matcher import MAX_MATCHED_TEXT_BYTES, MAX_STEM_CHARS, MIN_STEM_CHARS, compile_matcher
from turn.matcher.intent_features import MAX_FEATURES

HOSTILE_TEXT_BYTES = 64 * BYTES_PER_KIB
# "a a ... a bN": 30 shared words then a distinct last one, 63 characters (within the limit).
SHARED_PREFIX_WORDS = 30
KEYWORD_COUNT = 100
# Words of "a " that fit in the matched part of the text.
WORDS_READ = MAX_MATCHED_TEXT_BYTES // len("a ")


def hostile_skill(keywords: list[str]) -> LoadedSkill:
    assert all(len(k) <= MAX_KEYWORD_CHARS for k in keywords)
    return LoadedSkill(
        name="hostil",
        description="d",
        body="b",
        # 100 keywords: two lists of 50, the most a package may ship.
        matcher=SkillMatcher(
            any_keywords=keywords[:MAX_KEYWORDS], probe_keywords=keywords[MAX_KEYWORDS:]
        ),
        version_id=uuid.uuid4(),
    )


def shared_prefix_keywords() -> list[str]:
    return [("a " * SHARED_PREFIX_WORDS) + f"b{n}" for n in range(KEYWORD_COUNT)]


def test_long_phrases_sharing_a_prefix_against_64_kib_cost_a_few_steps_per_word() -> None:
    matcher = compile_matcher([hostile_skill(shared_prefix_keywords())])
    text = "a " * (HOSTILE_TEXT_BYTES // 2)
    result = matcher.match(text)
    work = matcher.scan_work(text)
    assert result.matched == [] and result.probes == []
    assert work.words == WORDS_READ  # 4096 of the 32768 words: the rest is never read
    # 100 phrases with one first word make two groups (64 + 36): two steps per word, where
    # re-checking every phrase at every word took 100 x 30 per word.
    assert work.steps <= 2 * work.words
    assert work.steps <= work.step_bound


def test_the_hostile_phrases_still_match_inside_the_first_8_kib() -> None:
    matcher = compile_matcher([hostile_skill(shared_prefix_keywords())])
    hit = "a " * 200 + "b7 " + "a " * (HOSTILE_TEXT_BYTES // 2)
    assert [s.name for s in matcher.match(hit).matched] == ["hostil"]
    probe = "a " * 200 + "b57 " + "a " * (HOSTILE_TEXT_BYTES // 2)  # b50..b99: probes
    assert matcher.match(probe).probes == ["hostil"]
    late = "a " * (HOSTILE_TEXT_BYTES // 2) + "b7"
    assert matcher.match(late).matched == []


def test_keywords_ambiguous_through_plurals_do_not_multiply_the_work() -> None:
    # Every message word "as" stands for both keyword words "a" and "as": a trie walked word
    # by word would follow every mix of the two (2**30 paths); the bit vectors hold them all.
    rng = random.Random(20_261_130)
    keywords = [
        " ".join(rng.choice(("a", "as")) for _ in range(20)) + f" b{n}"
        for n in range(KEYWORD_COUNT)
    ]
    matcher = compile_matcher([hostile_skill(keywords)])
    text = "as " * (HOSTILE_TEXT_BYTES // 3)
    work = matcher.scan_work(text)
    assert matcher.match(text).matched == []
    assert work.words == -(-MAX_MATCHED_TEXT_BYTES // len("as "))  # the last "as" ends at 8 KiB
    # First words "a" and "as" (up to two groups each): at most four steps per word.
    assert work.steps <= 4 * work.words


def test_one_giant_word_is_one_word() -> None:
    matcher = compile_matcher([hostile_skill(shared_prefix_keywords())])
    work = matcher.scan_work("a" * HOSTILE_TEXT_BYTES)
    assert work.words == 0  # the only word is cut by the 8 KiB limit, so it is dropped
    assert work.steps == 0


def stems_of_every_length() -> list[str]:
    # First words "abc*", "abcd*", ..., the 16-letter stem: 14 stem lengths, the most there
    # are, each first word shared by 7 phrases that never end ("... zN").
    letters = "abcdefghijklmnop"
    return [
        f"{letters[:n]}* {letters[:n]}* z{k}"
        for n in range(MIN_STEM_CHARS, MAX_STEM_CHARS + 1)
        for k in range(7)
    ]


def test_stems_of_every_length_cost_a_bounded_number_of_steps_per_word() -> None:
    matcher = compile_matcher([hostile_skill(stems_of_every_length())])
    text = "abcdefghijklmnopq " * (HOSTILE_TEXT_BYTES // 18)
    work = matcher.scan_work(text)
    assert matcher.match(text).matched == []
    assert work.words == MAX_MATCHED_TEXT_BYTES // 18
    # Each word starts the 14 stem groups, each live for at most 2 more words (phrases of 3).
    assert work.steps <= 3 * 14 * work.words
    assert work.steps <= work.step_bound


def test_numbers_and_alternatives_sharing_a_prefix_cost_a_few_steps_per_word() -> None:
    # The shared-prefix attack through patterns: 100 phrases of 9 positions that each hold
    # the number and two words, then a distinct bN (at most 64 characters, as a package).
    keywords = [" ".join(["#|c|d"] * 9) + f" b{n}" for n in range(KEYWORD_COUNT)]
    assert all(len(k) <= MAX_KEYWORD_CHARS for k in keywords)
    matcher = compile_matcher([hostile_skill(keywords)])
    text = "7 c " * (HOSTILE_TEXT_BYTES // 4)
    work = matcher.scan_work(text)
    assert matcher.match(text).matched == []
    assert work.words == MAX_MATCHED_TEXT_BYTES // 4 * 2
    # First keys "#", "c" and "d" each hold the 100 phrases in two groups (64 + 36); a word
    # starts the two groups of its one key and the previous word's groups keep running.
    assert work.steps <= 4 * work.words
    assert work.steps <= work.step_bound


def co_occurrence_keywords() -> list[str]:
    """100 keywords of two 14-word sides sharing their first 13 words ("a a ... bN + a a ...
    cN", 63 characters): 200 phrases under one first word."""
    return [("a " * 13) + f"b{n} + " + ("a " * 13) + f"c{n}" for n in range(KEYWORD_COUNT)]


def every_side_text(size: int) -> str:
    unit = "".join(("a " * 13) + f"b{n} " + ("a " * 13) + f"c{n} " for n in range(KEYWORD_COUNT))
    return (unit * (size // len(unit) + 1))[:size]


def test_co_occurrence_keywords_whose_sides_all_occur_cost_a_few_steps_per_word() -> None:
    matcher = compile_matcher([hostile_skill(co_occurrence_keywords())])
    short = matcher.scan_work(every_side_text(MAX_MATCHED_TEXT_BYTES))
    work = matcher.scan_work(every_side_text(HOSTILE_TEXT_BYTES))
    assert matcher.match(every_side_text(HOSTILE_TEXT_BYTES)).matched[0].name == "hostil"
    assert work.hits == KEYWORD_COUNT  # every keyword found, each once
    # 200 phrases under the first word "a": four groups of 64, so four steps per word.
    assert work.steps <= 4 * work.words
    assert work.steps <= work.step_bound
    # The side checks are bounded by the keywords (each side found checks both sides of its
    # keyword once), not by the text: 8 KiB already found them all, 64 KiB adds nothing.
    assert work.side_checks == short.side_checks == 2 * 2 * KEYWORD_COUNT


def test_a_side_shared_by_every_keyword_is_checked_once_per_keyword() -> None:
    # "a + bN": a message of "a a a ..." finds the side "a" once, whatever its length.
    keywords = [f"a + b{n}" for n in range(KEYWORD_COUNT)]
    matcher = compile_matcher([hostile_skill(keywords)])
    work = matcher.scan_work("a " * (HOSTILE_TEXT_BYTES // 2))
    assert matcher.match("a " * (HOSTILE_TEXT_BYTES // 2)).matched == []
    assert work.side_checks == 2 * KEYWORD_COUNT  # each keyword: "a" found, "bN" not
    assert work.steps <= work.words


def test_the_catalog_intent_models_read_a_bounded_part_of_a_64_kib_text() -> None:
    catalog = catalog_skills()
    matcher = compile_matcher(catalog)
    rng = random.Random(11)
    # Distinct made-up words: every gram new, no keyword hit, so every model is asked.
    words = (
        "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=rng.randint(3, 9))) for _ in range(20000)
    )
    text = " ".join(words)[:HOSTILE_TEXT_BYTES]
    work = matcher.scan_work(text)
    assert work.hits == 0
    assert 0 < work.intent_lookups <= MAX_FEATURES * len(catalog)
