"""The console's pages: each reads through the admin API's own routes (api.route_table), run
by the API's gate (api.guard.run_route), and hands the answer to a template.

So a page shows exactly what the API answers for the same key, with the same role check;
which buttons a page offers comes from the same gate (`may`), never from a rule of its own.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from api.bodies import PRELOADED_BODY
from api.console.attendance_view import reopens
from api.console.auth import SIGN_OUT_PATH, Visit, forget
from api.console.diff_lines import counts, diff_lines
from api.console.org_clock import org_clock
from api.console.refusals import refusal_sentence
from api.console.render import CONSOLE_PREFIX, html
from api.console.typed import beside_a_field, helpers, posted
from api.errors import status_of
from api.guard import may, run_route
from api.keys import Role, parse_key
from api.route_table import ROUTES
from api.routing import Reply, Route
from api.suggestion_routes import count_suggestions
from conversation.handoff.texts import HANDOFF_ACK_DEFAULT, HANDOFF_WAIT_NOTICE_DEFAULT
from core.errors import SkilletError
from turn.model_choice import PROVIDERS

API: dict[str, Route] = {r.operation_id: r for r in ROUTES}
PageData = tuple[str, dict[str, Any]]  # template, its context
PageReader = Callable[[web.Request, Visit], Awaitable[PageData]]

ROLE_NAMES = {Role.VIEWER: "leitura", Role.EDITOR: "edição", Role.ADMIN: "administração"}
# (path, label, the API read the page needs): a link shows only if the key may follow it.
NAV = (
    ("/atendimento", "Atendimento", "list_conversations_route"),
    ("/painel", "Painel", "get_insights_route"),
    ("/marketplace", "Marketplace", "list_catalog"),
    ("/skills", "Skills", "list_installed"),
    ("/enviar", "Enviar .zip", "upload_skill"),
    ("/sugestoes", "Sugestões", "list_suggestions_route"),
    ("/rascunhos", "Rascunhos", "list_drafts_route"),
    ("/propostas", "Propostas", "list_proposals_route"),
    ("/agente", "Agente", "list_agents_route"),
    ("/curador", "Curador", "list_curator_runs_route"),
    ("/conversas", "Conversas", "list_conversations_route"),
    ("/respostas-rapidas", "Respostas rápidas", "list_quick_replies_route"),
    ("/uso", "Uso", "list_token_usage_route"),
    ("/auditoria", "Auditoria", "list_audit_route"),
    ("/numeros", "Números", "list_channels_route"),
    ("/chaves", "Chaves", "list_keys"),
    ("/equipe", "Equipe", "create_invitation"),
)
# What a successful action says on the page it leads to (`?feito=<its word>`): fixed texts.
NOTICES = {
    "create_invitation": "Convite criado: envie o link abaixo à pessoa.",
    "deactivate_person_route": "Pessoa desativada: as sessões dela terminaram e as conversas "
    "que ela atendia voltaram a esperar.",
    "install_skill": "Skill instalada: o agente já a usa na próxima mensagem.",
    "upload_skill": "Pacote importado e instalado.",
    "uninstall": "Skill desinstalada (o histórico fica guardado).",
    "pin_skill": "Skill fixada: o curador não mexe nela.",
    "unpin_skill": "Skill devolvida ao curador.",
    "restore_skill": "Skill restaurada: ativa de novo. Se outra skill a tinha absorvido, esta "
    "mantém as palavras-chave dela: as duas podem ser acionadas pela mesma mensagem até alguém "
    "editar uma delas.",
    "approve_draft_route": "Rascunho aprovado e instalado: vale a partir da próxima mensagem.",
    "reject_draft_route": "Rascunho recusado (fica registrado).",
    "approve_proposal_route": "Fusão aprovada: a skill que absorve vale a partir da próxima "
    "mensagem; as absorvidas estão arquivadas (restaure em Skills, se precisar).",
    "reject_proposal_route": "Proposta recusada: nada mudou (fica registrado).",
    "revoke_key": "Chave revogada: as sessões abertas com ela terminaram.",
    "add_channel": "Número conectado: a posse foi confirmada.",
    "cancel_followup_route": "Agendamento cancelado: essa mensagem não vai mais.",
    "update_channel_route": "Número atualizado: o que esperava o token novo sai agora.",
    "update_settings": "Configuração salva.",
    "update_hours_settings": "Horário de atendimento salvo.",
    "update_agent_route": "Agente atualizado: vale a partir da próxima mensagem.",
    "takeover_route": "Conversa assumida: o agente não responde até você devolver.",
    "release_route": "Conversa devolvida ao agente.",
    "reply_route": "Resposta na fila de envio: o cliente a recebe em instantes.",
    "draft_suggestion_route": "Rascunho criado com as respostas da equipe: revise o texto, os "
    "dados removidos e as palavras-chave antes de aprovar. Nada muda até alguém aprovar.",
    "dismiss_suggestion_route": "Sugestão descartada: ela volta se uma nova resposta entrar "
    "no grupo.",
    "restore_suggestion_value_route": "Valor devolvido ao texto do rascunho.",
    "put_skill_route": "Versão publicada: o agente a usa a partir da próxima mensagem.",
    "put_file_route": "Arquivo salvo numa versão nova da skill.",
    "delete_file_route": "Arquivo removido numa versão nova da skill.",
    "rollback_route": "A skill voltou para a versão escolhida.",
    "create_note_route": "Nota salva: só a equipe a vê.",
    "transfer_route": "Conversa passada: a pessoa que a recebeu foi avisada.",
    "update_person_route": "Papel alterado.",
    "create_quick_reply_route": "Resposta rápida salva.",
    "update_quick_reply_route": "Resposta rápida alterada.",
    "delete_quick_reply_route": "Resposta rápida apagada.",
}


# The word a success leaves in the URL, by operation: pt-BR, never the route's name. An
# operation without one falls back to `?ok=<operation>` (a unit test wants a word for each).
DONE_WORDS = {
    "install_skill": "skill-instalada",
    "upload_skill": "pacote-enviado",
    "uninstall": "skill-desinstalada",
    "pin_skill": "skill-fixada",
    "unpin_skill": "skill-desafixada",
    "restore_skill": "skill-restaurada",
    "approve_draft_route": "rascunho-aprovado",
    "reject_draft_route": "rascunho-recusado",
    "approve_proposal_route": "fusao-aprovada",
    "reject_proposal_route": "proposta-recusada",
    "create_key": "chave-criada",
    "revoke_key": "chave-revogada",
    "add_channel": "numero-conectado",
    "cancel_followup_route": "agendamento-cancelado",
    "update_channel_route": "numero-atualizado",
    "update_settings": "configuracao-salva",
    "update_hours_settings": "horario-salvo",
    "update_agent_route": "agente-atualizado",
    "takeover_route": "conversa-assumida",
    "release_route": "conversa-devolvida",
    "reply_route": "resposta-enviada",
    "draft_suggestion_route": "rascunho-criado",
    "dismiss_suggestion_route": "sugestao-descartada",
    "restore_suggestion_value_route": "valor-devolvido",
    "put_skill_route": "versao-publicada",
    "put_file_route": "arquivo-salvo",
    "delete_file_route": "arquivo-removido",
    "rollback_route": "versao-restaurada",
    "create_invitation": "convite-criado",
    "deactivate_person_route": "pessoa-desativada",
    "create_note_route": "nota-salva",
    "transfer_route": "conversa-passada",
    "update_person_route": "papel-alterado",
    "create_quick_reply_route": "resposta-rapida-salva",
    "update_quick_reply_route": "resposta-rapida-alterada",
    "delete_quick_reply_route": "resposta-rapida-apagada",
}
_OPERATION_OF_WORD = {word: op for op, word in DONE_WORDS.items()}


def done_query(operation: str) -> str:
    """The query a success's redirect carries: `?feito=<word>`."""
    word = DONE_WORDS.get(operation)
    return f"?feito={word}" if word else f"?ok={operation}"


