"""The background a model's skill vectors are measured against: the mean vector of many
customer-service skills, which every skill shares ("a customer asks, the agent answers").

Why: a small embedding model puts any two customer-service skills in Portuguese at a cosine
of 0.83-0.92, a paraphrase barely above an unrelated skill (the hand-written corpus: same-pile
pairs 0.88-0.95, other pairs up to 0.92). Subtracting that shared direction before the cosine
leaves what a skill is about: on tests/unit/test_similarity_proof.py's skills, within piles at
least 0.21 and between piles at most 0.18, against 0.88 and 0.90 raw. A fixed vector, not the
org's own mean: the score of two skills does not move when a third skill is added.

The vector is data shipped per model (backgrounds/<variant>.json), made by
tools/similarity_background.py from the tuning half of tests/data/similarity_corpus.txt
(never from the held-out half the lines are reported on). A model without one (an embeddings
server's unknown model) is measured by plain cosine. A new model needs its own file and its
lines re-measured (docs/skills.md).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def background_for(model_id: str) -> tuple[float, ...] | None:
    """The shipped background of `model_id` ("enpt@0.3.0"), or None."""
    variant = model_id.split("@", 1)[0]
    if not variant.isidentifier():
        return None
    found = resources.files("similarity").joinpath("backgrounds", f"{variant}.json")
    if not found.is_file():
        return None
    data = json.loads(found.read_text(encoding="utf-8"))
    if data.get("model_id") != model_id:
        return None  # made with another version of the model: not this one's
    return tuple(float(x) for x in data["vector"])
