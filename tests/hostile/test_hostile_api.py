"""Hostile admin API requests over real HTTP (real Postgres, Redis and S3 behind the app):
crafted cursors, a NUL in a path or a JSON field, lone surrogates, bodies that are not JSON
objects. Each is a 4xx with a stable code and a pt-BR message, never a 500 and never the
driver's words; a refused change writes its `refused` audit row and changes nothing else."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from api.keys import Role
from api.pagination import MAX_CURSOR_CHARS
from api.route_table import ROUTES
from core.errors import DatabaseRejected
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.hostile.refusals import assert_refused
from tests.integration.api_support import (
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

# The tag each list writes into its cursors (api.pagination.encode_cursor).
LIST_TAGS = {
    "/v1/catalog": "catalog",
    "/v1/skills": "skills",
    "/v1/drafts": "drafts",
    "/v1/curator/runs": "curator_runs",
    "/v1/conversations": "conversations",
    "/v1/conversations/{id}/messages": "messages",
    "/v1/audit": "audit",
    "/v1/dead-letters": "dead_letters",
    "/v1/agents": "agents",
    "/v1/channels": "channels",
    "/v1/api-keys": "api_keys",
    "/v1/suggestions": "suggestions",
    "/v1/skills/{name}/versions": "skill_versions",
    "/v1/conversations/{id}/notes": "notes",
    "/v1/quick-replies": "quick_replies",
}
# Lists ordered by a text (a title): a time-shaped string is a title like any other there.
TEXT_KEYED = {"/v1/quick-replies"}
PAGED_PATHS = sorted(r.path for r in ROUTES if "cursor" in r.query)
SOME_ID = str(uuid.uuid4())
AWARE = "2024-01-01T00:00:00+00:00"
# Keysets a client can craft; every one is the wrong shape, type or range for every list.
CRAFTED: dict[str, list[Any]] = {
    "a uuid that is an int": [AWARE, 5],
    "a naive time": ["2024-01-01T00:00:00", SOME_ID],
    "an id past bigint": [10**30],
    "an id of zero": [0],
    "a bool for an id": [True],
    "year 1, east of UTC": ["0001-01-01T00:00:00+14:00", SOME_ID],
    "year 9999, west of UTC": ["9999-12-31T23:59:59-14:00", SOME_ID],
    "year 1 in UTC": ["0001-01-01T00:00:00+00:00", SOME_ID],
    "a date only": ["2024-01-01", SOME_ID],
    "a NUL in a name": ["a\x00b"],
    "a lone surrogate": ["\ud800"],
    "a list for a name": [["frete"]],
    "a name too long": ["a" * 300],
    "one value too many": [AWARE, SOME_ID, 1],
    "no values": [],
}


def _cursor(document: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


def _raw_cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@dataclass(frozen=True)
class Org:
    id: uuid.UUID
    key: str
    agent_id: uuid.UUID
    conversation_id: uuid.UUID


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def _two_of_each(db: asyncpg.Connection, resources: Resources, org: uuid.UUID) -> None:
    """Two rows in every list, so each one has a second page to reach by its cursor."""
    # A second version of instalada-1: its history is a list of two.
    await publish(db, resources.store, org, "instalada-1", keywords=["k0"])
    for n in (1, 2):
        await publish(db, resources.store, org, f"instalada-{n}", keywords=[f"k{n}"])
        await publish(
            db, resources.store, None, f"catalogo-{n}", keywords=[f"c{n}"], created_by="platform"
        )
        author = SkillAuthor(
            db,
            resources.store,
            UsageStore(resources.turn_deps.clock),
            org,
            mode=AuthoringMode.REVIEW,
            limits=AuthoringLimits(),
        )
        await author.create(f"rascunho-{n}", "Rascunho.", "Texto.", [f"r{n}"])
        await db.execute(
            "insert into channels (organization_id, kind, address) values ($1, 'waha', $2)",
            org,
            f"sessao-{n}",
        )
        await db.execute(
            "insert into dead_letters (job_id, function, payload, error_code, error, tries, "
            "organization_id) values ($1, 'handle_inbound_message', '{}', 'x', 'x', 1, $2)",
            f"job-{n}",
            org,
        )
        await db.execute(
            "insert into curator_runs (organization_id, trigger, ran_at, stale_cutoff, "
            "archive_cutoff, transitioned, skipped) values ($1, 'manual', now(), now(), "
            "now(), '[]', '[]')",
            org,
        )
        await db.execute(
            "insert into audit_log (organization_id, actor, action) values ($1, 'cli', 'x')", org
        )
        await create_key(db, org, Role.VIEWER)


async def _org(db: asyncpg.Connection) -> Org:
    organization_id = await create_org(db, "Loja Hostil")
    agent = await create_agent(db, organization_id, name="Atendente", system_prompt="Persona.")
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', '5511900000001') returning id",
        organization_id,
    )
    key = await create_key(db, organization_id, Role.ADMIN)
    return Org(organization_id, key, agent.id, conversation)


@pytest_asyncio.fixture(loop_scope="session")
async def org(db: asyncpg.Connection) -> Org:
    return await _org(db)


@pytest_asyncio.fixture(loop_scope="session")
async def full_org(db: asyncpg.Connection, resources: Resources) -> Org:
    """An org with two rows in every list."""
    made = await _org(db)
    await create_agent(db, made.id, name="Segundo", system_prompt="Outra persona.")
    await db.execute(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', '5511900000002')",
        made.id,
    )
    for n in (1, 2):
        await db.execute(
            "insert into messages (organization_id, conversation_id, direction, channel, "
            "external_id, body) values ($1, $2, 'inbound', 'whatsapp', $3, 'oi')",
            made.id,
            made.conversation_id,
            f"wamid.{n}",
        )
    await _two_of_each(db, resources, made.id)
    await _two_lessons(db, made)
    await _two_notes_and_quick_replies(db, made)
    return made


async def _two_notes_and_quick_replies(db: asyncpg.Connection, made: Org) -> None:
    for n in (1, 2):
        await db.execute(
            "insert into conversation_notes (id, organization_id, conversation_id, author, text) "
            "values ($1, $2, $3, 'skt_person', $4)",
            uuid.uuid4(),
            made.id,
            made.conversation_id,
            f"nota {n}",
        )
        await db.execute(
            "insert into quick_replies (id, organization_id, title, text, created_by) "
            "values ($1, $2, $3, 'Olá!', 'skt_person')",
            uuid.uuid4(),
            made.id,
            f"saudação {n}",
        )


PERSON_REPLY = """
insert into messages (organization_id, conversation_id, direction, channel, body, author,
                      author_key_prefix, created_at)