def _done_notice(request: web.Request) -> str | None:
    operation = _OPERATION_OF_WORD.get(request.query.get("feito", ""), request.query.get("ok"))
    return NOTICES.get(operation or "")


async def read(request: web.Request, visit: Visit, operation: str) -> Reply:
    return await run_route(API[operation], request, visit.principal)


def _page_href(request: web.Request, cursor: str | None) -> str | None:
    if cursor is None:
        return None
    query = {k: v for k, v in request.query.items() if k not in ("cursor", "ok", "feito")}
    return request.path + "?" + urllib.parse.urlencode({**query, "cursor": cursor})


BESIDE_THE_FIELD = "Confira o campo marcado abaixo: o que você digitou continua lá."


def _error_view(error: SkilletError | None) -> dict[str, str] | None:
    if error is None:
        return None
    return {"code": error.code, "message": refusal_sentence(error)}


def base_context(
    request: web.Request, visit: Visit, counts: dict[str, int] | None = None
) -> dict[str, Any]:
    """`counts`: a number shown beside a link of the navigation, by its API read."""
    can = {op: may(visit.principal, route) for op, route in API.items()}
    return {
        "visit": visit,
        "role_name": ROLE_NAMES[visit.principal.role],
        "can": can,
        "nav": [
            (
                CONSOLE_PREFIX + path,
                label,
                request.path.startswith(CONSOLE_PREFIX + path),
                (counts or {}).get(op),
            )
            for path, label, op in NAV
            if can[op]
        ],
        "csrf": visit.csrf,
        "sign_out": SIGN_OUT_PATH,
        "prefix": CONSOLE_PREFIX,
    }


