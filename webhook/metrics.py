"""The webhook's Prometheus metrics: requests by route and outcome (core.http_metrics),
signature failures by endpoint, and how long each enqueue takes.

Every labelled series exists from the start at 0 (see core.http_metrics for why).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Histogram

from core.http_metrics import HttpMetrics

WEBHOOKS = ("cloud_api", "waha")
# Seconds: one Redis round trip (arq's enqueue script), usually about a millisecond.
ENQUEUE_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1)


class WebhookMetrics:
    def __init__(self, routes: Iterable[str]) -> None:
        self.http = HttpMetrics("skillet_webhook", routes)
        self.registry = self.http.registry
        self.signature_failures = Counter(
            "skillet_webhook_signature_failures",
            "Deliveries refused with 401: signature missing or wrong (cloud_api: "
            "X-Hub-Signature-256; waha: X-Webhook-Hmac with the session's key)",
            ["webhook"],
            registry=self.registry,
        )
        self.enqueue = Histogram(
            "skillet_webhook_enqueue_seconds",
            "Time to enqueue one inbound message's job (the Redis call)",
            buckets=ENQUEUE_BUCKETS_S,
            registry=self.registry,
        )
        for webhook in WEBHOOKS:
            self.signature_failures.labels(webhook=webhook)

    def signature_failed(self, webhook: str) -> None:
        self.signature_failures.labels(webhook=webhook if webhook in WEBHOOKS else "other").inc()

    def enqueued(self, seconds: float) -> None:
        self.enqueue.observe(seconds)
