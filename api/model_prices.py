"""What a model's tokens cost in R$, from SKILLET_MODEL_PRICES (pure: text in, prices out).

The setting is a JSON object `{"<provider>/<model>": {"input": R$, "cached_input": R$,
"output": R$}}`, each price per million tokens, as the provider and model are written in the
usage rollup (`anthropic/claude-sonnet-4-5`). The three prices are required (a forgotten one
would read as free), numbers from 0 to 1,000,000; anything else is refused when the process
starts, saying which entry and what to fix. A model with no entry has no cost: the panel says
its tokens are unpriced rather than counting them as zero.

The rollup's `input_tokens` counts every prompt token, the cached ones (`cache_read_tokens`)
included: those cost `cached_input`, the rest `input`. Tokens written to the provider's cache
cost `input` (the three prices cannot say more).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

MAX_ENTRIES = 500
MAX_PRICE_BRL = 1_000_000.0  # per million tokens: past this it is a typo, not a price
TOKENS_PER_PRICE = 1_000_000
PRICE_FIELDS = ("input", "cached_input", "output")


class ModelPricesInvalid(ValueError):
    """SKILLET_MODEL_PRICES cannot be read; the message says which entry and why."""


@dataclass(frozen=True)
class ModelPrice:
    input_brl: float  # per million prompt tokens not read from the cache
    cached_input_brl: float  # per million prompt tokens read from the provider's cache
    output_brl: float  # per million tokens written by the model

    def cost_brl(self, input_tokens: int, cache_read_tokens: int, output_tokens: int) -> float:
        fresh = max(input_tokens - cache_read_tokens, 0)
        return (
            fresh * self.input_brl
            + cache_read_tokens * self.cached_input_brl
            + output_tokens * self.output_brl
        ) / TOKENS_PER_PRICE


ModelPrices = dict[tuple[str, str], ModelPrice]  # (provider, model) -> price


def _price(key: str, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelPricesInvalid(f"{key!r}: {field!r} must be a number (R$ per million tokens)")
    if not math.isfinite(value) or not 0 <= value <= MAX_PRICE_BRL:
        raise ModelPricesInvalid(f"{key!r}: {field!r} must be from 0 to {MAX_PRICE_BRL:,.0f}")
    return float(value)


def _entry(key: Any, value: Any) -> tuple[tuple[str, str], ModelPrice]:
    provider, slash, model = str(key).partition("/")
    if not slash or not provider or not model:
        raise ModelPricesInvalid(f"{key!r}: a key is '<provider>/<model>'")
    if not isinstance(value, dict):
        raise ModelPricesInvalid(f"{key!r}: the value is an object with {', '.join(PRICE_FIELDS)}")
    missing = [f for f in PRICE_FIELDS if f not in value]
    extra = sorted(set(value) - set(PRICE_FIELDS))
    if missing or extra:
        raise ModelPricesInvalid(
            f"{key!r}: needs exactly {', '.join(PRICE_FIELDS)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )
    prices = [_price(key, f, value[f]) for f in PRICE_FIELDS]
    return (provider, model), ModelPrice(*prices)


def parse_model_prices(text: str | None) -> ModelPrices:
    """The prices SKILLET_MODEL_PRICES sets (empty when unset or blank)."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ModelPricesInvalid(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ModelPricesInvalid('a JSON object: {"<provider>/<model>": {"input": ...}}')
    if len(data) > MAX_ENTRIES:
        raise ModelPricesInvalid(f"at most {MAX_ENTRIES} models")
    return dict(_entry(k, v) for k, v in data.items())
