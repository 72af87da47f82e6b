"""One org with something on every console page, and the page addresses to visit in their
main states: what the words test and the small-screen test walk.

The data is real: the number and its templates as the sync leaves them, a conversation the
agent answered and scheduled a follow-up in (a real burst worker and the fake Graph API),
one a customer waits in, one the company phone holds, skills installed from the catalog, a
draft and a merge proposal, a curator report with every reason it skips, a person invited,
and audit rows written by the console's own forms (a takeover, a release, the agent's model).

`PAGES` names every GET route of the console that answers a page, with the addresses that
show it; a route it does not name is either in `NOT_PAGES` (JSON, a file, a redirect) or a
test fails: a page added later must be added here.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import aiohttp
import asyncpg
from aiohttp import web

from api.console.routes import add_console
from api.keys import Role
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import ApiClient, create_key
from tests.integration.rehearsal_support import pending_proposal
from tests.integration.support import publish, run_burst
from tests.integration.test_followups import SchedulingModel, _reminder, _sync
from tests.integration.test_templates import NUMBER, customer_says, setup_number
from tests.integration.whatsapp_fakes import FakeGraphApi
from worker.resources import Resources
from worker.settings import Settings

# GET routes of the console that are not pages, and why.
NOT_PAGES = {
    "/console": "a redirect to the first page (Painel for an admin, else Atendimento)",
    "/console/": "a redirect to the first page (Painel for an admin, else Atendimento)",
    "/console/painel.csv": "the Painel's series, a CSV file",
    "/console/palavras-chave": "JSON for the keyword preview",
    "/console/atendimento/dados": "JSON the Atendimento script polls",
    "/console/conversas/{id}/dados": "JSON the conversation script polls",
    "/console/avisos/dados": "JSON every page's notifications script polls",
    "/console/conversas/{id}/midia/{message_id}": "a customer's file",
    "/console/skills/{name}/arquivos/{path}": "a skill's file, downloaded",
    "/console/rascunhos/{name}/arquivos/{path}": "a draft's file, downloaded",
    "/console/static": "the stylesheet and scripts",
}
PHONE_CONTACT = "5511955554444"
WAITING_CONTACT = "5511933332222"


@dataclass
class Tour:
    org: uuid.UUID
    admin: str
    editor: str
    viewer: str
    conversation: uuid.UUID  # the agent's, with a follow-up and templates
    phone_held: uuid.UUID
    waiting: uuid.UUID
    proposal: uuid.UUID
    invitation_url: str
    # route path -> [(role, address)]: every page in its main states
    pages: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def console_get_routes() -> set[str]:
    """Every GET path the console adds to the API's application, as its route names it."""
    app = web.Application()
    add_console(app)
    paths = set()
    for route in app.router.routes():
        if route.method != "GET":
            continue
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        paths.add(re.sub(r"\{(\w+):[^}]*\}", r"{\1}", str(path)))
    return paths


async def _conversation_of(db: asyncpg.Connection, org: uuid.UUID, contact: str) -> uuid.UUID:
    row = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        contact,
    )
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body, created_at, received_at) values "
        "($1, $2, 'inbound', 'whatsapp', $3, 'Oi, vocês fazem clareamento?', "
        "now() - interval '26 hours', now() - interval '26 hours')",
        org,
        row,
        uuid.uuid4().hex,
    )
    return uuid.UUID(str(row))


async def _skills(db: asyncpg.Connection, resources: Resources, org: uuid.UUID) -> uuid.UUID:
    """Catalog skills (one not installed), installed ones, a draft, a proposal."""
    store = resources.store
    await publish(db, store, None, "frete", keywords=["frete"], created_by="platform")
    for name, words in (("agenda", ["agendar", "horário"]), ("precos", ["preço", "valor"])):
        await publish(db, store, org, name, keywords=words, created_by="agent")
    author = SkillAuthor(
        db,
        store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )
    await author.create(
        "clareamento", "Clareamento dental", "Explique o clareamento.", ["clareamento"]
    )
    return await pending_proposal(db, org, "agenda", "precos", ["agendar", "preço"])


async def _curator_report(db: asyncpg.Connection, org: uuid.UUID) -> None:
    for trigger in ("ceiling", "idle", "manual"):
        await db.execute(
            "insert into curator_runs (organization_id, trigger, ran_at, stale_cutoff, "
            "archive_cutoff, transitioned, skipped) values ($1, $2, now(), now(), now(), "
            """'[{"name": "promo-natal", "from": "active", "to": "stale"}]', """
            """'[{"name": "frete", "reason": "not-agent-created"}, """
            """{"name": "agenda", "reason": "pinned"}, {"name": "x", "reason": "no-change"}]')""",
            org,
            trigger,
        )