values ($1, $2, 'outbound', 'whatsapp', $3, 'person', 'skt_person', clock_timestamp())
"""


async def _two_lessons(db: asyncpg.Connection, made: Org) -> None:
    """Two people's answers to unrelated questions: two suggestion groups."""
    other = await db.fetchval(
        "select id from conversations where organization_id = $1 and id <> $2",
        made.id,
        made.conversation_id,
    )
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body) values ($1, $2, 'inbound', 'whatsapp', 'wamid.3', $3)",
        made.id,
        other,
        "vocês entregam no centro?",
    )
    await db.execute(PERSON_REPLY, made.id, made.conversation_id, "Olá! Em que posso ajudar?")
    await db.execute(PERSON_REPLY, made.id, other, "Entregamos sim, a taxa é R$ 10.")


def _list_url(path: str, org: Org) -> str:
    url = path.replace("{id}", str(org.conversation_id)).replace("{name}", "instalada-1")
    return url + ("?status=all" if path == "/v1/drafts" else "")


def test_every_paginated_route_has_its_cursor_tag_here() -> None:
    assert sorted(LIST_TAGS) == PAGED_PATHS


@pytest.mark.parametrize("path", PAGED_PATHS)
async def test_a_crafted_cursor_is_400_on_every_paginated_route(
    api: ApiClient, full_org: Org, path: str
) -> None:
    org = full_org
    url = _list_url(path, org)
    sep = "&" if "?" in url else "?"
    tag = LIST_TAGS[path]
    # What this list issues still pages: every list has two rows, so a second page.
    pages = await api.walk(url, org.key, limit=1)
    assert len(pages) >= 2
    crafted = {
        what: keyset
        for what, keyset in CRAFTED.items()
        if path not in TEXT_KEYED or not (keyset and isinstance(keyset[0], str))
    }
    cursors = {what: _cursor([tag, keyset]) for what, keyset in crafted.items()}
    if path in TEXT_KEYED:
        cursors["a title longer than a title may be"] = _cursor([tag, ["x" * 41, SOME_ID]])
    cursors["1,100 nested lists"] = _raw_cursor(f'["{tag}",' + "[" * 1100 + "]" * 1100 + "]")
    cursors["a cursor too long to be ours"] = _cursor([tag, ["x" * MAX_CURSOR_CHARS]])
    cursors["another list's cursor"] = _cursor(["other", [AWARE, SOME_ID]])
    for what, cursor in cursors.items():
        answer = await api.get(f"{url}{sep}limit=1&cursor={cursor}", org.key)
        assert answer.status == 400, (what, answer.body)
        assert_refused(answer, 400, "invalid_cursor")


PATH_ROUTES = [r for r in ROUTES if "{" in r.path]


@pytest.mark.parametrize("route", PATH_ROUTES, ids=lambda r: f"{r.method} {r.path}")
async def test_a_nul_in_a_path_is_422_and_a_refused_change_is_audited(
    api: ApiClient, db: asyncpg.Connection, org: Org, route: Any
) -> None:
    before = await org_snapshot(db, org.id)
    audited = len(await audit_rows(db, org.id))
    url = re.sub(r"\{\w+\}", "a%00b", route.path)
    answer = await api.call(route.method, url, org.key)
    message = assert_refused(answer, 422, "invalid_path")
    assert "caractere nulo" in message
    assert await org_snapshot(db, org.id) == before
    rows = (await audit_rows(db, org.id))[audited:]
    if route.action is None:
        assert rows == []
        return
    [row] = rows
    assert (row["action"], row["outcome"], row["detail"]) == (
        route.action,
        "refused",
        {"code": "invalid_path"},
    )
    # What was asked, kept as text Postgres stores.
    assert row["skill_name"] == ("a\ufffdb" if "{name}" in route.path else None)


