"""Lessons: what a person of the business answered to customer messages no agent answered. Pure.

A conversation's messages (`ThreadMessage`, in the conversation's order) become lessons:

- The *answer* is the consecutive messages a person wrote (author `person`: the console or
  the API; `phone`: the owner's phone, an echo) up to the next customer message. Left out of
  it: templates (kind `template`), anything not text, a fixed text (a handoff
  acknowledgement or waiting notice, as the agents' settings or the defaults say them) and
  a phone message sent within AUTO_REPLY_S of the customer's message before it (the
  WhatsApp Business app's away and greeting messages go out at once; a person types slower).
  Agent messages (its replies, notices, away messages, follow-ups) are never part of one, nor
  is a message shorter than MIN_ANSWER_CHARS ("ok", "já te respondo"): an answer of only
  such messages is no lesson.
- The *question* is the customer's burst before it: the text messages since the previous
  outbound message, going back past the agent's last reply before the person wrote (the
  handoff's acknowledgement: the person answered after it, so it answered nothing) to the
  burst that reply was to, and no further. So a handoff's context messages are part of it.

Only the answer can become a skill body; the question is shown and read for keywords.
Bounds: at most MAX_QUESTION_MESSAGES per question and MAX_ANSWER_MESSAGES per answer (the
newest), so one chatty conversation costs a bounded amount.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

MIN_ANSWER_CHARS = 20
AUTO_REPLY_S = 3.0
MAX_QUESTION_MESSAGES = 8
MAX_ANSWER_MESSAGES = 8
PERSON_AUTHORS = frozenset({"person", "phone"})


@dataclass(frozen=True)
class ThreadMessage:
    id: uuid.UUID
    conversation_id: uuid.UUID
    direction: str  # 'inbound' | 'outbound'
    author: str | None  # outbound: 'agent' | 'person' | 'phone'
    author_key_prefix: str | None
    kind: str
    body: str
    at: datetime  # the conversation's order: received_at for a customer's, created_at else
    turn_reply: bool  # an agent reply to a burst (not a notice, away message or template)
    contact_name: str | None = None  # the conversation's customer's WhatsApp profile name


@dataclass(frozen=True)
class Question:
    message_id: uuid.UUID
    text: str


@dataclass(frozen=True)
class Lesson:
    id: uuid.UUID  # the answer's first message: stable
    conversation_id: uuid.UUID
    questions: tuple[Question, ...]
    answer: str
    author: str  # an API key's prefix, or 'phone'
    at: datetime  # when the answer began
    message_ids: tuple[uuid.UUID, ...] = ()  # the answer's messages
    contact_name: str | None = None  # the customer's WhatsApp profile name (never shown in it)

    @property
    def question_text(self) -> str:
        return "\n".join(q.text for q in self.questions)


def lessons_of(thread: Sequence[ThreadMessage], fixed_texts: Collection[str] = ()) -> list[Lesson]:
    """The lessons of one conversation's messages (in its order); `fixed_texts` the
    acknowledgements and notices that are never an answer, whoever sends them."""
    fixed = {_plain(t) for t in fixed_texts}
    lessons: list[Lesson] = []
    i = 0
    while i < len(thread):
        if not _answering(thread, i, fixed):
            i += 1
            continue
        end = i
        parts: list[ThreadMessage] = []
        while end < len(thread) and thread[end].direction == "outbound":
            if _answering(thread, end, fixed):
                parts.append(thread[end])
            end += 1
        questions = _question(thread, i, fixed)
        answer = "\n".join(p.body.strip() for p in parts[-MAX_ANSWER_MESSAGES:])
        if questions and len(answer) >= MIN_ANSWER_CHARS:
            first = parts[0]
            author = "phone" if first.author == "phone" else first.author_key_prefix or "person"
            lessons.append(
                Lesson(
                    first.id,
                    first.conversation_id,
                    questions,
                    answer,
                    author,
                    first.at,
                    tuple(p.id for p in parts),
                    first.contact_name,
                )
            )
        i = end
    return lessons


def _answering(thread: Sequence[ThreadMessage], i: int, fixed: set[str]) -> bool:
    """Whether message i is a person's message that can be part of an answer."""
    m = thread[i]
    if m.direction != "outbound" or m.author not in PERSON_AUTHORS or m.kind != "text":
        return False
    if _plain(m.body) in fixed or len(m.body.strip()) < MIN_ANSWER_CHARS:
        return False
    if m.author == "phone":
        before = _customer_before(thread, i)
        if before is not None and (m.at - before.at).total_seconds() < AUTO_REPLY_S:
            return False  # the app's automatic reply
    return True


def _customer_before(thread: Sequence[ThreadMessage], i: int) -> ThreadMessage | None:
    for j in range(i - 1, -1, -1):
        if thread[j].direction == "inbound":
            return thread[j]
    return None


def _question(thread: Sequence[ThreadMessage], start: int, fixed: set[str]) -> tuple[Question, ...]:
    """The customer's text messages before the answer starting at `start` (module docstring)."""
    found: list[ThreadMessage] = []
    passed_reply = False
    j = start - 1
    while j >= 0:
        m = thread[j]
        if m.direction == "inbound":
            if m.kind == "text" and m.body.strip():
                found.append(m)
        elif _answering(thread, j, fixed):
            break  # the previous answer
        elif m.turn_reply:
            if passed_reply:
                break  # an agent reply that answered what came before it
            passed_reply = True
        j -= 1
    found.reverse()
    return tuple(Question(m.id, m.body) for m in found[-MAX_QUESTION_MESSAGES:])


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())
