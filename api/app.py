"""The admin API's aiohttp application: the route table, the OpenAPI document, JSON errors.

Every /v1 route takes `Authorization: Bearer KEY` (api.guard); /openapi.json, /healthz and
/metrics (Prometheus text: requests by route and outcome, core.http_metrics) need none.
Lists answer `{"items": [...], "next": cursor | null}` (api.pagination). The console
(api.console) is served by the same application under /console, in HTML.
"""

from __future__ import annotations

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler as AiohttpHandler

from api.bodies import LINGER_AFTER_ANSWER_S, MULTIPART_OVERHEAD_BYTES
from api.console.render import CONSOLE_PREFIX
from api.console.routes import add_console, html_errors
from api.conversation_metrics import CONVERSATION_METRICS, ConversationMetrics
from api.guard import error_reply, guarded, json_reply
from api.openapi import HEALTH_PATH, OPENAPI_PATH, build_openapi
from api.rate_limit import LIMITER, RateLimiter
from api.route_table import ROUTES
from api.routing import DEPS, ApiDeps
from core.http_metrics import METRICS_PATH, HttpMetrics, route_paths

log = structlog.get_logger(__name__)


@web.middleware
async def json_errors(request: web.Request, handler: AiohttpHandler) -> web.StreamResponse:
    """aiohttp's own 404/405 and anything unexpected answer in the API's JSON shape (the
    console's, as pages)."""
    if request.path == CONSOLE_PREFIX or request.path.startswith(CONSOLE_PREFIX + "/"):
        return await html_errors(request, handler)
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status, "http_error")
        return error_reply(exc.status, code, exc.reason)
    except Exception as exc:
        log.exception("api.unexpected", error=repr(exc)[:300])
        return error_reply(500, "internal_error", "Erro interno; tente de novo.")


def build_app(deps: ApiDeps) -> web.Application:
    """The application; the caller owns (opens and closes) everything in `deps`."""
    app = web.Application(
        client_max_size=deps.package_limits.max_upload_bytes + MULTIPART_OVERHEAD_BYTES,
        middlewares=[json_errors],
        handler_args={"lingering_time": LINGER_AFTER_ANSWER_S},
    )
    app[DEPS] = deps
    document = build_openapi(ROUTES)

    async def openapi(request: web.Request) -> web.Response:
        return json_reply(document)

    async def health(request: web.Request) -> web.Response:
        return json_reply({"status": "ok"})

    app.router.add_get(OPENAPI_PATH, openapi)
    app.router.add_get(HEALTH_PATH, health)
    for route in ROUTES:
        app.router.add_route(route.method, route.path, guarded(route))
    add_console(app)
    metrics = HttpMetrics("skillet_api", route_paths(app))
    app.router.add_get(METRICS_PATH, metrics.serve)
    app[LIMITER] = RateLimiter(
        deps.rate_limit_counters, deps.rate_limits, deps.clock, metrics.registry
    )
    app[CONVERSATION_METRICS] = ConversationMetrics(metrics.registry)
    app.middlewares.insert(0, metrics.middleware)  # outermost: sees json_errors' answers
    return app