async def show(
    request: web.Request,
    visit: Visit,
    reader: PageReader,
    *,
    error: SkilletError | None = None,
    extra: dict[str, Any] | None = None,
) -> web.Response:
    """The page `reader` builds; with `error` (an action's refusal) shown on top of it, and
    its status. If the page itself cannot be read, the error page says why."""
    status = 200 if error is None else status_of(error)
    clock = await org_clock(request, visit.principal)
    try:
        template, context = await reader(request, visit)
    except SkilletError as exc:
        template, context = "error.html", {"title": "Não foi possível abrir a página"}
        error = error or exc
        status = status_of(error)
    notice = _done_notice(request) if error is None else None
    shown = _error_view(error)
    refused = None
    # Beside its field only on the page that holds the form (not on an error page).
    if shown is not None and error is not None and visit.form and template != "error.html":
        refused = posted(request.path, visit.form, error.code, shown["message"])
        if beside_a_field(refused):
            shown = {**shown, "message": BESIDE_THE_FIELD}
    counts = {}
    if may(visit.principal, API["list_suggestions_route"]):
        counts["list_suggestions_route"] = await count_suggestions(request, visit.principal)
    return html(
        request,
        template,
        {
            **base_context(request, visit, counts),
            "clock": clock,
            **context,
            **(extra or {}),
            **helpers(refused),
            "notice": notice,
            "error": shown,
            "next_href": _page_href(request, context.get("next")),
        },
        status,
    )


def page(reader: PageReader) -> Callable[[web.Request, Visit], Awaitable[web.Response]]:
    async def handle(request: web.Request, visit: Visit) -> web.Response:
        return await show(request, visit, reader)

    return handle


