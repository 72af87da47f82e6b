"""What a turn reports to metrics: a narrow protocol, and a no-op default for tests and the CLI.

The worker's Prometheus implementation is `worker.metrics.WorkerMetrics`; the turn never sees
Prometheus. Arguments are counts and codes only, never text, phone numbers or org ids.
"""

from __future__ import annotations

from typing import Protocol


class TurnMetrics(Protocol):
    def skills_matched(self, matched: int, probes: int, by_intent: int) -> None:
        """One model turn matched `matched` skills (bodies injected; `by_intent` of them only
        by a catalog intent model) and `probes` probe names."""
        ...

    def tool_called(self, tool: str, error_code: str | None) -> None:
        """The model called `tool`; `error_code` None means it succeeded."""
        ...

    def handed_off(self, cause: str) -> None:
        """A turn's commit handed the conversation to a person ('tool' | 'customer')."""
        ...

    def opt_chosen(self, choice: str) -> None:
        """A customer's opt-out ('out') or opt-in ('in') word was recorded and confirmed."""
        ...


class NoTurnMetrics:
    """Records nothing."""

    def skills_matched(self, matched: int, probes: int, by_intent: int) -> None:
        return None

    def tool_called(self, tool: str, error_code: str | None) -> None:
        return None

    def handed_off(self, cause: str) -> None:
        return None

    def opt_chosen(self, choice: str) -> None:
        return None


NO_TURN_METRICS: TurnMetrics = NoTurnMetrics()
