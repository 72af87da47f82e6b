"""Who may call what: keys, roles and orgs, walked over every route of the admin API."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from api.app import build_app
from api.keys import Role, role_allows
from api.route_table import ROUTES
from cli.main import main
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import (
    Answer,
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.support import create_org, publish
from tests.package_builders import skill_zip
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings

NO_FOLLOWUP = "00000000-0000-4000-8000-0000000000f1"
NO_PROPOSAL = "00000000-0000-4000-8000-000000000027"  # no org has it
NO_VERSION = "00000000-0000-4000-8000-000000000044"  # no skill version has it


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


@dataclass(frozen=True)
class OrgA:
    """An org with one of everything, and what of it must never show up for another org."""

    id: uuid.UUID
    skill: str
    draft: str
    agent_id: uuid.UUID
    conversation_id: uuid.UUID
    message_id: uuid.UUID  # with a stored PDF
    dead_letter_id: int
    channel: tuple[str, str]
    admin_prefix: str
    secrets: tuple[str, ...]
    person_id: uuid.UUID = uuid.UUID(int=0)  # noqa: RUF009
    quick_reply_id: uuid.UUID = uuid.UUID(int=0)  # noqa: RUF009


async def _org_a(db: asyncpg.Connection, resources: Resources) -> OrgA:
    org = await create_org(db, "Loja A")
    version = await publish(db, resources.store, org, "segredo-a", keywords=["frete"])
    await publish(db, resources.store, None, "catalogo-x", keywords=["x"], created_by="platform")
    author = SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )
    draft = await author.create("rascunho-a", "Rascunho da A", "Texto só da A.", ["troca"])
    agent = await create_agent(db, org, name="Atendente A", system_prompt="Persona secreta A")
    await db.execute(
        "insert into channels (organization_id, agent_id, kind, address) "
        "values ($1, $2, 'waha', 'sessao-a')",
        org,
        agent.id,
    )
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', '5511900000001') returning id",
        org,
    )
    message = await db.fetchval(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body) values ($1, $2, 'inbound', 'whatsapp', 'wamid.a1', "
        "'mensagem privada da A') returning id",
        org,
        conversation,
    )
    key = f"media/{org}/{conversation}/{message}/segredo-da-a.pdf"
    await resources.store.put(key, b"%PDF-1.4 segredo da A", "application/pdf")
    await db.execute(
        "update messages set media_state = 'stored', media_key = $2, "
        "media_type = 'application/pdf', media = '{\"file_name\": \"segredo-da-a.pdf\"}' "
        "where id = $1",
        message,
        key,
    )
    dead_letter = await db.fetchval(
        "insert into dead_letters (job_id, function, payload, error_code, error, tries, "
        "organization_id) values ('job-a', 'handle_inbound_message', $1, 'model_unavailable', "
        "'x', 5, $2) returning id",
        {"organization_id": str(org)},
        org,
    )
    await db.execute(
        "insert into curator_runs (organization_id, trigger, ran_at, stale_cutoff, "
        "archive_cutoff, transitioned, skipped) values ($1, 'manual', now(), now(), now(), "
        "'[]', '[]')",
        org,
    )
    await db.execute(
        "select skillet_bump_token_usage($1, $2, now())",
        org,
        {"agent_id": str(agent.id), "provider": "openai", "model": "modelo-secreto-a", "calls": 1},
    )
    admin = await create_key(db, org, Role.ADMIN)
    person = uuid.uuid4()
    await db.execute(
        "insert into people (id, organization_id, name, email, role) "
        "values ($1, $2, 'Pessoa Secreta A', $3, 'admin')",
        person,
        org,
        f"segredo-{person}@a.example.com",
    )
    await db.execute(
        "insert into conversation_notes (id, organization_id, conversation_id, author, text) "
        "values ($1, $2, $3, 'cli', 'Nota secreta A')",
        uuid.uuid4(),
        org,
        conversation,
    )
    quick_reply = uuid.uuid4()
    await db.execute(
        "insert into quick_replies (id, organization_id, title, text, created_by) "
        "values ($1, $2, 'Título secreto A', 'Resposta secreta A', 'cli')",
        quick_reply,
        org,
    )
    return OrgA(
        person_id=person,
        quick_reply_id=quick_reply,
        id=org,
        skill="segredo-a",
        draft="rascunho-a",
        agent_id=agent.id,
        conversation_id=conversation,
        message_id=message,
        dead_letter_id=dead_letter,
        channel=("waha", "sessao-a"),
        admin_prefix=admin[:12],
        secrets=(
            str(org),
            str(version),
            str(draft.version_id),
            str(agent.id),
            str(conversation),
            "Persona secreta A",
            "mensagem privada da A",
            "segredo da A",
            "segredo-da-a.pdf",
            "5511900000001",
            "job-a",
            "modelo-secreto-a",
            admin[:12],
            "Pessoa Secreta A",
            "Nota secreta A",
            "Resposta secreta A",
            "Título secreto A",
        ),
    )


UNAUDITED = {(r.method, r.path) for r in ROUTES if r.method != "GET" and r.action is None}


@dataclass(frozen=True)
class Call:
    path: str
    json_body: Any = None
    data: bytes | None = None


# Every route, called on org A's things; with another org's key, `cross` is the status.
def _walk(a: OrgA) -> dict[tuple[str, str], tuple[Call, int]]:
    kind, address = a.channel
    return {
        ("GET", "/v1/catalog"): (Call("/v1/catalog"), 200),
        ("POST", "/v1/catalog/{name}/install"): (Call(f"/v1/catalog/{a.skill}/install"), 404),
        ("GET", "/v1/skills"): (Call("/v1/skills"), 200),
        ("POST", "/v1/skills"): (Call("/v1/skills", data=skill_zip("de-outra-org")), 200),
        ("DELETE", "/v1/skills/{name}"): (Call(f"/v1/skills/{a.skill}"), 404),
        ("POST", "/v1/skills/{name}/pin"): (Call(f"/v1/skills/{a.skill}/pin"), 404),
        ("POST", "/v1/skills/{name}/unpin"): (Call(f"/v1/skills/{a.skill}/unpin"), 404),
        ("POST", "/v1/skills/{name}/restore"): (Call(f"/v1/skills/{a.skill}/restore"), 404),
        ("GET", "/v1/skills/{name}/activations"): (
            Call(f"/v1/skills/{a.skill}/activations"),
            404,
        ),
        # The editor's routes on A's skill: B has no such skill, so none of it exists.
        ("GET", "/v1/skills/{name}"): (Call(f"/v1/skills/{a.skill}"), 404),
        ("PUT", "/v1/skills/{name}"): (
            Call(
                f"/v1/skills/{a.skill}",
                {"base_version_id": NO_VERSION, "description": "d", "body": "b"},
            ),
            404,
        ),
        ("GET", "/v1/skills/{name}/versions"): (Call(f"/v1/skills/{a.skill}/versions"), 404),
        ("GET", "/v1/skills/{name}/versions/{version_id}"): (
            Call(f"/v1/skills/{a.skill}/versions/{NO_VERSION}"),
            404,
        ),
        ("GET", "/v1/skills/{name}/files/{path:.+}"): (
            Call(f"/v1/skills/{a.skill}/files/references/a.md"),
            404,
        ),
        ("PUT", "/v1/skills/{name}/files/{path:.+}"): (
            Call(
                f"/v1/skills/{a.skill}/files/references/a.md?base_version_id={NO_VERSION}",
                data=b"texto",
            ),
            404,
        ),
        ("DELETE", "/v1/skills/{name}/files/{path:.+}"): (
            Call(f"/v1/skills/{a.skill}/files/references/a.md?base_version_id={NO_VERSION}"),
            404,
        ),
        ("POST", "/v1/skills/{name}/rollback"): (
            Call(
                f"/v1/skills/{a.skill}/rollback",
                {"version_id": NO_VERSION, "base_version_id": NO_VERSION},
            ),
            404,
        ),
        ("GET", "/v1/drafts"): (Call("/v1/drafts?status=all"), 200),
        ("GET", "/v1/drafts/{name}"): (Call(f"/v1/drafts/{a.draft}"), 404),
        ("GET", "/v1/drafts/{name}/files/{path:.+}"): (
            Call(f"/v1/drafts/{a.draft}/files/references/a.md"),
            404,
        ),
        ("POST", "/v1/drafts/{name}/approve"): (Call(f"/v1/drafts/{a.draft}/approve"), 404),
        ("POST", "/v1/drafts/{name}/reject"): (Call(f"/v1/drafts/{a.draft}/reject"), 404),
        ("POST", "/v1/drafts/{name}/restore"): (
            Call(f"/v1/drafts/{a.draft}/restore", {"key": "phone:11987654321"}),
            404,
        ),
        # Another org's suggestions, by a group's id or a person's message in it: absent.
        ("GET", "/v1/suggestions"): (Call("/v1/suggestions"), 200),
        ("POST", "/v1/suggestions/{id}/draft"): (
            Call(f"/v1/suggestions/{a.message_id}/draft"),
            404,
        ),
        ("POST", "/v1/suggestions/{id}/dismiss"): (
            Call(f"/v1/suggestions/{a.message_id}/dismiss"),
            404,
        ),
        # A proposal of another org is as absent as one that never existed.
        # Org A's draft is no draft of another org's.
        ("POST", "/v1/rehearsals"): (Call("/v1/rehearsals", json_body={"draft": a.draft}), 404),
        ("GET", "/v1/proposals"): (Call("/v1/proposals?status=all"), 200),
        ("GET", "/v1/proposals/{id}"): (Call(f"/v1/proposals/{NO_PROPOSAL}"), 404),
        ("POST", "/v1/proposals/{id}/approve"): (
            Call(f"/v1/proposals/{NO_PROPOSAL}/approve"),
            404,
        ),
        ("POST", "/v1/proposals/{id}/reject"): (Call(f"/v1/proposals/{NO_PROPOSAL}/reject"), 404),
        ("GET", "/v1/settings"): (Call("/v1/settings"), 200),
        ("PATCH", "/v1/settings"): (Call("/v1/settings", {"agent_authoring": "off"}), 200),
        ("GET", "/v1/settings/events"): (Call("/v1/settings/events"), 200),
        ("PATCH", "/v1/settings/events"): (Call("/v1/settings/events", {"events_url": None}), 200),
        ("GET", "/v1/settings/hours"): (Call("/v1/settings/hours"), 200),
        ("PATCH", "/v1/settings/hours"): (Call("/v1/settings/hours", {}), 200),
        ("GET", "/v1/curator/runs"): (Call("/v1/curator/runs"), 200),
        ("GET", "/v1/conversations"): (Call("/v1/conversations"), 200),
        ("GET", "/v1/conversations/{id}/messages"): (
            Call(f"/v1/conversations/{a.conversation_id}/messages"),
            404,
        ),
        ("GET", "/v1/conversations/{id}/messages/{message_id}/media"): (
            Call(f"/v1/conversations/{a.conversation_id}/messages/{a.message_id}/media"),
            404,
        ),
        ("GET", "/v1/conversations/{id}"): (Call(f"/v1/conversations/{a.conversation_id}"), 404),
        ("POST", "/v1/conversations/{id}/takeover"): (
            Call(f"/v1/conversations/{a.conversation_id}/takeover", {}),
            404,
        ),
        ("POST", "/v1/conversations/{id}/release"): (
            Call(f"/v1/conversations/{a.conversation_id}/release", {}),
            404,
        ),
        ("POST", "/v1/conversations/{id}/messages"): (
            Call(f"/v1/conversations/{a.conversation_id}/messages", {"text": "oi"}),
            404,
        ),
        ("GET", "/v1/conversations/{id}/templates"): (
            Call(f"/v1/conversations/{a.conversation_id}/templates"),
            404,
        ),
        ("GET", "/v1/conversations/{id}/followups"): (
            Call(f"/v1/conversations/{a.conversation_id}/followups"),
            404,
        ),
        ("POST", "/v1/conversations/{id}/followups/{followup_id}/cancel"): (
            Call(f"/v1/conversations/{a.conversation_id}/followups/{NO_FOLLOWUP}/cancel", {}),
            404,
        ),
        ("GET", "/v1/channels/{kind}/{address}/templates"): (
            Call(f"/v1/channels/{kind}/{address}/templates"),
            404,
        ),
        ("GET", "/v1/audit"): (Call("/v1/audit"), 200),
        ("GET", "/v1/dead-letters"): (Call("/v1/dead-letters"), 200),
        ("POST", "/v1/dead-letters/{id}/requeue"): (
            Call(f"/v1/dead-letters/{a.dead_letter_id}/requeue"),
            404,
        ),
        ("GET", "/v1/usage/tokens"): (Call("/v1/usage/tokens?days=90"), 200),
        ("GET", "/v1/satisfaction"): (Call("/v1/satisfaction?from=2026-01-01&to=2026-01-31"), 200),
        ("GET", "/v1/insights"): (Call("/v1/insights"), 200),
        ("GET", "/v1/agents"): (Call("/v1/agents"), 200),
        ("PATCH", "/v1/agents/{id}"): (
            Call(f"/v1/agents/{a.agent_id}", {"system_prompt": "tomada"}),
            404,
        ),
        ("GET", "/v1/channels"): (Call("/v1/channels"), 200),
        # Another org's number answers as any the caller cannot prove: nothing is learnt.
        ("POST", "/v1/channels"): (Call("/v1/channels", {"kind": kind, "address": address}), 422),
        ("PATCH", "/v1/channels/{kind}/{address}"): (
            Call(f"/v1/channels/{kind}/{address}", {"reply_to_non_text": True}),
            404,
        ),
        ("GET", "/v1/api-keys"): (Call("/v1/api-keys"), 200),
        ("GET", "/v1/people"): (Call("/v1/people"), 200),
        ("POST", "/v1/conversations/{id}/transfer"): (
            Call(
                f"/v1/conversations/{a.conversation_id}/transfer", {"person_id": str(a.person_id)}
            ),
            422,
        ),
        ("POST", "/v1/people/invitations"): (
            Call(
                "/v1/people/invitations",
                {"email": f"b-{uuid.uuid4().hex}@b.example.com", "name": "B", "role": "viewer"},
            ),
            201,
        ),
        ("PATCH", "/v1/people/{id}"): (Call(f"/v1/people/{a.person_id}", {"name": "B"}), 404),
        ("POST", "/v1/people/{id}/deactivate"): (
            Call(f"/v1/people/{a.person_id}/deactivate"),
            404,
        ),
        ("POST", "/v1/conversations/{id}/notes"): (
            Call(f"/v1/conversations/{a.conversation_id}/notes", {"text": "oi"}),
            404,
        ),
        ("GET", "/v1/conversations/{id}/notes"): (
            Call(f"/v1/conversations/{a.conversation_id}/notes"),
            404,
        ),
        ("GET", "/v1/quick-replies"): (Call("/v1/quick-replies"), 200),
        ("POST", "/v1/quick-replies"): (
            Call("/v1/quick-replies", {"title": "Frete", "text": "Frete grátis."}),
            201,
        ),
        ("PATCH", "/v1/quick-replies/{id}"): (
            Call(f"/v1/quick-replies/{a.quick_reply_id}", {"text": "x"}),
            404,
        ),
        ("DELETE", "/v1/quick-replies/{id}"): (Call(f"/v1/quick-replies/{a.quick_reply_id}"), 404),
        ("POST", "/v1/api-keys"): (Call("/v1/api-keys", {"role": "viewer"}), 201),
        ("DELETE", "/v1/api-keys/{prefix}"): (Call(f"/v1/api-keys/{a.admin_prefix}"), 404),
    }


async def _send(api: ApiClient, method: str, call: Call, key: str) -> Answer:
    headers = {"Content-Type": "application/zip"} if call.data is not None else None
    return await api.call(
        method, call.path, key, json_body=call.json_body, data=call.data, headers=headers
    )


def test_the_walk_covers_every_route() -> None:
    fake = OrgA(
        uuid.uuid4(), "s", "d", uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), 1, ("waha", "x"), "p", ()
    )
    assert set(_walk(fake)) == {(r.method, r.path) for r in ROUTES}


@pytest.mark.parametrize("role", list(Role))
async def test_another_orgs_key_reaches_nothing_of_this_org(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, role: Role
) -> None:
    a = await _org_a(db, resources)
    org_b = await create_org(db, "Loja B")
    key_b = await create_key(db, org_b, role)
    least = {(r.method, r.path): r.role for r in ROUTES}
    before = await org_snapshot(db, a.id)
    audit_before = await audit_rows(db, a.id)
    refused_writes = 0
    for (method, path), (call, cross) in _walk(a).items():
        expected = cross if role_allows(role, least[(method, path)]) else 403
        # A rehearsal (POST, no audit action) reads: its refusals are not audited.
        writes = method != "GET" and (method, path) not in UNAUDITED
        refused_writes += writes and expected in (403, 404, 409, 422)
        answer = await _send(api, method, call, key_b)
        assert answer.status == expected, (method, call.path, answer.body)
        text, asked = json.dumps(answer.body), call.path + json.dumps(call.json_body)
        leaked = [s for s in a.secrets if s in text and s not in asked]  # echoes are no leak
        assert leaked == [], (method, call.path, leaked)
    if role_allows(role, Role.EDITOR):
        # An upload under A's skill's name is B's own skill: A's stays as it was.
        upload = Call("/v1/skills", data=skill_zip(a.skill))
        same_name = await _send(api, "POST", upload, key_b)
        assert (same_name.status, same_name.body["status"]) == (200, "imported")
    assert await org_snapshot(db, a.id) == before
    assert await audit_rows(db, a.id) == audit_before
    # B's refusals are B's to read: one per refused mutating call, with its code.
    refused = [r for r in await audit_rows(db, org_b) if r["outcome"] == "refused"]
    assert len(refused) == refused_writes > 0


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
async def test_a_role_too_low_is_refused_and_changes_nothing(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, role: Role
) -> None:
    a = await _org_a(db, resources)
    key = await create_key(db, a.id, role)
    needed = {(r.method, r.path): r for r in ROUTES}
    before = await org_snapshot(db, a.id)
    audit_before = len(await audit_rows(db, a.id))
    refused, refused_writes = 0, 0
    for (method, path), (call, _) in _walk(a).items():
        route = needed[(method, path)]
        if role_allows(role, route.role):
            continue
        answer = await _send(api, method, call, key)
        assert (answer.status, answer.code) == (403, "forbidden"), (method, path, answer.body)
        refused += 1
        refused_writes += method != "GET"
    assert refused > refused_writes > 0
    assert await org_snapshot(db, a.id) == before
    rows = (await audit_rows(db, a.id))[audit_before:]
    assert len(rows) == refused_writes  # a refused write is audited once, a read is not
    assert {(r["outcome"], json.loads(json.dumps(r["detail"]))["code"]) for r in rows} == {
        ("refused", "forbidden")
    }
    assert {r["actor"] for r in rows} == {key[:12]}


async def test_no_key_a_malformed_key_or_a_wrong_secret_is_401(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.ADMIN)
    wrong_secret = key[:13] + ("A" if key[13] != "A" else "B") + key[14:]
    for headers in (
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer skt_nope"},
        {"Authorization": f"Bearer {wrong_secret}"},
    ):
        answer = await api.call("GET", "/v1/skills", headers=headers)
        assert (answer.status, answer.code) == (401, "unauthorized"), headers
    assert (await api.get("/v1/skills", key)).status == 200


async def test_a_revoked_key_is_refused_on_its_next_request(
    api: ApiClient, db: asyncpg.Connection, env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    created = await api.call("POST", "/v1/api-keys", admin, json_body={"role": "editor"})
    assert created.status == 201 and created.body["role"] == "editor"
    editor = created.body["key"]
    assert (await api.get("/v1/skills", editor)).status == 200
    revoked = await api.call("DELETE", f"/v1/api-keys/{created.body['prefix']}", admin)
    assert revoked.status == 200 and revoked.body["revoked_at"]
    assert (await api.get("/v1/skills", editor)).status == 401

    # The operator's revoke (the CLI, as the owner) takes effect the same way.
    assert (await api.get("/v1/skills", admin)).status == 200
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["api-keys", "revoke", admin[:12], "--org", str(org)])
    assert code == 0
    assert (await api.get("/v1/skills", admin)).status == 401
    listed = [
        (k["prefix"], k["revoked_at"] is not None)
        for k in (await _keys_via_cli(capsys, org))["keys"]
    ]
    assert sorted(listed) == sorted([(admin[:12], True), (created.body["prefix"], True)])


async def _keys_via_cli(capsys: pytest.CaptureFixture[str], org: uuid.UUID) -> Any:
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["api-keys", "list", "--org", str(org), "--json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


async def test_cli_creates_a_key_shown_once_and_stored_as_its_hash(
    api: ApiClient, db: asyncpg.Connection, env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    org = await create_org(db)
    capsys.readouterr()
    argv = ["api-keys", "create", "--org", str(org), "--role", "viewer", "--name", "painel"]
    assert await asyncio.to_thread(main, [*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed) >= {"key", "prefix", "role"} and printed["role"] == "viewer"
    assert printed["key"].startswith(printed["prefix"] + "_")
    row = await db.fetchrow(
        "select key_hash, role, name from api_keys where prefix = $1", printed["prefix"]
    )
    assert row is not None and (row["role"], row["name"]) == ("viewer", "painel")
    assert printed["key"].encode() not in bytes(row["key_hash"])
    assert (await api.get("/v1/skills", printed["key"])).status == 200
    assert (
        await api.call(
            "PATCH", "/v1/settings", printed["key"], json_body={"agent_authoring": "off"}
        )
    ).status == 403
    missing = await asyncio.to_thread(
        main, ["api-keys", "create", "--org", str(uuid.uuid4()), "--role", "admin"]
    )
    assert missing == 1


async def test_the_api_role_cannot_read_key_hashes_or_other_orgs_keys(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org_a, org_b = await create_org(db, "A"), await create_org(db, "B")
    await create_key(db, org_a, Role.ADMIN)
    await create_key(db, org_b, Role.ADMIN)
    lookup = await db.fetchrow(
        "select prosecdef, proconfig, pg_get_userbyid(proowner) as owner, "
        "has_function_privilege('public', oid, 'execute') as public_may "
        "from pg_proc where proname = 'skillet_api_key_lookup'"
    )
    assert lookup is not None and lookup["prosecdef"] and not lookup["public_may"]
    assert lookup["proconfig"] == ["search_path=public, pg_temp"]
    assert lookup["owner"] == await db.fetchval("select current_user")  # the migration's
    for org in (org_a, org_b, None):
        await db.execute(
            "insert into dead_letters (job_id, function, payload, error_code, error, tries, "
            "organization_id) values ('j', 'f', '{}', 'c', 'e', 1, $1)",
            org,
        )
    pool = api.deps.pool
    async with pool.acquire() as conn:  # unbound: before any org is known
        assert await conn.fetchval("select count(*) from api_keys") == 0
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetchval("select key_hash from api_keys limit 1")
    from core.tenancy import org_connection

    async with org_connection(pool, org_a) as conn:
        orgs = {
            r["organization_id"] for r in await conn.fetch("select organization_id from api_keys")
        }
        assert orgs == {org_a}
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("update api_keys set role = 'admin'")
        # Dead letters: its own only (not another org's, not the operators' without an org).
        letters = await conn.fetch("select organization_id from dead_letters")
        assert [r["organization_id"] for r in letters] == [org_a]
        assert await conn.execute("update dead_letters set requeued_at = now()") == "UPDATE 1"
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("update organizations set name = 'tomada'")


async def test_openapi_documents_exactly_the_routes_served(api: ApiClient) -> None:
    answer = await api.get("/openapi.json")  # no key needed
    assert answer.status == 200
    documented = {
        (method.upper(), path)
        for path, operations in answer.body["paths"].items()
        for method in operations
    }
    app = build_app(api.deps)
    routed = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    # The console's pages are HTML, not the JSON API: left out of the document on purpose.
    console = {(m, p) for m, p in routed if p == "/console" or p.startswith("/console/")}
    assert console and not any(p.startswith("/console") for _, p in documented)
    assert documented == routed - console
    operation_ids = [
        o["operationId"]
        for ops in answer.body["paths"].values()
        for o in ops.values()
        if "operationId" in o
    ]
    assert len(operation_ids) == len(set(operation_ids)) == len(ROUTES)
    for path, operations in answer.body["paths"].items():
        for operation in operations.values():
            if path.startswith("/v1/"):
                assert operation["security"] == [{"bearer": []}], path
                assert operation["x-skillet-role"] in {r.value for r in Role}, path
    assert (await api.get("/healthz")).status == 200
    unknown = await api.get("/v1/nada")
    assert (unknown.status, unknown.code) == (404, "not_found")
