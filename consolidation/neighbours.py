"""Which installed skills a draft is close to, pure: shown where a person decides, so a
duplicate is seen before it is approved ("parecida com troca-de-produto (0,91)").

One lexical run over the installed skills and the drafts together (the IDF is the org's);
a draft is never compared with its own installed version (same name) nor with other drafts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from consolidation.similarity import SkillText, lexical_scores

# Between a link's threshold (0.45, which also joins skills about one product that a group
# then keeps apart) and a group's (0.55): a hint to a reviewer merges nothing, and a
# near-duplicate that would just miss a group is still worth a look.
HINT_THRESHOLD = 0.5
MAX_HINTS = 3


@dataclass(frozen=True)
class Neighbour:
    name: str
    score: float

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "score": round(self.score, 2)}


def close_to(
    drafts: Sequence[SkillText],
    installed: Sequence[SkillText],
    threshold: float = HINT_THRESHOLD,
    limit: int = MAX_HINTS,
) -> list[list[Neighbour]]:
    """For each draft, its closest installed skills (best first), at most `limit`."""
    texts = [*drafts, *installed]
    found: list[list[Neighbour]] = [[] for _ in drafts]
    for (i, j), score in lexical_scores(texts).items():
        if i >= len(drafts) or j < len(drafts) or score < threshold:
            continue  # only (draft, installed) pairs; i < j puts drafts first
        other = texts[j].name
        if other != drafts[i].name:
            found[i].append(Neighbour(other, min(score, 1.0)))
    return [sorted(n, key=lambda x: (-x.score, x.name))[:limit] for n in found]
