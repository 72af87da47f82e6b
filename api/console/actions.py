"""The console's buttons and forms: each runs one admin API route through the API's gate
(api.guard.run_route), so the role it needs and the audit rows it writes (a change's, or a
refusal's) are the route's own. The form's fields become the body the route would read
(api.bodies.PRELOADED_BODY).

Success answers 303 to the page that shows the result (`?feito=<a pt-BR word>`,
pages.DONE_WORDS, picks a fixed notice), so a reload never repeats a change; a refusal shows
the page the form was on, with the refusal in words, beside its field where it names one,
and its HTTP status. A new key goes to the keys page in a
cookie of that page only (HttpOnly, SameSite=Strict, one minute), which the page shows once
and deletes: never in a URL, never stored, and a reload does not mint another key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

from api.bodies import PRELOADED_BODY
from api.console import attendance, draft_page, pages, quick_replies, team_roles
from api.console.auth import Form, Visit, set_cookie
from api.console.render import CONSOLE_PREFIX, see_other, segment
from api.guard import run_route
from core.errors import SkilletError

Body = Callable[[Form], dict[str, Any] | bytes]


def _upload(form: Form) -> bytes:
    field = form.get("file")
    # No file chosen reaches the parser as an empty body: it says "not a zip".
    return field.file.read() if isinstance(field, FileField) else b""


def _new_key(form: Form) -> dict[str, Any]:
    body: dict[str, Any] = {"role": form.get("role")}
    name = form.get("name")
    if isinstance(name, str) and name.strip():
        body["name"] = name.strip()
    return body


def _approval(form: Form) -> dict[str, Any]:
    """A draft's approval: the choice ("create" or "merge") when the page asked for one (a
    skill like it is installed, or its rehearsal loses messages)."""
    confirm = form.get("confirm")
    return {"confirm": confirm} if isinstance(confirm, str) and confirm else {}


def _invitation(form: Form) -> dict[str, Any]:
    return {
        f: v.strip() if isinstance(v := form.get(f), str) else v for f in ("email", "name", "role")
    }


def _authoring(form: Form) -> dict[str, Any]:
    return {"agent_authoring": form.get("agent_authoring")}


def _hours(form: Form) -> dict[str, Any]:
    """The hours form: every field as typed ("" clears the schedule or the closed days);
    the closed days one line or comma-separated."""

    def text(name: str) -> str:
        value = form.get(name)
        return value if isinstance(value, str) else ""

    closed = [d for d in text("closed_dates").replace("\n", ",").split(",") if d.strip()]
    return {
        "business_hours": text("business_hours"),
        "timezone": text("timezone") or None,
        "closed_dates": closed,
        "after_hours": text("after_hours") or None,
    }


def _consolidation(form: Form) -> dict[str, Any]:
    return {"consolidation": form.get("consolidation")}


def _satisfaction(form: Form) -> dict[str, Any]:
    """The satisfaction form: on or off and the three button texts, as typed."""
    buttons = [form.get(f"button_{i}") for i in range(1, 4)]
    return {
        "satisfaction": "on" if form.get("satisfaction") == "on" else "off",
        "satisfaction_buttons": [b if isinstance(b, str) else "" for b in buttons],
    }


def _persona(form: Form) -> dict[str, Any]:
    return {"name": form.get("name"), "system_prompt": form.get("system_prompt")}


def _handoff_texts(form: Form) -> dict[str, Any]:
    """The handoff texts' form: a field left blank keeps the agent's text (or the default)."""
    fields = ("handoff_ack", "handoff_wait_notice")
    return {f: v.strip() for f in fields if isinstance(v := form.get(f), str) and v.strip()}


def _model(form: Form) -> dict[str, Any]:
    """The model form: no provider chosen hands the agent back to the service's default."""
    provider, name = form.get("model_provider"), form.get("model_name")
    if not provider:
        return {"default_model": True}
    return {"model_provider": provider, "model_name": name if name else None}


def _vision(form: Form) -> dict[str, Any]:
    """The images checkbox: unchecked, a browser sends nothing for it."""
    return {"vision": form.get("vision") == "1"}


def _takeover(form: Form) -> dict[str, Any]:
    return {"force": form.get("force") == "1"}


def _release(form: Form) -> dict[str, Any]:
    return {"answer_pending": form.get("answer_pending") == "1"}


def _reply(form: Form) -> dict[str, Any]:
    text = form.get("text")
    return {"text": text if isinstance(text, str) else ""}


