"""The webhook's HTTP surface (aiohttp): verify, parse, route, enqueue (and record statuses).

    GET  /webhooks/whatsapp   Cloud API verification handshake (hub.challenge echo)
    POST /webhooks/whatsapp   Cloud API deliveries, X-Hub-Signature-256 (HMAC-SHA256)
    POST /webhooks/waha       WAHA events, X-Webhook-Hmac (HMAC-SHA512) with the key of the
                              event's session (its channel's own, else the global fallback)
    GET  /healthz             liveness
    GET  /metrics             Prometheus text (webhook.metrics): requests by route and
                              outcome, signature failures, enqueue latency

Answers: 200 once a delivery is handled (including events that start no turn, numbers no
org connected and events the parser could not read, logged as `webhook.skipped` with reason
`unparseable`: a retry would not change any of that), 401 bad signature, 400 malformed JSON, 413
over the size cap, 503 when the endpoint (or the WAHA session) has no secret configured or
Postgres/Redis failed (the provider retries later; enqueueing is idempotent per message id).

Order of checks. Cloud API: size cap -> signature over the raw bytes -> JSON -> parse, so
nothing unauthenticated is parsed. WAHA: size cap -> JSON (bounded: the capped body, its
nesting by the decoder's recursion limit) -> the signature over the raw bytes, under the key
of the session the event names (checked by `skillet_waha_signature_valid` in the database
when the channel has a key of its own, else against the global key) -> parse. The key
depends on the session, so the body is decoded before it is authenticated; nothing is
parsed into a message, stored or enqueued before the signature holds.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from aiohttp import web
from arq.connections import ArqRedis
from redis.exceptions import RedisError

from channels.waha_lids import LidResolver
from core.db_errors import DATABASE_ERRORS
from core.http_metrics import METRICS_PATH, route_paths
from webhook.cloud_api import parse_cloud_api
from webhook.config import WebhookConfig
from webhook.events import Delivery, storable_id
from webhook.ingest import ingest
from webhook.metrics import WebhookMetrics
from webhook.signatures import cloud_api_signature_ok
from webhook.waha import parse_waha
from webhook.waha_keys import WahaVerdict, waha_verdict

log = structlog.get_logger(__name__)

CLOUD_API_PATH = "/webhooks/whatsapp"
WAHA_PATH = "/webhooks/waha"
HEALTH_PATH = "/healthz"

Clock = Callable[[], datetime]

CONFIG = web.AppKey("config", WebhookConfig)
POOL = web.AppKey("pool", object)  # asyncpg.Pool (untyped library)
QUEUE = web.AppKey("queue", ArqRedis)
LIDS: web.AppKey[LidResolver | None] = web.AppKey("lids")
CLOCK: web.AppKey[Clock] = web.AppKey("clock")
METRICS = web.AppKey("metrics", WebhookMetrics)

# Our dependencies failing: answer 503 so the provider delivers again later.
_UNAVAILABLE: tuple[type[BaseException], ...] = (*DATABASE_ERRORS, RedisError)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def build_app(
    config: WebhookConfig,
    *,
    pool: Any,
    queue: ArqRedis,
    clock: Clock = _utc_now,
    lids: LidResolver | None = None,
) -> web.Application:
    """The aiohttp application; the caller owns (opens and closes) `pool`, `queue` and the
    HTTP session behind `lids` (WAHA's lid -> phone map; None: never asked)."""
    app = web.Application(client_max_size=config.max_body_bytes)
    app[CONFIG] = config
    app[POOL] = pool
    app[QUEUE] = queue
    app[CLOCK] = clock
    app[LIDS] = lids
    app.router.add_get(CLOUD_API_PATH, cloud_api_handshake)
    app.router.add_post(CLOUD_API_PATH, cloud_api_delivery)
    app.router.add_post(WAHA_PATH, waha_delivery)
    app.router.add_get(HEALTH_PATH, health)
    metrics = WebhookMetrics(route_paths(app))
    app[METRICS] = metrics
    app.router.add_get(METRICS_PATH, metrics.http.serve)
    app.middlewares.append(metrics.http.middleware)
    return app


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def cloud_api_handshake(request: web.Request) -> web.Response:
    """Meta's subscription check: echo hub.challenge when hub.verify_token is ours."""
    token = request.app[CONFIG].verify_token
    if not token:
        return _refuse(503, "not_configured", "SKILLET_WHATSAPP_VERIFY_TOKEN is not set")
    given = request.query.get("hub.verify_token", "")
    if request.query.get("hub.mode") == "subscribe" and hmac.compare_digest(
        given.encode(), token.encode()
    ):
        log.info("webhook.handshake_accepted")
        return web.Response(text=request.query.get("hub.challenge", ""))
    return _refuse(403, "handshake_refused", "hub.mode/hub.verify_token do not match")


async def cloud_api_delivery(request: web.Request) -> web.Response:
    with structlog.contextvars.bound_contextvars(webhook="cloud_api"):
        secret = request.app[CONFIG].app_secret
        if not secret:
            return _refuse(503, "not_configured", "no secret configured for cloud_api")
        body = await _read_body(request)
        if isinstance(body, web.Response):
            return body
        signature = request.headers.get("X-Hub-Signature-256")
        if not cloud_api_signature_ok(secret, body, signature):
            request.app[METRICS].signature_failed("cloud_api")
            return _refuse(401, "bad_signature", "signature missing or wrong")
        document = _decoded(body)
        if isinstance(document, web.Response):
            return document
        return await _ingested(request, parse_cloud_api(document, request.app[CLOCK]()))


async def waha_delivery(request: web.Request) -> web.Response:
    with structlog.contextvars.bound_contextvars(webhook="waha"):
        body = await _read_body(request)
        if isinstance(body, web.Response):
            return body
        document = _decoded(body)
        if isinstance(document, web.Response):
            return document
        session = document.get("session") if isinstance(document, dict) else None
        headers = request.headers
        try:
            verdict = await waha_verdict(
                request.app[POOL],
                storable_id(session),
                body,
                headers.get("X-Webhook-Hmac"),
                headers.get("X-Webhook-Hmac-Algorithm"),
                request.app[CONFIG].waha_hmac_key,
            )
        except _UNAVAILABLE as exc:
            return _unavailable(exc)
        if verdict is WahaVerdict.NOT_CONFIGURED:
            return _refuse(503, "not_configured", "no WAHA key for this session, nor a global one")
        if verdict is not WahaVerdict.VALID:
            request.app[METRICS].signature_failed("waha")
            return _refuse(401, "bad_signature", "signature missing or wrong")
        return await _ingested(request, parse_waha(document, request.app[CLOCK]()))


def _decoded(body: bytes) -> Any:
    """The body's JSON, or a 400; the body is already capped, deep nesting is refused by the
    decoder's recursion limit."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return _refuse(400, "malformed_json", "body is not JSON")


async def _ingested(request: web.Request, delivery: Delivery) -> web.Response:
    try:
        report = await ingest(
            request.app[POOL],
            request.app[QUEUE],
            delivery,
            coalesce_ms=request.app[CONFIG].coalesce_ms,
            lids=request.app[LIDS],
            observe_enqueue_s=request.app[METRICS].enqueued,
            transcribes_voice=request.app[CONFIG].transcribes_voice,
            negative_reactions=request.app[CONFIG].negative_reactions,
        )
    except _UNAVAILABLE as exc:
        return _unavailable(exc)
    answer = report.as_json()
    log.info("webhook.handled", **answer)
    return web.json_response(answer)


def _unavailable(exc: BaseException) -> web.Response:
    log.error("webhook.unavailable", error=repr(exc)[:300])
    return _refuse(503, "unavailable", "try again later")


async def _read_body(request: web.Request) -> bytes | web.Response:
    limit = request.app[CONFIG].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        return _refuse(413, "too_large", f"body over {limit} bytes")
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:  # chunked, or a lying Content-Length
        return _refuse(413, "too_large", f"body over {limit} bytes")


def _refuse(status: int, code: str, message: str) -> web.Response:
    log.warning("webhook.refused", status=status, code=code)
    return web.json_response({"error": code, "message": message}, status=status)
