"""A suggestion group's draft skill: name, description, keywords and body. Pure, no model.

- Keywords: suggestions.keywords (the customers' own words, checked by the matcher).
- Name: `duvida-` + the first keywords' words (letters, hyphens), unique among `taken`.
- Description: says which customers' questions it answers, by those keywords.
- Body: only what people of the business wrote. Each answer loses the sentences that repeat
  ECHO_WORDS consecutive words of a customer's message, then its values are kept or removed
  by suggestions.privacy's rule (`restored`: the keys a reviewer put back); identical
  answers and sentences are written once, in the order the answers were given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from suggestions.keywords import KeywordChoice, choose_keywords
from suggestions.lessons import Lesson
from suggestions.privacy import (
    AnswerText,
    Removal,
    drop_echoed_sentences,
    redact_answers,
    redact_question,
)

MAX_NAME_CHARS = 48
MAX_DESCRIPTION_CHARS = 300
MAX_BODY_ANSWERS = 10  # the newest answers of a group written into the body
BODY_INTRO = (
    "Quando um cliente perguntar sobre isso, responda com as informações que a equipe já "
    "deu nas respostas abaixo. Não invente nada além delas; se o cliente precisar de algo "
    "que não está aqui, chame uma pessoa da equipe."
)


@dataclass(frozen=True)
class DraftContent:
    name: str
    description: str
    keywords: tuple[str, ...]
    body: str
    unmatched: tuple[str, ...]  # redacted questions no keyword matches
    removed: tuple[Removal, ...]
    kept: tuple[Removal, ...]
    outside_matches: int
    budget: int


def redacted_questions(lessons: Sequence[Lesson], names: Iterable[str]) -> list[str]:
    name_list = list(names)
    return [redact_question(q.text, name_list)[0] for lesson in lessons for q in lesson.questions]


def body_of(
    lessons: Sequence[Lesson], names: Iterable[str], restored: Iterable[str] = ()
) -> tuple[str, list[Removal], list[Removal]]:
    """The body from the answers (module docstring), what it removed and what it kept."""
    name_list = list(names)
    customer_texts = [q.text for lesson in lessons for q in lesson.questions]
    newest = list(lessons)[-MAX_BODY_ANSWERS:]
    answers = [
        AnswerText(
            str(lesson.conversation_id), drop_echoed_sentences(lesson.answer, customer_texts)
        )
        for lesson in newest
    ]
    redacted = redact_answers(answers, customer_texts, name_list, restored)
    seen: set[str] = set()
    items: list[str] = []
    for text in redacted.texts:
        plain = " ".join(text.split())
        if plain and plain.casefold() not in seen:
            seen.add(plain.casefold())
            items.append(f"- {plain}")
    body = "\n\n".join([BODY_INTRO, "Respostas da equipe:", "\n".join(items)])
    return body, redacted.removed, redacted.kept


def name_of(keywords: Sequence[str], taken: Iterable[str]) -> str:
    words = [w for k in keywords for w in k.split()][:3] or ["pergunta"]
    base = "duvida-" + "-".join(re.sub(r"[^a-z0-9]", "", w) for w in words if w)
    base = re.sub(r"-+", "-", base).strip("-")[:MAX_NAME_CHARS].rstrip("-")
    used = set(taken)
    name, n = base, 2
    while name in used:
        name = f"{base[: MAX_NAME_CHARS - 4]}-{n}"
        n += 1
    return name


def description_of(keywords: Sequence[str]) -> str:
    topics = ", ".join(keywords[:6]) or "uma pergunta frequente"
    text = f"Responde clientes que perguntam sobre {topics}, como a equipe já respondeu."
    return text[:MAX_DESCRIPTION_CHARS]


def draft_content(
    lessons: Sequence[Lesson],
    others: Sequence[str],
    *,
    names: Iterable[str] = (),
    taken: Iterable[str] = (),
    restored: Iterable[str] = (),
) -> DraftContent:
    name_list = list(names)
    questions = redacted_questions(lessons, name_list)
    choice: KeywordChoice = choose_keywords(questions, others, name_list)
    body, removed, kept = body_of(lessons, name_list, restored)
    return DraftContent(
        name=name_of(choice.keywords, taken),
        description=description_of(choice.keywords),
        keywords=choice.keywords,
        body=body,
        unmatched=tuple(questions[i] for i in choice.unmatched),
        removed=tuple(removed),
        kept=tuple(kept),
        outside_matches=choice.outside_matches,
        budget=choice.budget,
    )
