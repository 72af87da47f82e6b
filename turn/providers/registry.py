"""Which Model answers for an agent: (provider, model name) -> Model, built once and reused."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from turn.errors import ModelNotConfigured
from turn.model import Model

# A model name (None when the agent has none) -> its Model; raises ModelNotConfigured when
# the provider lacks credentials or needs a name.
ModelFactory = Callable[[str | None], Model]


def _unchanged(model: Model) -> Model:
    return model


class ModelRegistry:
    """`default` answers for agents without a provider; each provider's factory builds the
    others on first use (adapters are stateless, so one per (provider, name) is shared by
    every turn of the worker). `wrap` decorates each built Model (metering)."""

    def __init__(
        self,
        default: Model,
        factories: Mapping[str, ModelFactory] | None = None,
        *,
        wrap: Callable[[Model], Model] | None = None,
    ) -> None:
        self._wrap = wrap or _unchanged
        self._default = self._wrap(default)
        self._factories = dict(factories or {})
        self._built: dict[tuple[str, str | None], Model] = {}

    @property
    def default(self) -> Model:
        return self._default

    @property
    def providers(self) -> tuple[str, ...]:
        return tuple(sorted(self._factories))

    def resolve(self, provider: str | None, name: str | None) -> Model:
        """The Model for an agent's (model_provider, model_name); ModelNotConfigured if the
        provider is unknown or cannot be built (the message says what to set)."""
        if not provider:
            return self._default
        key = (provider, name or None)
        built = self._built.get(key)
        if built is not None:
            return built
        factory = self._factories.get(provider)
        if factory is None:
            known = ", ".join(self.providers) or "none"
            raise ModelNotConfigured(
                f"agent model_provider {provider!r} is not a known provider (known: {known})"
            )
        built = self._wrap(factory(name or None))
        self._built[key] = built
        return built
