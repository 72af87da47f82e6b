"""Hostile console forms over real HTTP: a NUL in a field or in the URL gives the page back
with the refusal's code (and its audit row), a form we cannot read is a 400 page; never a
500 page. Sessions are made as sign-in makes them; forms carry the session's CSRF token."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest
import pytest_asyncio

from api.console.session_queries import insert_session
from api.console.sessions import SESSION_COOKIE, csrf_token, hash_secret, mint_secret
from api.guard import authenticate_key
from api.keys import Role
from tests.integration.api_support import (
    Answer,
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.support import create_org, publish
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings

pytestmark = pytest.mark.integration

FORM = "application/x-www-form-urlencoded"
_CODE = re.compile(r'data-codigo="([^"]+)"')
_TITLE = re.compile(r"<title>([^<]+)</title>")


@dataclass(frozen=True)
class Session:
    org: uuid.UUID
    agent_id: uuid.UUID
    cookie: dict[str, str]
    csrf: str


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def session(api: ApiClient, db: asyncpg.Connection, resources: Resources) -> Session:
    org = await create_org(db, "Loja Hostil")
    agent = await create_agent(db, org, name="Atendente", system_prompt="Persona.")
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    principal = await authenticate_key(api.deps.pool, await create_key(db, org, Role.ADMIN))
    assert principal is not None
    secret = mint_secret()
    await insert_session(db, hash_secret(secret), principal, 3600)
    return Session(org, agent.id, {"Cookie": f"{SESSION_COOKIE}={secret}"}, csrf_token(secret))


def _page(answer: Answer) -> tuple[str, str | None]:
    """(the page's title, the refusal code it shows)."""
    assert isinstance(answer.body, str)
    title, code = _TITLE.search(answer.body), _CODE.search(answer.body)
    assert title is not None
    return title.group(1), None if code is None else code.group(1)


async def _post(api: ApiClient, session: Session, path: str, body: bytes, kind: str) -> Answer:
    return await api.call("POST", path, data=body, headers={**session.cookie, "Content-Type": kind})


@pytest.mark.parametrize(
    ("path", "fields", "page", "action"),
    [
        ("/console/chaves", "role=viewer&name=a%00b", "Chaves", "api_key.create"),
        (
            "/console/agente/{agent}/persona",
            "name=a%00b&system_prompt=Oi",
            "Agente",
            "agent.update",
        ),
        (
            "/console/agente/{agent}/persona",
            "name=Ana&system_prompt=Oi%00",
            "Agente",
            "agent.update",
        ),
        (
            "/console/agente/{agent}/modelo",
            "model_provider=openai&model_name=x%00",
            "Agente",
            "agent.update",
        ),
    ],
    ids=["key-name", "agent-name", "agent-prompt", "model-name"],
)
async def test_a_nul_in_a_form_field_gives_the_form_back_with_its_code(
    api: ApiClient,
    db: asyncpg.Connection,
    session: Session,
    path: str,
    fields: str,
    page: str,
    action: str,
) -> None:
    before = await org_snapshot(db, session.org)
    url = path.replace("{agent}", str(session.agent_id))
    answer = await _post(api, session, url, f"csrf={session.csrf}&{fields}".encode(), FORM)
    assert answer.status == 422
    assert _page(answer) == (f"{page} · skillet", "invalid_text")
    assert await org_snapshot(db, session.org) == before
    [*_, row] = await audit_rows(db, session.org)
    assert (row["action"], row["outcome"], row["detail"]) == (
        action,
        "refused",
        {"code": "invalid_text"},
    )


async def test_a_nul_in_a_console_url_shows_the_page_with_its_code(
    api: ApiClient, db: asyncpg.Connection, session: Session
) -> None:
    before = await org_snapshot(db, session.org)
    pin = await _post(
        api, session, "/console/skills/a%00b/fixar", f"csrf={session.csrf}".encode(), FORM
    )
    # The skills page itself still reads (its list route names no parameter).
    assert (pin.status, _page(pin)) == (422, ("Skills instaladas · skillet", "invalid_path"))
    [row] = await audit_rows(db, session.org)
    assert (row["action"], row["skill_name"], row["detail"]) == (
        "skill.pin",
        "a\ufffdb",
        {"code": "invalid_path"},
    )
    for page in ("/console/rascunhos/a%00b", "/console/conversas/a%00b"):
        answer = await api.call("GET", page, headers=session.cookie)
        assert answer.status == 422
        assert _page(answer)[1] == "invalid_path"
    assert await org_snapshot(db, session.org) == before


@pytest.mark.parametrize(
    ("path", "body", "kind"),
    [
        ("/console/chaves", b"role=viewer&name=a\xff", FORM),  # not UTF-8
        ("/console/chaves", b"role=viewer", FORM + "; charset=nenhum"),  # unknown charset
        ("/console/enviar", b"garbage", "multipart/form-data"),  # no boundary
        ("/console/enviar", b"garbage", "multipart/form-data; boundary=zz"),
        (
            "/console/enviar",
            b'--zz\r\nContent-Disposition: form-data; name="x"\r\n\r\n\xff\r\n--zz--\r\n',
            "multipart/form-data; boundary=zz",
        ),
    ],
    ids=["not-utf8", "unknown-charset", "no-boundary", "garbage", "multipart-not-utf8"],
)
async def test_a_form_that_cannot_be_read_is_a_400_page(
    api: ApiClient, db: asyncpg.Connection, session: Session, path: str, body: bytes, kind: str
) -> None:
    before = await org_snapshot(db, session.org)
    # Refused before its CSRF token is looked for: the form cannot be read to find it.
    answer = await _post(api, session, path, body, kind)
    assert answer.status == 400
    assert _page(answer)[1] == "invalid_form"
    assert await org_snapshot(db, session.org) == before


async def test_a_sign_in_form_that_cannot_be_read_is_a_400_page(api: ApiClient) -> None:
    answer = await api.call(
        "POST", "/console/entrar", data=b"csrf=x&key=\xff", headers={"Content-Type": FORM}
    )
    assert answer.status == 400
    assert _page(answer)[1] == "invalid_form"