# (method, path, body with BAD where the hostile text goes, the field the message names)
FIELD_CASES = [
    ("POST", "/v1/api-keys", {"role": "viewer", "name": "BAD"}, "name"),
    ("PATCH", "/v1/agents/{agent}", {"name": "BAD"}, "name"),
    ("PATCH", "/v1/agents/{agent}", {"system_prompt": "Olá BAD"}, "system_prompt"),
    (
        "PATCH",
        "/v1/agents/{agent}",
        {"model_provider": "openai", "model_name": "BAD"},
        "model_name",
    ),
    (
        "POST",
        "/v1/channels",
        {"kind": "waha", "address": "sessao-9", "display_phone": "BAD"},
        "display_phone",
    ),
    ("POST", "/v1/channels", {"kind": "waha", "address": "BAD"}, "address"),
    (
        "POST",
        "/v1/channels",
        {"kind": "cloud_api", "address": "123", "access_token": "EAAG-token-BAD-00000"},
        "access_token",
    ),
    (
        "POST",
        "/v1/channels",
        {"kind": "waha", "address": "s", "waha_base_url": "https://w/BAD", "waha_api_key": "k"},
        "waha_base_url",
    ),
    ("PATCH", "/v1/settings", {"agent_authoring": "BAD"}, "agent_authoring"),
    ("POST", "/v1/api-keys", {"role": "viewer", "BAD": "x"}, ""),  # a key, not a value
]


@pytest.mark.parametrize("bad", ["a\x00b", "\ud800"], ids=["nul", "lone-surrogate"])
@pytest.mark.parametrize(
    ("method", "path", "body", "field"), FIELD_CASES, ids=[f"{c[1]}:{c[3]}" for c in FIELD_CASES]
)
async def test_text_postgres_cannot_store_in_a_json_field_is_422_and_audited(
    api: ApiClient,
    db: asyncpg.Connection,
    org: Org,
    method: str,
    path: str,
    body: dict[str, Any],
    field: str,
    bad: str,
) -> None:
    before = await org_snapshot(db, org.id)
    audited = len(await audit_rows(db, org.id))
    # ensure_ascii: the NUL and the surrogate travel as the JSON escapes \u0000 and \ud800.
    raw = json.dumps(body).replace("BAD", json.dumps(bad)[1:-1]).encode()
    url = path.replace("{agent}", str(org.agent_id))
    answer = await api.call(
        method, url, org.key, data=raw, headers={"Content-Type": "application/json"}
    )
    message = assert_refused(answer, 422, "invalid_text")
    assert f"`{field}" in message
    assert await org_snapshot(db, org.id) == before
    [row] = (await audit_rows(db, org.id))[audited:]
    assert (row["outcome"], row["detail"]) == ("refused", {"code": "invalid_text"})


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"[]", 422, "invalid_input"),
        (b'[{"role": "viewer"}]', 422, "invalid_input"),
        (b"42", 422, "invalid_input"),
        (b"null", 422, "invalid_input"),
        (b'"viewer"', 422, "invalid_input"),
        (b"true", 422, "invalid_input"),
        (b"{", 400, "invalid_json"),
        (b'{"role": "viewer",}', 400, "invalid_json"),
        (b"\xff\xfe", 400, "invalid_json"),
        (b"[" * 100_000, 400, "invalid_json"),
        (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, 400, "invalid_json"),
    ],
    ids=lambda v: v[:12].decode("latin-1") if isinstance(v, bytes) else str(v),
)
async def test_a_body_that_is_not_a_json_object_is_4xx_with_its_code(
    api: ApiClient, db: asyncpg.Connection, org: Org, raw: bytes, status: int, code: str
) -> None:
    keys = await db.fetchval("select count(*) from api_keys where organization_id = $1", org.id)
    answer = await api.call(
        "POST", "/v1/api-keys", org.key, data=raw, headers={"Content-Type": "application/json"}
    )
    message = assert_refused(answer, status, code)
    assert "Input should" not in message  # pydantic's English stays out
    assert (
        await db.fetchval("select count(*) from api_keys where organization_id = $1", org.id)
        == keys
    )
    [*_, row] = await audit_rows(db, org.id)
    assert (row["action"], row["outcome"], row["detail"]) == (
        "api_key.create",
        "refused",
        {"code": code},
    )


async def test_a_database_failure_answers_a_fixed_message_not_the_drivers(
    api: ApiClient, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise asyncpg.exceptions.CharacterNotInRepertoireError(
            'invalid byte sequence for encoding "UTF8": 0x00'
        )

    monkeypatch.setattr("api.admin_routes.list_api_keys", refused)
    answer = await api.get("/v1/api-keys", org.key)
    assert_refused(answer, 500, DatabaseRejected.code)
    assert "banco de dados" in answer.body["message"]
