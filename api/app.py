"""The admin API's aiohttp application: the route table, the OpenAPI document, JSON errors.

Every /v1 route takes `Authorization: Bearer KEY` (api.guard); /openapi.json and /healthz
need none. Lists answer `{"items": [...], "next": cursor | null}` (api.pagination).
"""

from __future__ import annotations

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler as AiohttpHandler

from api import admin_routes as admin
from api import draft_routes as drafts
from api import history_routes as history
from api import skill_routes as skills
from api.bodies import MAX_UPLOAD_BYTES, MULTIPART_OVERHEAD_BYTES
from api.guard import error_reply, guarded, json_reply
from api.keys import Role
from api.openapi import HEALTH_PATH, OPENAPI_PATH, build_openapi
from api.routing import DEPS, ApiDeps, Route
from skills.drafts import DraftError

log = structlog.get_logger(__name__)

V, E, A = Role.VIEWER, Role.EDITOR, Role.ADMIN
PAGED = ("limit", "cursor")
DECIDED = (DraftError,)  # skills.drafts writes its refusals' audit rows itself

ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        "/v1/catalog",
        skills.list_catalog,
        V,
        "skills do catálogo não instaladas",
        tags=("skills",),
    ),
    Route(
        "POST",
        "/v1/catalog/{name}/install",
        skills.install_skill,
        E,
        "instala uma skill do catálogo",
        action="skill.install",
        status=201,
        tags=("skills",),
    ),
    Route(
        "GET",
        "/v1/skills",
        skills.list_installed,
        V,
        "skills instaladas: estado, fixada, versão, origem",
        query=PAGED,
        tags=("skills",),
    ),
    Route(
        "POST",
        "/v1/skills",
        skills.upload_skill,
        E,
        "importa ou personaliza uma skill (.zip no corpo ou multipart `file`)",
        action="skill.import",
        body="zip",
        tags=("skills",),
    ),
    Route(
        "DELETE",
        "/v1/skills/{name}",
        skills.uninstall,
        E,
        "desinstala (o histórico fica)",
        action="skill.uninstall",
        tags=("skills",),
    ),
    Route(
        "POST",
        "/v1/skills/{name}/pin",
        skills.pin_skill,
        E,
        "fixa (o curador não mexe)",
        action="skill.pin",
        tags=("skills",),
    ),
    Route(
        "POST",
        "/v1/skills/{name}/unpin",
        skills.unpin_skill,
        E,
        "devolve ao curador",
        action="skill.unpin",
        tags=("skills",),
    ),
    Route(
        "POST",
        "/v1/skills/{name}/restore",
        skills.restore_skill,
        E,
        "arquivada -> ativa",
        action="skill.restore",
        tags=("skills",),
    ),
    Route(
        "GET",
        "/v1/skills/{name}/activations",
        skills.skill_activations,
        V,
        "ativações por dia (UTC): 7 e 30 dias",
        tags=("skills",),
    ),
    Route(
        "GET",
        "/v1/drafts",
        drafts.list_drafts_route,
        V,
        "rascunhos do agente",
        query=(*PAGED, "status"),
        tags=("drafts",),
    ),
    Route(
        "GET",
        "/v1/drafts/{name}",
        drafts.show_draft_route,
        V,
        "o rascunho pendente e o diff contra a versão instalada",
        tags=("drafts",),
    ),
    Route(
        "POST",
        "/v1/drafts/{name}/approve",
        drafts.approve_draft_route,
        E,
        "aprova (instala) o rascunho",
        action="draft.approve",
        refusals_audited_by_callee=DECIDED,
        tags=("drafts",),
    ),
    Route(
        "POST",
        "/v1/drafts/{name}/reject",
        drafts.reject_draft_route,
        E,
        "recusa o rascunho (fica registrado)",
        action="draft.reject",
        refusals_audited_by_callee=DECIDED,
        tags=("drafts",),
    ),
    Route(
        "GET",
        "/v1/settings",
        drafts.get_settings,
        V,
        "configurações da organização",
        tags=("settings",),
    ),
    Route(
        "PATCH",
        "/v1/settings",
        drafts.update_settings,
        A,
        "muda agent_authoring",
        action="settings.agent_authoring",
        body="json",
        tags=("settings",),
    ),
    Route(
        "GET",
        "/v1/curator/runs",
        history.list_curator_runs_route,
        V,
        "relatórios do curador",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/conversations",
        history.list_conversations_route,
        V,
        "conversas",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/conversations/{id}/messages",
        history.list_messages_route,
        V,
        "mensagens e respostas de uma conversa",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/audit",
        history.list_audit_route,
        V,
        "registro de auditoria",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/dead-letters",
        history.list_dead_letters_route,
        V,
        "trabalhos que falharam de vez",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "POST",
        "/v1/dead-letters/{id}/requeue",
        history.requeue_dead_letter,
        A,
        "reenfileira um trabalho que falhou",
        action="dead_letter.requeue",
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/agents",
        admin.list_agents_route,
        V,
        "agentes: persona e modelo",
        tags=("admin",),
    ),
    Route(
        "PATCH",
        "/v1/agents/{id}",
        admin.update_agent_route,
        A,
        "muda nome, persona ou modelo",
        action="agent.update",
        body="json",
        tags=("admin",),
    ),
    Route(
        "GET", "/v1/channels", admin.list_channels_route, V, "números de WhatsApp", tags=("admin",)
    ),
    Route(
        "POST",
        "/v1/channels",
        admin.add_channel,
        A,
        "conecta um número",
        action="channel.add",
        status=201,
        body="json",
        tags=("admin",),
    ),
    Route(
        "PATCH",
        "/v1/channels/{kind}/{address}",
        admin.update_channel_route,
        A,
        "muda quem atende o número / se responde não-texto",
        action="channel.update",
        body="json",
        tags=("admin",),
    ),
    Route(
        "GET", "/v1/api-keys", admin.list_keys, A, "chaves de API da organização", tags=("admin",)
    ),
    Route(
        "POST",
        "/v1/api-keys",
        admin.create_key,
        A,
        "cria uma chave (mostrada uma vez)",
        action="api_key.create",
        status=201,
        body="json",
        tags=("admin",),
    ),
    Route(
        "DELETE",
        "/v1/api-keys/{prefix}",
        admin.revoke_key,
        A,
        "revoga uma chave (vale na próxima requisição)",
        action="api_key.revoke",
        tags=("admin",),
    ),
)


@web.middleware
async def json_errors(request: web.Request, handler: AiohttpHandler) -> web.StreamResponse:
    """aiohttp's own 404/405 and anything unexpected answer in the API's JSON shape."""
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
        client_max_size=MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES, middlewares=[json_errors]
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
    return app
