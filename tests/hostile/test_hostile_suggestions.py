"""Hostile inputs to Sugestões: a thread of 20,000 messages, 64 KiB messages, a question of
thousands of distinct words, thousands of identical questions. What each step reads and
returns stays bounded by its constants, counted, never timed."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from suggestions.draft_content import MAX_BODY_ANSWERS, body_of
from suggestions.keywords import MAX_CANDIDATES, MAX_KEYWORDS, candidates, choose_keywords
from suggestions.lessons import (
    MAX_ANSWER_MESSAGES,
    MAX_QUESTION_MESSAGES,
    Lesson,
    Question,
    ThreadMessage,
    lessons_of,
)
from suggestions.privacy import MAX_TEXT_CHARS
from suggestions.similarity import MAX_PAIR_UPDATES, LexicalSimilarity
from tests.hostile.test_hostile_handoff import made_up_words

T0 = datetime(2026, 12, 1, tzinfo=UTC)
BIG = 64 * 1024
CONVERSATION = uuid.uuid4()


def _message(i: int, who: str, body: str) -> ThreadMessage:
    inbound = who == "customer"
    return ThreadMessage(
        id=uuid.UUID(int=i + 1),
        conversation_id=CONVERSATION,
        direction="inbound" if inbound else "outbound",
        author=None if inbound else who,
        author_key_prefix="skt_x" if who == "person" else None,
        kind="text",
        body=body,
        at=T0 + timedelta(seconds=10 * i),
        turn_reply=who == "agent",
    )


def test_a_huge_thread_gives_bounded_lessons() -> None:
    pattern = ["customer"] * 30 + ["agent"] + ["person"] * 20
    thread = [
        _message(i, pattern[i % len(pattern)], f"mensagem {i} " + "x" * 30) for i in range(20_000)
    ]
    lessons = lessons_of(thread)
    assert lessons
    assert all(len(lesson.questions) <= MAX_QUESTION_MESSAGES for lesson in lessons)
    assert all(len(lesson.message_ids) <= 20 for lesson in lessons)
    assert all(lesson.answer.count("\n") < MAX_ANSWER_MESSAGES for lesson in lessons)


def test_a_question_of_many_distinct_words_tries_bounded_candidates() -> None:
    question = made_up_words(BIG, seed=7)
    assert len(candidates([question])) <= MAX_CANDIDATES
    choice = choose_keywords([question] * 3, [made_up_words(2_000, seed=s) for s in range(50)])
    assert len(choice.keywords) <= MAX_KEYWORDS


def test_thousands_of_identical_questions_keep_the_pair_updates_bounded() -> None:
    texts = ["vocês aceitam pix? da pra pagar no pix hoje?"] * 3_000
    scores = LexicalSimilarity().scores(texts)
    assert len(scores) <= MAX_PAIR_UPDATES


def test_huge_answers_make_a_bounded_body() -> None:
    lessons = [
        Lesson(
            uuid.uuid4(),
            uuid.uuid4(),
            (Question(uuid.uuid4(), made_up_words(BIG, seed=i)),),
            made_up_words(BIG, seed=100 + i) + " 11 98765-4321 " + "000201" * 5_000,
            "skt_x",
            T0,
        )
        for i in range(30)
    ]
    body, _removed, _kept = body_of(lessons, [])
    assert len(body) <= 1_000 + MAX_BODY_ANSWERS * (MAX_TEXT_CHARS + 8)
    assert "98765-4321" not in body
