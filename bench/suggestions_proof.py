"""The Sugestões proof on values, no services: three customers ask about Pix in their own
words and are handed to a person; a person answers two (console) and the owner the third
(phone). Prints the one group, the draft made from it (name, keywords, body, what privacy
removed and kept) and whether its keywords match the three questions and the next customer's
"vocês aceitam pix?" by the turn's own matcher. The same path end to end, on real services
and a real worker, is tests/integration/test_suggestions.py.

Run: .venv/bin/python bench/suggestions_proof.py
"""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conversation.handoff.texts import HANDOFF_ACK_DEFAULT
from skills.models import LoadedSkill, SkillMatcher
from suggestions.draft_content import draft_content
from suggestions.grouping import group_lessons
from suggestions.lessons import ThreadMessage, lessons_of
from suggestions.similarity import LexicalSimilarity
from turn.matcher import match_skills

KEY = "a chave pix é o CNPJ 12.345.678/0001-90"
THREADS = [
    ("Oi! Vocês aceitam pagamento por pix?", "person", f"Aceitamos sim! {KEY}."),
    (
        "boa tarde, da pra pagar no pix? queria fechar o pedido hj",
        "person",
        f"Pode pagar no pix sim, {KEY}. Depois manda o comprovante!",
    ),
    (
        "Posso fazer um pix pra pagar a encomenda? meu nome é Joana",
        "phone",
        "Oi Joana, pode sim! Faz o pix pro 11 98888-7777 que eu confirmo aqui.",
    ),
]
NEXT = "vocês aceitam pix?"


def _thread(n: int, question: str, who: str, answer: str) -> list[ThreadMessage]:
    conversation = uuid.uuid4()
    at = datetime(2026, 12, 1, 12, n, tzinfo=UTC)
    rows = [
        ("inbound", None, question, False),
        ("outbound", "agent", HANDOFF_ACK_DEFAULT, True),
        ("outbound", who, answer, False),
    ]
    return [
        ThreadMessage(
            uuid.uuid4(),
            conversation,
            direction,
            author,
            "skt_loja" if author == "person" else None,
            "text",
            body,
            at + timedelta(seconds=30 * i),
            turn_reply,
        )
        for i, (direction, author, body, turn_reply) in enumerate(rows)
    ]


def main() -> int:
    lessons = [
        lesson
        for n, (q, who, a) in enumerate(THREADS)
        for lesson in lessons_of(_thread(n, q, who, a), [HANDOFF_ACK_DEFAULT])
    ]
    groups = group_lessons(lessons, LexicalSimilarity())
    print(f"lessons={len(lessons)} groups={len(groups)}")
    [group] = groups
    content = draft_content(group.lessons, ["qual o horário?", "vocês entregam?"] * 20)
    print(f"draft: {content.name} keywords={list(content.keywords)}")
    print(content.body)
    print("removed:", [(r.kind.value, r.value) for r in content.removed])
    print("kept:", [(k.kind.value, k.value) for k in content.kept])
    skill = LoadedSkill(
        version_id=uuid.uuid4(), name=content.name, matcher=SkillMatcher(content.keywords)
    )
    matched = [bool(match_skills([skill], q).matched) for q, _, _ in THREADS]
    nxt = bool(match_skills([skill], NEXT).matched)
    print(f"keywords match the three questions: {matched}; {NEXT!r}: {nxt}")
    return 0 if len(groups) == 1 and all(matched) and nxt else 1


if __name__ == "__main__":
    sys.exit(main())