def _note(form: Form) -> dict[str, Any]:
    text = form.get("note")
    return {"text": text if isinstance(text, str) else ""}


def _transfer(form: Form) -> dict[str, Any]:
    return {"person_id": form.get("person_id") or None}


def _role(form: Form) -> dict[str, Any]:
    return {"role": form.get("role")}


def _quick_reply(form: Form) -> dict[str, Any]:
    return {f: v if isinstance(v := form.get(f), str) else "" for f in ("title", "text")}


def _template(form: Form) -> dict[str, Any]:
    """The template form: `template` is name|language, `params` one per line."""
    chosen = form.get("template")
    name, _, language = (chosen if isinstance(chosen, str) else "").partition("|")
    params = form.get("params")
    lines = params.splitlines() if isinstance(params, str) else []
    body: dict[str, Any] = {"name": name, "params": [p.strip() for p in lines if p.strip()]}
    if language:
        body["language"] = language
    return {"template": body}


def _proposal_confirmation(form: Form) -> dict[str, Any]:
    return {"confirm": True} if form.get("confirm") == "1" else {}


def _nothing(form: Form) -> dict[str, Any]:
    return {}


def _restored(form: Form) -> dict[str, Any]:
    return {"key": form.get("key")}


def _filled(form: Form, fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: v.strip() for f in fields if isinstance(v := form.get(f), str) and v.strip()}


def _new_channel(form: Form) -> dict[str, Any]:
    """The connect form: a field left blank is not sent (a token is then the service's)."""
    optional = ("display_phone", "access_token", "waba_id", "waha_base_url", "waha_api_key")
    return {"kind": form.get("kind"), "address": form.get("address"), **_filled(form, optional)}


def _new_token(form: Form) -> dict[str, Any]:
    return _filled(form, ("access_token", "waba_id"))


@dataclass(frozen=True)
class Action:
    path: str  # the console's POST path (its {name}/{prefix}/{id} are the API route's)
    operation: str  # the API route it runs
    on_page: pages.PageReader  # where a refusal is shown
    done: str  # where a success leads; its {id} is the path's
    body: Body | None = None
    carries_key: bool = False  # the reply's `key` goes to the next page, once
    # A field of the reply that names where a success leads ({draft} in `done`).
    reply_field: str | None = None
    carries_link: bool = False  # the reply's invitation `url` goes to the next page, once


