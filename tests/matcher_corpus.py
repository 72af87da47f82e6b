"""The labelled WhatsApp corpus of tests/data/matcher_corpus.jsonl and how the catalog scores
on it: recall and false hits per skill (shared by the unit test and bench/catalog_recall.py).

Each line is ``{"text", "skill", "split"}``: ``skill`` is the catalog skill the message should
match (``null``: none), ``split`` is ``tune`` (keywords were chosen looking at these) or
``measure`` (held out: the targets are asserted on these only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skills.labelled_corpus import SPLITS as SPLITS
from skills.labelled_corpus import Message, read_corpus
from skills.labelled_corpus import catalog_skills as catalog_skills
from skills.labelled_corpus import part_sha256 as corpus_part_sha256
from skills.models import LoadedSkill
from turn.matcher import compile_matcher
from turn.matcher.intent_model import IntentModels

CORPUS_PATH = Path(__file__).resolve().parent / "data" / "matcher_corpus.jsonl"

# The targets per skill on the `measure` part.
MIN_RECALL = 0.9
MAX_FALSE_HIT_RATE = 0.03
# What the shipped keywords and intent models measure there together (bench/catalog_recall.py),
# and keywords alone: an edit that loses recall or adds false hits fails the test and the
# bench. Recall rounded down, false hits rounded up (together: agendamento 105/111 and 6/323,
# objecao-preco 107/110 and 3/324; keywords alone: 97/111 and 4/323, 94/110 and 1/324).
MEASURED_RECALL = {"agendamento": 0.94, "objecao-preco": 0.97}
MEASURED_FALSE_HIT_RATE = {"agendamento": 0.02, "objecao-preco": 0.01}
KEYWORDS_MEASURED_RECALL = {"agendamento": 0.87, "objecao-preco": 0.85}
KEYWORDS_MEASURED_FALSE_HIT_RATE = {"agendamento": 0.02, "objecao-preco": 0.01}


@dataclass(frozen=True)
class SkillScore:
    """How one skill does on a set of messages."""

    name: str
    misses: tuple[str, ...]  # labelled for this skill, not matched by it
    false_hits: tuple[str, ...]  # labelled for another skill or none, matched by it
    labelled: int  # messages labelled for this skill
    others: int  # every other message

    @property
    def recall(self) -> float:
        return 1 - len(self.misses) / self.labelled

    @property
    def false_hit_rate(self) -> float:
        return len(self.false_hits) / self.others

    @property
    def meets_targets(self) -> bool:
        return self.recall >= MIN_RECALL and self.false_hit_rate <= MAX_FALSE_HIT_RATE

    def keeps(self, recall: dict[str, float], false_hit_rate: dict[str, float]) -> bool:
        """At least `recall` and at most `false_hit_rate` (floors per skill name)."""
        return self.recall >= recall[self.name] and self.false_hit_rate <= false_hit_rate[self.name]


def load_corpus(split: str) -> list[Message]:
    return read_corpus(CORPUS_PATH, split)


def part_sha256(split: str) -> str:
    return corpus_part_sha256(CORPUS_PATH, split)


def score(
    skills: list[LoadedSkill], messages: list[Message], intent_models: IntentModels | None = None
) -> list[SkillScore]:
    """Recall and false hits of every skill (a hit: the skill is in `matched`, uncapped), with
    the shipped intent models unless `intent_models` says otherwise."""
    matcher = compile_matcher(skills, intent_models=intent_models)
    matched = [{s.name for s in matcher.match(m.text).matched} for m in messages]
    scores = []
    for skill in skills:
        mine = [(m, names) for m, names in zip(messages, matched, strict=True)]
        scores.append(
            SkillScore(
                name=skill.name,
                misses=tuple(
                    m.text for m, n in mine if m.skill == skill.name and skill.name not in n
                ),
                false_hits=tuple(
                    m.text for m, n in mine if m.skill != skill.name and skill.name in n
                ),
                labelled=sum(m.skill == skill.name for m in messages),
                others=sum(m.skill != skill.name for m in messages),
            )
        )
    return scores
