"""`/metrics` of the webhook and the admin API over real HTTP: every labelled series is there
at 0 from the start, then requests count by route and outcome, signature failures by
endpoint, and each enqueue is timed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.support import create_org
from tests.integration.webhook_support import RunningWebhook, connect_number, running_webhook
from tests.prometheus_samples import Samples, parse_samples, value
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value, waha_event
from worker.resources import Resources
from worker.settings import Settings

WEBHOOK_ROUTES = ("/webhooks/whatsapp", "/webhooks/waha", "/healthz", "/metrics", "other")
OUTCOMES = ("2xx", "3xx", "4xx", "5xx")


async def webhook_samples(hook: RunningWebhook) -> Samples:
    async with hook.http.get(hook.url + "/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        return parse_samples(await response.text())


async def api_samples(api: ApiClient) -> Samples:
    answer = await api.get("/metrics")
    assert answer.status == 200
    assert isinstance(answer.body, str)
    return parse_samples(answer.body)


def present(samples: Samples, name: str, **labels: str) -> bool:
    return (name, frozenset(labels.items())) in samples


async def test_webhook_metrics_start_at_zero_then_count(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.CLOUD_API, "111")
    requests = "skillet_webhook_requests_total"
    failures = "skillet_webhook_signature_failures_total"
    async with running_webhook(settings) as hook:
        fresh = await webhook_samples(hook)
        for route in WEBHOOK_ROUTES:
            for outcome in OUTCOMES:
                assert present(fresh, requests, route=route, outcome=outcome), (route, outcome)
        for webhook in ("cloud_api", "waha"):
            assert present(fresh, failures, webhook=webhook)
            assert value(fresh, failures, webhook=webhook) == 0
        assert value(fresh, "skillet_webhook_enqueue_seconds_count") == 0

        document = cloud_delivery(
            cloud_value("111", [cloud_text("wamid.m1", "oi"), cloud_text("wamid.m2", "frete?")])
        )
        assert (await hook.post_cloud(document)).status == 200
        assert (await hook.post_cloud(document, signature="sha256=00")).status == 401
        waha = waha_event("loja-a", "w-1", "oi")
        assert (await hook.post_waha(waha, signature="00")).status == 401
        assert (await hook.get("/nada", {})).status == 404
        samples = await webhook_samples(hook)

    cloud = "/webhooks/whatsapp"
    assert value(samples, requests, route=cloud, outcome="2xx") == 1
    assert value(samples, requests, route=cloud, outcome="4xx") == 1
    assert value(samples, requests, route="/webhooks/waha", outcome="4xx") == 1
    assert value(samples, requests, route="other", outcome="4xx") == 1
    assert value(samples, requests, route="/metrics", outcome="2xx") == 1  # the first scrape
    assert value(samples, failures, webhook="cloud_api") == 1
    assert value(samples, failures, webhook="waha") == 1
    assert value(samples, "skillet_webhook_enqueue_seconds_count") == 2
    assert value(samples, "skillet_webhook_request_seconds_count", route=cloud) == 2
    assert "wamid" not in str(samples) and "5511" not in str(samples)


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_api_metrics_count_by_route_template_and_outcome(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    requests = "skillet_api_requests_total"
    fresh = await api_samples(api)
    for outcome in OUTCOMES:
        assert present(fresh, requests, route="/v1/skills", outcome=outcome)
        assert present(fresh, requests, route="other", outcome=outcome)
    ok_before = value(fresh, requests, route="/v1/skills", outcome="2xx")
    refused_before = value(fresh, requests, route="/v1/skills", outcome="4xx")
    org = await create_org(db)
    key = await create_key(db, org, Role.ADMIN)
    assert (await api.get("/v1/skills", key)).status == 200
    assert (await api.get("/v1/skills")).status == 401
    assert (await api.get("/v1/nada", key)).status == 404
    samples = await api_samples(api)
    assert value(samples, requests, route="/v1/skills", outcome="2xx") == ok_before + 1
    assert value(samples, requests, route="/v1/skills", outcome="4xx") == refused_before + 1
    assert value(samples, requests, route="/metrics", outcome="2xx") >= 1
    assert value(samples, requests, route="other", outcome="4xx") >= 1
    assert str(org) not in str(samples)  # ids never become labels
