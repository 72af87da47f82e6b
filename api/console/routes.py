"""The console's routes on the API's application: sign-in, pages, actions, one CSS file.

Only the sign-in page and the static files answer without a session. The console's routes
are HTML and stay out of /openapi.json (that document is the JSON API's).
"""

from __future__ import annotations

from pathlib import Path

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler as AiohttpHandler

from api.console import (
    actions,
    attendance,
    conversation_list,
    draft_page,
    media,
    notices,
    pages,
    painel,
    quick_replies,
    skill_editor,
)
from api.console.auth import (
    SIGN_IN_PATH,
    SIGN_OUT_PATH,
    Visit,
    home_of,
    invitation_accept,
    invitation_form,
    sign_in,
    sign_in_form,
    sign_out,
    signed_in,
)
from api.console.refusals import refusal_sentence
from api.console.render import CONSOLE_PREFIX, TEMPLATES, build_templates, html, see_other
from api.errors import status_of
from api.invitations import INVITATION_PATH
from core.errors import SkilletError

log = structlog.get_logger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
P = CONSOLE_PREFIX
PAGES = (
    ("/painel", painel.painel),
    ("/atendimento", attendance.queue_page),
    ("/marketplace", pages.marketplace),
    ("/skills", pages.installed),
    ("/skills/{name}/desinstalar", pages.uninstall),
    ("/enviar", pages.upload),
    ("/sugestoes", pages.suggestions),
    ("/rascunhos", pages.drafts),
    ("/propostas", pages.proposals),
    ("/propostas/{id}", pages.proposal),
    ("/agente", pages.agent),
    ("/curador", pages.curator),
    ("/conversas", conversation_list.conversations),
    ("/conversas/{id}", attendance.conversation_page),
    ("/respostas-rapidas", quick_replies.page),
    ("/numeros/{kind}/{address}/templates", pages.channel_templates),
    ("/uso", pages.usage),
    ("/auditoria", pages.audit),
    ("/numeros", pages.channels),
)
_HTTP_MESSAGES = {
    404: "Esta página não existe.",
    405: "Esta página não aceita esse tipo de pedido.",
    413: "O envio passa de 8 MiB; um pacote de skill tem no máximo 5 MiB descompactado.",
}  # any other status: a fixed sentence (aiohttp's reason is English)


def _failure(request: web.Request, status: int, code: str, message: str) -> web.Response:
    return html(
        request,
        "error.html",
        {"visit": None, "title": "Algo deu errado", "error": {"code": code, "message": message}},
        status,
    )


async def html_errors(request: web.Request, handler: AiohttpHandler) -> web.StreamResponse:
    """What the API's middleware does in JSON, as a page: aiohttp's own refusals, errors that
    escaped a page (the database down), anything unexpected."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = _HTTP_MESSAGES.get(exc.status, "Este pedido não pôde ser atendido.")
        return _failure(request, exc.status, "http_error", message)
    except SkilletError as exc:
        status = status_of(exc)
        if status >= 500:
            log.error("console.failed", code=exc.code, error=exc.message[:300])
        else:
            log.info("console.refused", status=status, code=exc.code)
        return _failure(request, status, exc.code, refusal_sentence(exc))
    except Exception as exc:
        log.exception("console.unexpected", error=repr(exc)[:300])
        return _failure(request, 500, "internal_error", "Erro interno; tente de novo.")


async def _home(request: web.Request, visit: Visit) -> web.StreamResponse:
    return see_other(home_of(visit.principal))


def add_console(app: web.Application) -> None:
    app[TEMPLATES] = build_templates()
    app.router.add_get(P, signed_in(_home))
    app.router.add_get(P + "/", signed_in(_home))
    app.router.add_get(SIGN_IN_PATH, sign_in_form)
    app.router.add_post(SIGN_IN_PATH, sign_in)
    app.router.add_post(SIGN_OUT_PATH, sign_out)
    skill_editor.add_routes(app)
    draft_page.add_routes(app)
    app.router.add_get(INVITATION_PATH + "/{token}", invitation_form)
    app.router.add_post(INVITATION_PATH + "/{token}", invitation_accept)
    for path, reader in PAGES:
        app.router.add_get(P + path, signed_in(pages.page(reader)))
    app.router.add_get(P + "/chaves", signed_in(pages.keys_page))
    app.router.add_get(P + "/equipe", signed_in(pages.team_page))
    app.router.add_get(P + "/painel.csv", signed_in(painel.painel_csv))
    # What the Atendimento pages' script polls (static/atendimento.js).
    app.router.add_get(P + "/atendimento/dados", signed_in(attendance.queue_json))
    # What every page's notifications poll (static/avisos.js).
    app.router.add_get(P + "/avisos/dados", signed_in(notices.notices_json))
    app.router.add_get(P + "/conversas/{id}/dados", signed_in(attendance.conversation_json))
    app.router.add_get(P + "/conversas/{id}/midia/{message_id}", signed_in(media.media_file))
    for action in actions.ACTIONS:
        app.router.add_post(action.path, signed_in(actions.handler(action)))
    app.router.add_static(P + "/static", STATIC_DIR, show_index=False, follow_symlinks=False)