async def marketplace(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_catalog")
    return "marketplace.html", {"items": reply["items"], "next": reply["next"]}


async def installed(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_installed")
    return "skills.html", {"items": reply["items"], "next": reply["next"]}


async def upload(request: web.Request, visit: Visit) -> PageData:
    return "upload.html", {"next": None}


DRAFT_STATUSES = (
    ("pending", "Pendentes"),
    ("approved", "Aprovados"),
    ("rejected", "Recusados"),
    ("all", "Todos"),
)


async def drafts(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_drafts_route")
    status = request.query.get("status", "pending")
    return "drafts.html", {
        "items": reply["items"],
        "next": reply["next"],
        "status": status,
        "statuses": DRAFT_STATUSES,
    }


async def suggestions(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_suggestions_route")
    return "suggestions.html", {"items": reply["items"], "next": reply["next"]}


async def rehearsal_of(request: web.Request, visit: Visit, body: dict[str, Any]) -> Reply:
    """The rehearsal of a change (POST /v1/rehearsals through its gate), or why it did not
    run now (busy, nothing to rehearse): a page shows either, it never fails for it."""
    request[PRELOADED_BODY] = body
    try:
        return await read(request, visit, "create_rehearsal")
    except SkilletError as exc:
        return {"error": refusal_sentence(exc)}


# suggestions.privacy's kinds of value, as a reviewer reads them.
VALUE_KINDS = {
    "pix_code": "código Pix",
    "url": "link com parâmetros",
    "email": "e-mail",
    "cpf_cnpj": "CPF/CNPJ",
    "phone": "telefone",
    "address": "endereço",
    "number": "número (4+ dígitos)",
    "name": "nome",
}


PROPOSAL_STATUSES = (
    ("pending", "Pendentes"),
    ("approved", "Aprovadas"),
    ("rejected", "Recusadas"),
    ("expired", "Expiradas"),
    ("all", "Todas"),
)


async def proposals(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_proposals_route")
    return "proposals.html", {
        "items": reply["items"],
        "next": reply["next"],
        "status": request.query.get("status", "pending"),
        "statuses": PROPOSAL_STATUSES,
    }


async def proposal(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "show_proposal_route")
    pending = reply["status"] == "pending"
    rehearsal = await rehearsal_of(request, visit, {"proposal": reply["id"]}) if pending else None
    lines = diff_lines(reply["diff"]["skill_md"])
    added, removed = counts(lines)
    return "proposal.html", {
        "proposal": reply,
        "rehearsal": rehearsal,
        "lines": lines,
        "added": added,
        "removed": removed,
        "files": reply["diff"]["files"],
        "next": None,
    }


async def uninstall(request: web.Request, visit: Visit) -> PageData:
    """Before an uninstall: what it would stop recognizing, and the button."""
    name = request.match_info["name"]
    rehearsal = await rehearsal_of(request, visit, {"uninstall": name})
    return "uninstall.html", {"name": name, "rehearsal": rehearsal, "next": None}


async def agent(request: web.Request, visit: Visit) -> PageData:
    agents = await read(request, visit, "list_agents_route")
    settings = await read(request, visit, "get_settings")
    hours = await read(request, visit, "get_hours_settings")
    answers = await read(request, visit, "list_satisfaction_route")
    return "agent.html", {
        "items": agents["items"],
        "next": agents["next"],
        "authoring": settings["agent_authoring"],
        "hours": hours,
        "reopens": reopens(hours, (await org_clock(request, visit.principal)).now),
        "consolidation": settings["consolidation"],
        "satisfaction": settings,
        "answers": answers,
        "providers": PROVIDERS,
        "ack_default": HANDOFF_ACK_DEFAULT,
        "notice_default": HANDOFF_WAIT_NOTICE_DEFAULT,
    }


async def curator(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_curator_runs_route")
    return "curator.html", {"items": reply["items"], "next": reply["next"]}


async def usage(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_token_usage_route")
    return "usage.html", {"usage": reply, "next": None}


async def audit(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_audit_route")
    return "audit.html", {"items": reply["items"], "next": reply["next"]}


async def channels(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_channels_route")
    return "channels.html", {"items": reply["items"], "next": reply["next"]}


async def channel_templates(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_channel_templates_route")
    return "templates.html", {"items": reply["items"], "address": reply["address"], "next": None}


NEW_INVITATION_COOKIE = "skillet_convite_novo"


async def team(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_people_route")
    return "team.html", {
        "items": reply["items"],
        "roles": [(r.value, ROLE_NAMES[r]) for r in Role],
        "invited": None,
    }


async def team_page(request: web.Request, visit: Visit) -> web.Response:
    """The team; right after an invitation, its link, shown this once."""
    link = request.cookies.get(NEW_INVITATION_COOKIE, "")
    response = await show(request, visit, team, extra={"invited": link or None})
    if link:
        forget(response, NEW_INVITATION_COOKIE, path=request.path)
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


NEW_KEY_COOKIE = "skillet_chave_nova"
NEW_KEY_TTL_S = 60  # from the create's redirect to the list that shows it


async def keys(request: web.Request, visit: Visit) -> PageData:
    reply = await read(request, visit, "list_keys")
    return "keys.html", {
        "items": reply["items"],
        "next": reply["next"],
        "roles": [(r.value, ROLE_NAMES[r]) for r in Role],
        "created": None,
    }


async def keys_page(request: web.Request, visit: Visit) -> web.Response:
    """The keys list; right after a create, with the new key, shown this once."""
    made = request.cookies.get(NEW_KEY_COOKIE, "")
    parsed = parse_key(made)
    created = None if parsed is None else {"key": made, "prefix": parsed[0]}
    response = await show(request, visit, keys, extra={"created": created})
    if made:
        forget(response, NEW_KEY_COOKIE, path=request.path)
    return response
