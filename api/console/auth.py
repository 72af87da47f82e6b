"""Who is signed in: the session cookie checked on every request, CSRF on every POST, and the
sign-in and sign-out handlers.

A request with no live session (none, expired, or its key revoked) is sent to the sign-in
page and nothing else runs. A POST whose `csrf` field does not match the session's token is
refused with 403 before any handler reads it; nothing changes and nothing is audited (it is
not a decision of the key's holder but a page of another origin speaking in their name).

Rate limits (api.rate_limit): a failed sign-in counts against the client's address; past the
limit the sign-in page, the sign-in itself and every page answer 429 with `Retry-After`,
before any key or session is looked up. A signed-in page counts against its key's requests
per minute when that limit is set.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDictProxy

from api.console.person_auth import (
    accept,
    authenticate_person,
    invitation_page,
    open_invitation,
)
from api.console.render import CONSOLE_PREFIX, html, see_other
from api.console.session_queries import (
    delete_expired_sessions,
    delete_session,
    fetch_session_principal,
    insert_session,
)
from api.console.sessions import (
    CSRF_FIELD,
    SESSION_COOKIE,
    SESSION_TTL_S,
    SIGN_IN_COOKIE,
    SIGN_IN_TTL_S,
    csrf_token,
    hash_secret,
    mint_secret,
    tokens_match,
    well_formed,
)
from api.errors import ApiError
from api.guard import authenticate_key
from api.keys import Role
from api.rate_limit import LIMITER, RateLimited
from api.routing import DEPS, Principal
from core.db_errors import db_errors
from core.tenancy import org_connection

log = structlog.get_logger(__name__)

SIGN_IN_PATH = f"{CONSOLE_PREFIX}/entrar"
SIGN_OUT_PATH = f"{CONSOLE_PREFIX}/sair"
HOME_PATH = f"{CONSOLE_PREFIX}/atendimento"  # where a signed-in person lands
PAINEL_PATH = f"{CONSOLE_PREFIX}/painel"  # where an admin lands instead
Form = MultiDictProxy[Any]
# A POST's twin, cloned before its body is read: a refused action's page reads the API with
# other queries (a thread's next page) through clones of it (aiohttp clones no request whose
# body was read).
READ_TWIN = web.RequestKey("console_read_twin", web.Request)


@dataclass(frozen=True)
class Visit:
    """A signed-in request: who (the session's key), its CSRF token, a POST's fields."""

    principal: Principal
    csrf: str
    form: Form | None = None


Page = Callable[[web.Request, Visit], Awaitable[web.StreamResponse]]


def _https(request: web.Request) -> bool:
    # Behind a TLS proxy the hop to us is plain HTTP. A forged header only makes the cookie
    # stricter (Secure), never looser.
    forwarded = request.headers.get("X-Forwarded-Proto", "").lower()
    return request.secure or forwarded == "https"


def set_cookie(
    request: web.Request,
    response: web.StreamResponse,
    name: str,
    value: str,
    max_age_s: int,
    path: str = CONSOLE_PREFIX,
) -> None:
    """HttpOnly, Secure over HTTPS. The session is SameSite=Lax so a link into the console
    (an e-mail, a bookmark) opens signed in; a cross-site POST still lacks the CSRF token.
    The short-lived cookies (sign-in token, a new key) are Strict."""
    response.set_cookie(
        name,
        value,
        max_age=max_age_s,
        path=path,
        httponly=True,
        samesite="Lax" if name == SESSION_COOKIE else "Strict",
        secure=_https(request),
    )


def forget(response: web.StreamResponse, name: str, path: str = CONSOLE_PREFIX) -> None:
    response.del_cookie(name, path=path)


async def _principal_of(request: web.Request, secret: str | None) -> Principal | None:
    if secret is None or not well_formed(secret):
        return None
    with db_errors("console session lookup"):
        # Unbound: the security-definer lookup is all this connection may read.
        async with request.app[DEPS].pool.acquire() as conn:
            return await fetch_session_principal(conn, hash_secret(secret))


def _to_sign_in(reason: str) -> web.Response:
    response = see_other(f"{SIGN_IN_PATH}?motivo={reason}")
    forget(response, SESSION_COOKIE)
    return response


def refused_csrf(request: web.Request) -> web.Response:
    return html(
        request,
        "error.html",
        {
            "title": "Formulário recusado",
            "error": {
                "code": "csrf_invalido",
                "message": "Este formulário não veio de uma página do console aberta agora "
                "(falta o código de segurança ou ele não confere). Volte, recarregue a página "
                "e tente de novo.",
            },
        },
        403,
    )


async def _post_form(request: web.Request) -> Form:
    # Past the app's client_max_size this raises 413, which the console shows as a page; a
    # form that cannot be read (bytes that are not UTF-8, an unknown charset, a multipart
    # without its boundary) is a 400 page, never a 500.
    try:
        return await request.post()
    except (ValueError, LookupError, HttpProcessingError):
        raise ApiError(
            400,
            "invalid_form",
            "O formulário enviado não pôde ser lido (texto fora de UTF-8 ou formato "
            "quebrado). Volte, recarregue a página e envie de novo.",
        ) from None


def _limited(response: web.Response, refusal: RateLimited) -> web.Response:
    response.headers["Retry-After"] = str(refusal.retry_after_s)
    return response


def _limited_page(request: web.Request, refusal: RateLimited) -> web.Response:
    log.info("console.refused", status=429, code=refusal.code)
    page = html(
        request,
        "error.html",
        {
            "title": "Muitas tentativas",
            "error": {"code": refusal.code, "message": refusal.message},
        },
        429,
    )
    return _limited(page, refusal)


def signed_in(page: Page) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler of a console page or action: the address's lock, session, the
    key's rate, CSRF, then `page`."""

    async def handle(request: web.Request) -> web.StreamResponse:
        limiter = request.app[LIMITER]
        if (locked := await limiter.refuse_address(limiter.address_of(request))) is not None:
            return _limited_page(request, locked)
        secret = request.cookies.get(SESSION_COOKIE)
        principal = await _principal_of(request, secret)
        if principal is None or secret is None:
            return _to_sign_in("sessao" if secret else "entrar")
        if (limited := await limiter.refuse_key(principal.prefix)) is not None:
            return _limited_page(request, limited)
        visit = Visit(principal, csrf_token(secret))
        if request.method == "POST":
            request[READ_TWIN] = request.clone(method="GET")
            form = await _post_form(request)
            given = form.get(CSRF_FIELD)
            if not isinstance(given, str) or not tokens_match(visit.csrf, given):
                log.warning("console.csrf_refused", path=request.path)
                return refused_csrf(request)
            visit = Visit(principal, visit.csrf, form)
        with structlog.contextvars.bound_contextvars(
            organization_id=str(principal.organization_id), actor=principal.prefix
        ):
            return await page(request, visit)

    return handle


_REASONS = {
    "sessao": "Sua sessão terminou (expirou, o acesso foi revogado ou você saiu). Entre de novo.",
    "saiu": "Você saiu do console.",
}


def _sign_in_page(
    request: web.Request,
    error: str | None,
    status: int,
    code: str = "chave_invalida",
    email: str = "",
) -> web.Response:
    token = mint_secret()
    response = html(
        request,
        "sign_in.html",
        {
            "visit": None,
            "csrf": token,
            "notice": _REASONS.get(request.query.get("motivo", "")),
            "email": email,
            "error": None if error is None else {"code": code, "message": error},
        },
        status,
    )
    set_cookie(request, response, SIGN_IN_COOKIE, token, SIGN_IN_TTL_S)
    return response


def _locked_sign_in(request: web.Request, refusal: RateLimited) -> web.Response:
    log.info("console.refused", status=429, code=refusal.code)
    page = _sign_in_page(request, refusal.message, 429, refusal.code)
    return _limited(page, refusal)


async def sign_in_form(request: web.Request) -> web.StreamResponse:
    limiter = request.app[LIMITER]
    if (locked := await limiter.refuse_address(limiter.address_of(request))) is not None:
        return _locked_sign_in(request, locked)
    return _sign_in_page(request, None, 200)


async def sign_in(request: web.Request) -> web.StreamResponse:
    limiter = request.app[LIMITER]
    address = limiter.address_of(request)
    if (locked := await limiter.refuse_address(address)) is not None:
        return _locked_sign_in(request, locked)
    form = await _post_form(request)
    given = form.get(CSRF_FIELD)
    if not isinstance(given, str) or not tokens_match(
        request.cookies.get(SIGN_IN_COOKIE, ""), given
    ):
        return refused_csrf(request)
    pool = request.app[DEPS].pool
    email, password, key = form.get("email"), form.get("password"), form.get("key")
    principal = None
    if isinstance(email, str) and email.strip():
        checked = await authenticate_person(
            pool, email, password if isinstance(password, str) else ""
        )
        if checked.refusal is not None:
            await limiter.record_failure(address)
            return _locked_sign_in(request, checked.refusal)
        principal = checked.principal
        if principal is None:
            await limiter.record_failure(address)
            return _sign_in_page(
                request,
                "E-mail ou senha não conferem.",
                401,
                "senha_invalida",
                email=email.strip()[:254],
            )
    elif isinstance(key, str):
        with db_errors("console sign-in"):
            principal = await authenticate_key(pool, key)
    if principal is None:
        await limiter.record_failure(address)
        return _sign_in_page(
            request, "Chave inválida ou revogada. Cole a chave inteira (começa com skt_).", 401
        )
    return await start_session(request, principal)


def home_of(principal: Principal) -> str:
    """The first page: the Painel for an admin, Atendimento for everyone else."""
    return PAINEL_PATH if principal.role is Role.ADMIN else HOME_PATH


async def start_session(request: web.Request, principal: Principal) -> web.StreamResponse:
    """A new session for `principal` (its cookie set), and the way to the home page."""
    pool = request.app[DEPS].pool
    secret = mint_secret()
    with db_errors("console sign-in"):
        async with org_connection(pool, principal.organization_id) as conn, conn.transaction():
            await delete_expired_sessions(conn, principal.organization_id)
            await insert_session(conn, hash_secret(secret), principal, SESSION_TTL_S)
    log.info(
        "console.signed_in", organization_id=str(principal.organization_id), actor=principal.prefix
    )
    response = see_other(home_of(principal))
    set_cookie(request, response, SESSION_COOKIE, secret, SESSION_TTL_S)
    forget(response, SIGN_IN_COOKIE)
    return response


async def _sign_out(request: web.Request, visit: Visit) -> web.StreamResponse:
    secret = request.cookies.get(SESSION_COOKIE, "")
    org = visit.principal.organization_id
    with db_errors("console sign-out"):
        async with org_connection(request.app[DEPS].pool, org) as conn:
            await delete_session(conn, org, hash_secret(secret))
    return _to_sign_in("saiu")


sign_out = signed_in(_sign_out)


async def _refused_invitation(request: web.Request, address: str) -> web.Response:
    # A link that opens nothing counts as a failed sign-in (tokens are not guessed for free).
    await request.app[LIMITER].record_failure(address)
    return invitation_page(
        request,
        None,
        "",
        404,
        {
            "code": "convite_invalido",
            "message": "Este convite não vale: foi usado, venceu, foi trocado por um mais novo "
            "ou o link está incompleto. Peça um novo a quem administra a equipe.",
        },
    )


async def invitation_form(request: web.Request) -> web.StreamResponse:
    limiter = request.app[LIMITER]
    address = limiter.address_of(request)
    if (locked := await limiter.refuse_address(address)) is not None:
        return _locked_sign_in(request, locked)
    invitation = await open_invitation(request, request.match_info["token"])
    if invitation is None:
        return await _refused_invitation(request, address)
    token = mint_secret()
    response = invitation_page(request, invitation, token, 200)
    set_cookie(request, response, SIGN_IN_COOKIE, token, SIGN_IN_TTL_S)
    return response


async def invitation_accept(request: web.Request) -> web.StreamResponse:
    limiter = request.app[LIMITER]
    address = limiter.address_of(request)
    if (locked := await limiter.refuse_address(address)) is not None:
        return _locked_sign_in(request, locked)
    form = await _post_form(request)
    given = form.get(CSRF_FIELD)
    cookie = request.cookies.get(SIGN_IN_COOKIE, "")
    if not isinstance(given, str) or not tokens_match(cookie, given):
        return refused_csrf(request)
    invitation = await open_invitation(request, request.match_info["token"])
    if invitation is None:
        return await _refused_invitation(request, address)
    password, again = form.get("password"), form.get("password_again")
    if not isinstance(password, str) or password != again:
        outcome: Principal | str = "As duas senhas não são iguais."
    else:
        outcome = await accept(request, invitation, password)
    if isinstance(outcome, str):
        error = {"code": "senha_recusada", "message": outcome}
        return invitation_page(request, invitation, cookie, 422, error)
    response = await start_session(request, outcome)
    response.headers.update({"Referrer-Policy": "no-referrer"})
    return response