P = CONSOLE_PREFIX
ACTIONS: tuple[Action, ...] = (
    Action(f"{P}/marketplace/{{name}}/instalar", "install_skill", pages.marketplace, "/skills"),
    Action(f"{P}/enviar", "upload_skill", pages.upload, "/skills", _upload),
    Action(f"{P}/skills/{{name}}/fixar", "pin_skill", pages.installed, "/skills"),
    Action(f"{P}/skills/{{name}}/desafixar", "unpin_skill", pages.installed, "/skills"),
    Action(f"{P}/skills/{{name}}/restaurar", "restore_skill", pages.installed, "/skills"),
    Action(f"{P}/skills/{{name}}/desinstalar", "uninstall", pages.uninstall, "/skills"),
    Action(
        f"{P}/sugestoes/{{id}}/ensinar",
        "draft_suggestion_route",
        pages.suggestions,
        "/rascunhos/{draft}",
        _nothing,
        reply_field="draft",
    ),
    Action(
        f"{P}/sugestoes/{{id}}/descartar",
        "dismiss_suggestion_route",
        pages.suggestions,
        "/sugestoes",
        _nothing,
    ),
    Action(
        f"{P}/rascunhos/{{name}}/restaurar",
        "restore_suggestion_value_route",
        draft_page.draft,
        "/rascunhos/{name}",
        _restored,
    ),
    Action(
        f"{P}/rascunhos/{{name}}/aprovar",
        "approve_draft_route",
        draft_page.draft,
        "/rascunhos",
        _approval,
    ),
    Action(
        f"{P}/rascunhos/{{name}}/rejeitar", "reject_draft_route", draft_page.draft, "/rascunhos"
    ),
    Action(
        f"{P}/propostas/{{id}}/aprovar",
        "approve_proposal_route",
        pages.proposal,
        "/propostas",
        _proposal_confirmation,
    ),
    Action(f"{P}/propostas/{{id}}/rejeitar", "reject_proposal_route", pages.proposal, "/propostas"),
    Action(f"{P}/agente/autoria", "update_settings", pages.agent, "/agente", _authoring),
    Action(f"{P}/agente/horario", "update_hours_settings", pages.agent, "/agente", _hours),
    Action(f"{P}/agente/consolidacao", "update_settings", pages.agent, "/agente", _consolidation),
    Action(f"{P}/agente/satisfacao", "update_settings", pages.agent, "/agente", _satisfaction),
    Action(f"{P}/agente/{{id}}/persona", "update_agent_route", pages.agent, "/agente", _persona),
    Action(f"{P}/agente/{{id}}/modelo", "update_agent_route", pages.agent, "/agente", _model),
    Action(f"{P}/agente/{{id}}/imagens", "update_agent_route", pages.agent, "/agente", _vision),
    Action(
        f"{P}/agente/{{id}}/atendimento",
        "update_agent_route",
        pages.agent,
        "/agente",
        _handoff_texts,
    ),
    Action(
        f"{P}/conversas/{{id}}/assumir",
        "takeover_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _takeover,
    ),
    Action(
        f"{P}/conversas/{{id}}/devolver",
        "release_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _release,
    ),
    Action(
        f"{P}/conversas/{{id}}/responder",
        "reply_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _reply,
    ),
    Action(
        f"{P}/conversas/{{id}}/template",
        "reply_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _template,
    ),
    Action(
        f"{P}/conversas/{{id}}/agendamentos/{{followup_id}}/cancelar",
        "cancel_followup_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _nothing,
    ),
    Action(
        f"{P}/conversas/{{id}}/nota",
        "create_note_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _note,
    ),
    Action(
        f"{P}/conversas/{{id}}/transferir",
        "transfer_route",
        attendance.conversation_page,
        "/conversas/{id}",
        _transfer,
    ),
    Action(f"{P}/equipe/{{id}}/papel", "update_person_route", team_roles.page, "/equipe", _role),
    Action(
        f"{P}/respostas-rapidas",
        "create_quick_reply_route",
        quick_replies.page,
        "/respostas-rapidas",
        _quick_reply,
    ),
    Action(
        f"{P}/respostas-rapidas/{{id}}",
        "update_quick_reply_route",
        quick_replies.page,
        "/respostas-rapidas",
        _quick_reply,
    ),
    Action(
        f"{P}/respostas-rapidas/{{id}}/apagar",
        "delete_quick_reply_route",
        quick_replies.page,
        "/respostas-rapidas",
    ),
    Action(f"{P}/numeros", "add_channel", pages.channels, "/numeros", _new_channel),
    Action(
        f"{P}/numeros/{{kind}}/{{address}}/token",
        "update_channel_route",
        pages.channels,
        "/numeros",
        _new_token,
    ),
    Action(f"{P}/chaves", "create_key", pages.keys, "/chaves", _new_key, carries_key=True),
    Action(f"{P}/chaves/{{prefix}}/revogar", "revoke_key", pages.keys, "/chaves"),
    Action(
        f"{P}/equipe", "create_invitation", pages.team, "/equipe", _invitation, carries_link=True
    ),
    Action(f"{P}/equipe/{{id}}/desativar", "deactivate_person_route", pages.team, "/equipe"),
)


def handler(action: Action) -> Callable[[web.Request, Visit], Any]:
    async def act(request: web.Request, visit: Visit) -> web.StreamResponse:
        assert visit.form is not None  # a POST, its CSRF token checked (api.console.auth)
        if action.body is not None:
            request[PRELOADED_BODY] = action.body(visit.form)
        route = pages.API[action.operation]
        try:
            reply = await run_route(route, request, visit.principal)
        except SkilletError as exc:
            return await pages.show(request, visit, action.on_page, error=exc)
        names = {k: segment(v) for k, v in request.match_info.items()}
        if action.reply_field is not None:
            names[action.reply_field] = segment(str(reply[action.reply_field]))
        done = action.done.format_map(names)
        response = see_other(f"{CONSOLE_PREFIX}{done}{pages.done_query(action.operation)}")
        if action.carries_key:
            set_cookie(
                request,
                response,
                pages.NEW_KEY_COOKIE,
                reply["key"],
                pages.NEW_KEY_TTL_S,
                path=CONSOLE_PREFIX + action.done,
            )
        if action.carries_link:
            set_cookie(
                request,
                response,
                pages.NEW_INVITATION_COOKIE,
                reply["url"],
                pages.NEW_KEY_TTL_S,
                path=CONSOLE_PREFIX + action.done,
            )
        return response

    act.__name__ = f"console_{action.operation}"
    return act
