"""The API's metrics of people in conversations: handoffs from the console, and how long a
customer waited from the handoff to a person's first reply. On the API's own registry
(served at /metrics with its request metrics)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

# Seconds from a handoff to a person's first reply: a minute to a working day.
FIRST_REPLY_BUCKETS_S = (30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800)


class ConversationMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.handoffs = Counter(
            "skillet_handoffs",
            "Conversations handed to a person through the API or console (cause console); "
            "the worker counts the causes tool and customer",
            ["cause"],
            registry=registry,
        )
        self.handoffs.labels(cause="console")
        self.first_reply = Histogram(
            "skillet_handoff_first_reply_seconds",
            "Seconds from a conversation's handoff to a person's first reply",
            buckets=FIRST_REPLY_BUCKETS_S,
            registry=registry,
        )

    def handed_off(self) -> None:
        self.handoffs.labels(cause="console").inc()

    def first_replied(self, waited_s: float) -> None:
        self.first_reply.observe(max(waited_s, 0.0))


CONVERSATION_METRICS = web.AppKey("conversation_metrics", ConversationMetrics)
