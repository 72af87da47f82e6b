"""Training a catalog skill's intent model (pure, deterministic): what
tools/train_intent_models.py runs on the tune part of the labelled corpus.

The model is a logistic regression over turn.matcher.intent_features, fitted by stochastic gradient
descent in a fixed order (seeded shuffle), so the same messages give the same weights on any
machine. Its threshold is chosen by k-fold cross-validation on the same messages, with the
keywords in: the lowest threshold at which keywords and model together falsely match at most
``max_false_hit_rate`` of the messages labelled for something else. The model is matched besides
the keywords, so only what it adds to them is worth spending false hits on.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from turn.matcher.intent_features import intent_features
from turn.matcher.intent_model import linear_score

EPOCHS = 30
LEARNING_RATE = 0.2
# Weights below this are dropped (and the rest rounded): a smaller file, the same decisions.
MIN_KEPT_WEIGHT = 0.005
WEIGHT_DECIMALS = 4
FOLDS = 5
# The candidate thresholds, low to high: -2.0, -1.75, ..., 4.0.
THRESHOLDS = tuple(t / 4 for t in range(-8, 17))
# exp() of more than this overflows nothing but saturates the gradient anyway.
_MAX_LOGIT = 30.0


@dataclass(frozen=True)
class Example:
    """One labelled message: its features, whether it is the skill's, whether keywords hit it."""

    features: frozenset[str]
    positive: bool
    keyword_hit: bool


@dataclass(frozen=True)
class CrossValidation:
    """Keywords alone and keywords with the model, scored on held-out folds."""

    keyword_recall: float
    keyword_false_hit_rate: float
    recall: float
    false_hit_rate: float


@dataclass(frozen=True)
class TrainedModel:
    bias: float
    threshold: float
    weights: dict[str, float]
    cross_validation: CrossValidation


def examples(texts: Sequence[str], positive: Sequence[bool], hits: Sequence[bool]) -> list[Example]:
    return [
        Example(intent_features(t), p, h) for t, p, h in zip(texts, positive, hits, strict=True)
    ]


def fit(training: Sequence[Example], *, seed: int = 0) -> tuple[dict[str, float], float]:
    """Weights and bias of a logistic regression fitted to `training` (deterministic)."""
    weights: dict[str, float] = {}
    bias = 0.0
    order = list(range(len(training)))
    shuffle = random.Random(seed)
    for _ in range(EPOCHS):
        shuffle.shuffle(order)
        for i in order:
            example = training[i]
            logit = max(-_MAX_LOGIT, min(_MAX_LOGIT, linear_score(weights, bias, example.features)))
            error = 1 / (1 + math.exp(-logit)) - example.positive
            # Long messages have many features: a step per feature shrinks with their number.
            step = LEARNING_RATE * error / math.sqrt(max(1, len(example.features)))
            for f in example.features:
                weights[f] = weights.get(f, 0.0) - step
            bias -= LEARNING_RATE * error * 0.1
    kept = {
        f: round(w, WEIGHT_DECIMALS)
        for f, w in sorted(weights.items())
        if abs(w) >= MIN_KEPT_WEIGHT
    }
    return kept, round(bias, WEIGHT_DECIMALS)


def _rates(scored: Sequence[tuple[float, Example]], threshold: float | None) -> tuple[float, float]:
    """Recall and false-hit rate of keywords, with the model at `threshold` (None: without)."""
    positives = [e for _, e in scored if e.positive]
    hit = [e for s, e in scored if e.keyword_hit or (threshold is not None and s > threshold)]
    found = sum(1 for e in hit if e.positive)
    false = len(hit) - found
    negatives = len(scored) - len(positives)
    return found / max(1, len(positives)), false / max(1, negatives)


def train(data: Sequence[Example], *, max_false_hit_rate: float) -> TrainedModel:
    """A model fitted to all of `data`, with the threshold cross-validation chose for it."""
    scored: list[tuple[float, Example]] = []
    for fold in range(FOLDS):
        training = [e for i, e in enumerate(data) if i % FOLDS != fold]
        weights, bias = fit(training)
        held_out = (e for i, e in enumerate(data) if i % FOLDS == fold)
        scored.extend((linear_score(weights, bias, e.features), e) for e in held_out)
    threshold = THRESHOLDS[-1]
    for candidate in THRESHOLDS:
        if _rates(scored, candidate)[1] <= max_false_hit_rate:
            threshold = candidate
            break
    keyword_recall, keyword_false = _rates(scored, None)
    recall, false = _rates(scored, threshold)
    weights, bias = fit(data)
    validation = CrossValidation(keyword_recall, keyword_false, recall, false)
    return TrainedModel(bias, threshold, weights, validation)
