"""Catalog intent models: a linear classifier shipped with a catalog skill, matched besides
its keywords (pure, apart from reading the shipped files once per process).

A catalog skill's keywords are a contract a business can read and edit; they also miss the many
ways customers word the same intent. So the platform trains, for each catalog skill, a logistic
regression over the message's features (turn.matcher.intent_features) on the tune part of
the labelled corpus (tools/train_intent_models.py), and ships it as
``skillet_data/intent_models/<name>.json``.

A model applies to an installed skill only when both its name and its keywords (``any`` and
``probe``, in order) are exactly those the model was trained with (``keywords_sha256``): a fresh
install of the catalog skill, or a fork whose body was edited; not a fork whose keywords the
business rewrote (its own keywords then decide alone), nor an unrelated skill that took the
name. It can only add a match: a skill matched by its keywords stays matched.

Cost: one dict look-up per feature of the text (at most MAX_FEATURES) per model that applies.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.units import BYTES_PER_MIB
from skillet_data import INTENT_MODELS_DIR
from skills.models import SkillMatcher

MODEL_FORMAT = 1
# The shipped files are a few hundred KiB; a bigger one is a mistake, not a model.
MAX_MODEL_FILE_BYTES = 4 * BYTES_PER_MIB


class IntentModelError(ValueError):
    """A shipped intent model file that cannot be used (a worker refuses to start with it)."""


class _ModelFile(BaseModel):
    # A NaN weight would make every score NaN: a model that silently never matches.
    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)

    format: int
    skill: str = Field(min_length=1)
    keywords_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bias: float
    threshold: float
    weights: dict[str, float]


def linear_score(weights: Mapping[str, float], bias: float, features: Iterable[str]) -> float:
    """``bias + sum(weights)`` over `features` (a feature without a weight adds nothing)."""
    return bias + sum(weights.get(f, 0.0) for f in features)


@dataclass(frozen=True)
class IntentModel:
    """One catalog skill's classifier: matches when ``bias + sum(weights) > threshold``."""

    skill: str
    keywords_sha256: str
    bias: float
    threshold: float
    weights: Mapping[str, float]

    def score(self, features: frozenset[str]) -> float:
        return linear_score(self.weights, self.bias, features)

    def accepts(self, features: frozenset[str]) -> bool:
        return self.score(features) > self.threshold


# (skill name, keywords_sha256) -> the model trained for exactly that skill and those keywords.
IntentModels = Mapping[tuple[str, str], IntentModel]
NO_INTENT_MODELS: IntentModels = MappingProxyType({})


def keywords_sha256(matcher: SkillMatcher) -> str:
    """What a model is bound to: the skill's keywords, both lists, in their order."""
    canonical = json.dumps(matcher.to_json(), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_intent_model(raw: bytes, origin: str) -> IntentModel:
    """A model from its JSON file, or IntentModelError saying what is wrong with it."""
    if len(raw) > MAX_MODEL_FILE_BYTES:
        raise IntentModelError(f"{origin}: {len(raw)} bytes, more than {MAX_MODEL_FILE_BYTES}")
    try:
        parsed = _ModelFile.model_validate_json(raw)
    except ValidationError as exc:
        raise IntentModelError(f"{origin}: not an intent model file: {exc}") from exc
    if parsed.format != MODEL_FORMAT:
        raise IntentModelError(
            f"{origin}: format {parsed.format}, this skillet reads format {MODEL_FORMAT}"
        )
    return IntentModel(
        skill=parsed.skill,
        keywords_sha256=parsed.keywords_sha256,
        bias=parsed.bias,
        threshold=parsed.threshold,
        weights=MappingProxyType(dict(parsed.weights)),
    )


def load_intent_models(directory: Path) -> IntentModels:
    """Every ``*.json`` model in `directory` (none when it does not exist), keyed by what it
    applies to."""
    if not directory.is_dir():
        return NO_INTENT_MODELS
    found: dict[tuple[str, str], IntentModel] = {}
    for path in sorted(directory.glob("*.json")):
        model = parse_intent_model(path.read_bytes(), str(path))
        found[(model.skill, model.keywords_sha256)] = model
    return MappingProxyType(found)


@cache
def shipped_intent_models() -> IntentModels:
    """The models in this skillet's wheel, read once per process."""
    return load_intent_models(INTENT_MODELS_DIR)
