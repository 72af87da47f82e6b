"""Hostile texts for the request-for-a-person detector: its work stays bounded by the words
it reads, whatever the text's length or how many trigger fragments it repeats.

Work is counted (`handoff_work`: words read, person words tried, context words looked at),
never timed.
"""

from __future__ import annotations

import random

from conversation.handoff.request import (
    MAX_LOOKS_PER_ANCHOR,
    MAX_READ_WORDS,
    HandoffWork,
    asks_for_person,
    handoff_work,
)
from skills.package.limits import BYTES_PER_KIB
from tests.handoff_corpus import SPLITS, load_corpus
from turn.matcher import MAX_MATCHED_TEXT_BYTES

HOSTILE_TEXT_BYTES = 64 * BYTES_PER_KIB
TRIGGER_TEXT_BYTES = 8 * BYTES_PER_KIB


def made_up_words(size_bytes: int, seed: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < size_bytes:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9)))
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:size_bytes]


def repeated(fragment: str, size_bytes: int) -> str:
    return (fragment * (size_bytes // len(fragment) + 1))[:size_bytes]


# What the frames of one person word look at, at most, in practice: the budget
# (MAX_LOOKS_PER_ANCHOR) is a hard stop that these texts must stay well inside, or it would
# be deciding instead of the rules.
PRACTICAL_LOOKS_PER_ANCHOR = MAX_LOOKS_PER_ANCHOR // 2


def assert_bounded(work: HandoffWork) -> None:
    assert work.words <= MAX_READ_WORDS
    assert work.anchors <= work.words
    assert work.most_anchor_looks <= PRACTICAL_LOOKS_PER_ANCHOR
    assert work.looks <= work.anchors * MAX_LOOKS_PER_ANCHOR + work.words


def test_64_kib_of_made_up_words_reads_at_most_the_word_cap() -> None:
    text = made_up_words(HOSTILE_TEXT_BYTES, seed=24)
    work = handoff_work(text)
    assert not asks_for_person(text)
    assert work.words == MAX_READ_WORDS  # 1,024 of about 13,000 words: the rest is never read
    assert_bounded(work)


def test_8_kib_of_negated_requests_costs_a_bounded_number_of_looks_per_word() -> None:
    # Every fragment holds a person word whose frames all run and all fail (negated).
    for fragment in (
        "não quero falar com atendente ",
        "nao precisa me passar pra uma pessoa de verdade ",
        "o atendente foi ótimo, a atendente me passou o preço ",
        "tem vaga de atendente? pessoa jurídica, por pessoa, o corpo humano ",
        "humano humano humano robô robô gente alguém ",
        "robô ou robô, aspirador ou robô de cozinha ",
        "não aguento não gosto não quero falar com pessoa ",
    ):
        text = repeated(fragment, TRIGGER_TEXT_BYTES)
        work = handoff_work(text)
        assert not asks_for_person(text), fragment
        assert work.words <= MAX_READ_WORDS
        assert work.anchors > 0, fragment
        assert_bounded(work)


def test_fragments_of_a_request_without_its_person_word_cost_nothing_but_reading() -> None:
    text = repeated("quero falar com me passa pra tem ", TRIGGER_TEXT_BYTES)
    work = handoff_work(text)
    assert not asks_for_person(text)
    assert work.anchors == 0
    assert work.looks == work.words  # each word read once, by the whole-line check


def test_a_request_is_found_within_the_read_part_and_not_after_it() -> None:
    noise = made_up_words(HOSTILE_TEXT_BYTES, seed=7)
    assert asks_for_person("oi " * 100 + "quero falar com um atendente " + noise)
    # Past the word cap: never read.
    assert not asks_for_person(noise + " quero falar com um atendente")
    assert not asks_for_person("a " * MAX_READ_WORDS + "quero falar com um atendente")


def test_one_giant_word_and_one_giant_line_are_cut() -> None:
    work = handoff_work("a" * HOSTILE_TEXT_BYTES)
    assert work.words == 0  # the only word is cut by the 8 KiB limit, so it is dropped
    line = "atendente " * (HOSTILE_TEXT_BYTES // len("atendente "))
    assert len(line.encode()) > MAX_MATCHED_TEXT_BYTES
    assert asks_for_person(line)  # a line of nothing but the word, cut, still asks
    assert handoff_work(line).words == MAX_MATCHED_TEXT_BYTES // len("atendente ")


def test_no_corpus_message_comes_near_the_look_budget() -> None:
    for split in SPLITS:
        for message in load_corpus(split):
            assert_bounded(handoff_work(message.text))
