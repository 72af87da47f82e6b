"""Which installed skill a suggestion group is closest to. Pure.

First by the turn's matcher (its own code, keywords only): the installed skill whose keywords
match the most of the group's questions, scored by the share it matches. A skill that already
matches them tells the reviewer to edit it rather than add another (or why the agent handed
off anyway). Failing that, by the lexical backend (suggestions.similarity): the questions
against each skill's name, description and keywords, from MIN_LEXICAL_SCORE.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from skills.models import LoadedSkill
from suggestions.similarity import LexicalSimilarity
from turn.matcher import compile_matcher
from turn.matcher.intent_model import NO_INTENT_MODELS

MIN_LEXICAL_SCORE = 0.3


@dataclass(frozen=True)
class Closest:
    name: str
    score: float

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "score": round(self.score, 2)}


def closest_skill(questions: Sequence[str], skills: Sequence[LoadedSkill]) -> Closest | None:
    if not questions or not skills:
        return None
    matcher = compile_matcher(skills, intent_models=NO_INTENT_MODELS)
    hits: Counter[str] = Counter()
    for question in questions:
        hits.update({s.name for s in matcher.match(question).matched})
    if hits:
        name, count = min(hits.items(), key=lambda kv: (-kv[1], kv[0]))
        return Closest(name, count / len(questions))
    texts = ["\n".join(questions)] + [
        " ".join([s.name.replace("-", " "), s.description, *s.matcher.any_keywords]) for s in skills
    ]
    scores = LexicalSimilarity().scores(texts)
    found = [(score, skills[j - 1].name) for (i, j), score in scores.items() if i == 0]
    if not found:
        return None
    score, name = max(found, key=lambda x: (x[0], [-ord(c) for c in x[1]]))
    return Closest(name, min(score, 1.0)) if score >= MIN_LEXICAL_SCORE else None
