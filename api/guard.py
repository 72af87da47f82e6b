"""Every /v1 request passes here: key -> org and role, role check, handler, error -> JSON.

Order: the client address's failed-authentication lock (429 `too_many_failed_auth`, before
any credential is read: api.rate_limit), then the bearer key is looked up (401 without a live
one; nothing else is read, and a presented key that is not live counts as a failure), then
the key's requests per minute (429 `too_many_requests`, when set), then the route's least
role (403), then the path's text (422, api.text), then the handler. A refusal (4xx) of a
mutating route writes one `refused` audit row, with its code, in a transaction of its own, on
the caller's org (unless the callee wrote it already, as skills.drafts does). A failure (5xx)
answers a fixed message (api.errors.public_message).

`run_route` is that gate without the HTTP answer: the console (api.console) runs the same
routes through it, so what a role may do and what is audited are decided here only.
"""

from __future__ import annotations

import json
from typing import Any

import structlog
from aiohttp import web

from api.errors import ApiError, public_message, status_of
from api.key_queries import fetch_key_owner
from api.keys import parse_bearer, parse_key, role_allows
from api.rate_limit import LIMITER, RateLimited
from api.routing import DEPS, Answer, Principal, Reply, Route
from api.text import check_path
from conversation.errors import ConversationConflict
from core.audit import AuditEntry, insert_audit
from core.db_errors import DATABASE_ERRORS, db_errors
from core.errors import SkilletError
from core.tenancy import org_connection
from core.text import storable

log = structlog.get_logger(__name__)

_UNAUTHORIZED = ApiError(
    401,
    "unauthorized",
    "Chave de API ausente, inválida ou revogada. Envie `Authorization: Bearer SUA_CHAVE` "
    "com uma chave criada por `skillet api-keys create`.",
)


def json_reply(body: Any, status: int = 200) -> web.Response:
    return web.json_response(
        body, status=status, dumps=lambda v: json.dumps(v, ensure_ascii=False, default=str)
    )


def error_reply(
    status: int, code: str, message: str, extra: dict[str, Any] | None = None
) -> web.Response:
    body = {**(extra or {}), "error": code, "message": " ".join(message.split())}
    return json_reply(body, status)


async def authenticate(pool: Any, header: str | None) -> Principal | None:
    """The caller of an `Authorization: Bearer KEY` header; None without a live key."""
    return await _owner(pool, parse_bearer(header))


async def authenticate_key(pool: Any, key: str) -> Principal | None:
    """The principal of a key typed as is (the console's sign-in); None unless live."""
    return await _owner(pool, parse_key(key.strip()))


async def _owner(pool: Any, parsed: tuple[str, bytes] | None) -> Principal | None:
    if parsed is None:
        return None
    prefix, key_hash = parsed
    with db_errors("api key lookup"):
        # Unbound (no org yet): the security-definer lookup is all this connection may read.
        async with pool.acquire() as conn:
            owner = await fetch_key_owner(conn, prefix, key_hash)
    if owner is None:
        return None
    return Principal(owner.organization_id, owner.role, owner.key_id, prefix)


def guarded(route: Route) -> Any:
    """The aiohttp handler of `route`."""

    async def handle(request: web.Request) -> web.StreamResponse:
        pool = request.app[DEPS].pool
        limiter = request.app[LIMITER]
        address = limiter.address_of(request)
        if (locked := await limiter.refuse_address(address)) is not None:
            return _error(locked)
        header = request.headers.get("Authorization")
        try:
            principal = await authenticate(pool, header)
        except SkilletError as exc:
            return _error(exc)
        if principal is None:
            if header is not None:  # a credential was presented and failed (none: just 401)
                await limiter.record_failure(address)
            return _error(_UNAUTHORIZED)
        if (limited := await limiter.refuse_key(principal.prefix)) is not None:
            return _error(limited)
        with structlog.contextvars.bound_contextvars(
            organization_id=str(principal.organization_id), actor=principal.prefix
        ):
            return await _run(route, request, principal)

    handle.__name__ = route.operation_id
    return handle


def may(principal: Principal, route: Route) -> bool:
    """Whether the principal's role reaches the route's least role."""
    return role_allows(principal.role, route.role)


async def run_route(route: Route, request: web.Request, principal: Principal) -> Reply:
    """Role check, handler, refusal audit; raises the SkilletError that refused the call.
    For the JSON routes (the console's pages run these)."""
    answer = await run_answer(route, request, principal)
    if not isinstance(answer, dict):
        raise TypeError(f"{route.operation_id} answers a file, not JSON")
    return answer


async def run_answer(route: Route, request: web.Request, principal: Principal) -> Answer:
    """run_route for any route: a JSON body, or a file response as its handler built it."""
    try:
        if not may(principal, route):
            raise ApiError(
                403,
                "forbidden",
                f"Esta chave tem o papel {principal.role.value}; esta operação pede "
                f"{route.role.value} ou acima.",
            )
        check_path(route.path, request.match_info)  # 422 before a NUL reaches a statement
        with db_errors(f"api {route.operation_id}"):
            return await route.handler(request, principal)
    except SkilletError as exc:
        if _audits_refusal(route, exc, status_of(exc)):
            await _audit_refusal(request, route, principal, exc)
        raise


async def _run(route: Route, request: web.Request, principal: Principal) -> web.StreamResponse:
    try:
        body = await run_answer(route, request, principal)
    except SkilletError as exc:
        return _error(exc)
    if isinstance(body, web.StreamResponse):
        return body
    return json_reply(body, route.status)


def _audits_refusal(route: Route, exc: SkilletError, status: int) -> bool:
    if route.action is None or not 400 <= status < 500:
        return False
    return not isinstance(exc, route.refusals_audited_by_callee)


async def _audit_refusal(
    request: web.Request, route: Route, principal: Principal, exc: SkilletError
) -> None:
    assert route.action is not None
    name = request.match_info.get("name")
    entry = AuditEntry(
        principal.organization_id,
        principal.prefix,
        route.action,
        outcome="refused",
        skill_name=None if name is None else storable(name),  # a refused one may hold NUL
        detail={"code": exc.code},
    )
    try:
        pool = request.app[DEPS].pool
        async with org_connection(pool, principal.organization_id) as conn, conn.transaction():
            await insert_audit(conn, entry)
    except DATABASE_ERRORS as exc_db:
        # The refusal still answers; its trace is lost, and said so.
        log.error("api.audit_refusal_failed", action=route.action, error=repr(exc_db)[:200])


def _error(exc: SkilletError) -> web.Response:
    status = status_of(exc)
    if status >= 500:
        log.error("api.failed", code=exc.code, error=exc.message[:300])
    else:
        log.info("api.refused", status=status, code=exc.code)
    extra = exc.extra if isinstance(exc, ApiError | ConversationConflict) else None
    response = error_reply(status, exc.code, public_message(exc), extra)
    if isinstance(exc, RateLimited):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response