async def seed(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    graph: FakeGraphApi,
    api: ApiClient,
) -> Tour:
    org, editor = await setup_number(db, graph)
    await _sync(db, org)
    admin = await create_key(db, org, Role.ADMIN, "gerente")
    viewer = await create_key(db, org, Role.VIEWER, "leitura")
    model = SchedulingModel(_reminder(datetime.now(UTC) + timedelta(days=2)))
    await customer_says(settings, "quero agendar para sexta")
    await run_burst(settings, model=model)
    conversation = await db.fetchval("select id from conversations where organization_id = $1", org)
    phone = await _conversation_of(db, org, PHONE_CONTACT)
    await db.execute(
        "update conversations set mode = 'human', held_by = 'phone', mode_since = now(), "
        "mode_cause = 'phone' where id = $1",
        phone,
    )
    waiting = await _conversation_of(db, org, WAITING_CONTACT)
    await db.execute(
        "update conversations set mode = 'waiting', mode_since = now() - interval '7 minutes', "
        "mode_cause = 'customer', mode_reason = 'pediu uma pessoa' where id = $1",
        waiting,
    )
    proposal = await _skills(db, resources, org)
    await _curator_report(db, org)
    invited = await api.call(
        "POST",
        "/v1/people/invitations",
        admin,
        json_body={"email": "ana@clinica.com.br", "name": "Ana Souza", "role": "editor"},
    )
    assert invited.status == 201, invited.body
    # The team's own words: a quick reply and an internal note in the agent's conversation.
    quick = {"title": "Horário", "text": "Atendemos de segunda a sexta, das 9h às 18h."}
    assert (await api.call("POST", "/v1/quick-replies", editor, json_body=quick)).status == 201
    note = {"text": "Cliente prefere ser chamada à tarde."}
    noted = await api.call(
        "POST", f"/v1/conversations/{conversation}/notes", editor, json_body=note
    )
    assert noted.status == 201, noted.body
    tour = Tour(
        org, admin, editor, viewer, conversation, phone, waiting, proposal, invited.body["url"]
    )
    tour.pages = _pages(tour)
    return tour


def _pages(t: Tour) -> dict[str, list[tuple[str, str]]]:
    c = "/console"
    token = t.invitation_url.rsplit("/", 1)[-1]
    each = ("admin", "editor", "viewer")
    return {
        "/console/entrar": [("", f"{c}/entrar"), ("", f"{c}/entrar?motivo=sessao")],
        "/console/convite/{token}": [("", f"{c}/convite/{token}"), ("", f"{c}/convite/x")],
        "/console/atendimento": [(r, f"{c}/atendimento") for r in each],
        "/console/painel": [
            ("admin", f"{c}/painel"),
            ("viewer", f"{c}/painel?from=2026-01-01&to=2026-12-31"),  # refused: too long
        ],
        "/console/marketplace": [("admin", f"{c}/marketplace"), ("viewer", f"{c}/marketplace")],
        "/console/skills": [("admin", f"{c}/skills"), ("viewer", f"{c}/skills")],
        "/console/skills/{name}": [("admin", f"{c}/skills/agenda")],
        "/console/skills/{name}/editar": [("admin", f"{c}/skills/agenda/editar")],
        "/console/nova-skill": [("admin", f"{c}/nova-skill")],
        "/console/skills/{name}/desinstalar": [("admin", f"{c}/skills/precos/desinstalar")],
        "/console/enviar": [("admin", f"{c}/enviar"), ("viewer", f"{c}/enviar")],
        "/console/sugestoes": [("admin", f"{c}/sugestoes")],
        "/console/rascunhos": [
            ("admin", f"{c}/rascunhos"),
            ("admin", f"{c}/rascunhos?status=all"),
        ],
        "/console/rascunhos/{name}": [
            ("admin", f"{c}/rascunhos/clareamento"),
            ("viewer", f"{c}/rascunhos/clareamento"),
        ],
        "/console/propostas": [("admin", f"{c}/propostas?status=all")],
        "/console/propostas/{id}": [("admin", f"{c}/propostas/{t.proposal}")],
        "/console/agente": [("admin", f"{c}/agente"), ("viewer", f"{c}/agente")],
        "/console/curador": [("admin", f"{c}/curador")],
        "/console/conversas": [
            ("admin", f"{c}/conversas"),
            ("editor", f"{c}/conversas?q=clareamento&unanswered=true"),
            ("viewer", f"{c}/conversas?q=a"),  # refused: too short
        ],
        "/console/conversas/{id}": [
            (role, f"{c}/conversas/{conversation}")
            for conversation in (t.conversation, t.phone_held, t.waiting)
            for role in each
        ]
        + [("admin", f"{c}/conversas/{uuid.uuid4()}")],
        "/console/numeros/{kind}/{address}/templates": [
            ("admin", f"{c}/numeros/cloud_api/{NUMBER}/templates")
        ],
        "/console/uso": [("admin", f"{c}/uso")],
        "/console/auditoria": [("admin", f"{c}/auditoria")],
        "/console/numeros": [("admin", f"{c}/numeros"), ("viewer", f"{c}/numeros")],
        "/console/chaves": [("admin", f"{c}/chaves")],
        "/console/equipe": [("admin", f"{c}/equipe")],
        "/console/respostas-rapidas": [
            ("admin", f"{c}/respostas-rapidas"),
            ("viewer", f"{c}/respostas-rapidas"),
        ],
    }


class Visitor:
    """A browser's cookies over aiohttp: signs in with a key, reads pages, posts forms."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    async def close(self) -> None:
        await self.http.close()

    async def sign_in(self, key: str) -> None:
        page = await self.get("/console/entrar")
        token = csrf_in(page[1])
        async with self.http.post(
            self.api.base_url + "/console/entrar", data={"csrf": token, "key": key}
        ) as answer:
            text = await answer.text()
            landed = str(answer.url)  # an admin lands on the Painel
            assert answer.status == 200 and "/console/" in landed, text
            assert landed.endswith(("/console/atendimento", "/console/painel")), landed
            self.csrf = csrf_in(text)

    async def get(self, path: str) -> tuple[int, str, str]:
        async with self.http.get(self.api.base_url + path) as answer:
            return answer.status, await answer.text(), str(answer.url)

    async def post(self, path: str, form: dict[str, str]) -> tuple[int, str, str]:
        data = {"csrf": self.csrf, **form}
        async with self.http.post(self.api.base_url + path, data=data) as answer:
            return answer.status, await answer.text(), str(answer.url)


def csrf_in(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)
