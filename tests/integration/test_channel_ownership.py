"""Each number's own credentials, and proof of ownership (issue 25, first section).

Org B's admin tries to take org A's number; tokens prove (or fail to prove) numbers at a
fake Graph API speaking Meta's wire format; replies leave with the number's own token, wait
while Meta refuses it, and resume with a new one. Real Postgres, Redis, S3, burst workers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest
import pytest_asyncio
from aiohttp import web
from pydantic import SecretStr

from api.keys import Role
from channels.ownership import MAX_ANSWER_BYTES, ChannelNotVerified, verify_cloud_api
from cli.channel_credentials import cmd_move
from cli.main import main
from jobs.context import JobContext
from jobs.outbox_sweep import outbox_sweep
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import (
    ACCESS_TOKEN,
    cloud_delivery,
    cloud_text,
    cloud_value,
    waha_event,
)
from turn.agent_queries import insert_agent
from webhook.server import start_site
from worker.resources import Resources
from worker.settings import Settings

NUMBER_A = "106540352242922"
TOKEN_A = "EAAG-token-da-loja-a-0001"
TOKEN_A_NEW = "EAAG-token-da-loja-a-0002"
TOKEN_B = "EAAG-token-da-loja-b-0001"
WABA_A = "102290129340398"
WAHA_KEY_B = "chave-do-waha-da-loja-b"


@pytest_asyncio.fixture(loop_scope="session")
async def graph() -> AsyncIterator[FakeGraphApi]:
    """A Graph API of this test's own: A's number is seen by A's tokens only."""
    fake = FakeGraphApi(ACCESS_TOKEN)
    fake.own(TOKEN_A, NUMBER_A, "+55 11 4000-0001")
    fake.own(TOKEN_B, "106540352249999")
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v23.0"
    yield fake
    await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="session")
async def waha_b() -> AsyncIterator[FakeWaha]:
    """Org B's own WAHA server."""
    fake = FakeWaha(WAHA_KEY_B)
    fake.sessions.add("loja-b")
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}"
    yield fake
    await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="session")
async def proving(whatsapp_settings: Settings, graph: FakeGraphApi) -> Settings:
    return whatsapp_settings.model_copy(
        update={
            "graph_api_base_url": graph.base_url,
            "whatsapp_access_token": SecretStr(ACCESS_TOKEN),
        }
    )


@pytest_asyncio.fixture(loop_scope="session")
async def api(
    settings: Settings, resources: Resources, proving: Settings
) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, prove_with=proving) as client:
        yield client


async def _secrets_in_db(db: asyncpg.Connection) -> int:
    count: int = await db.fetchval("select count(*) from channel_secrets")
    return count


async def test_org_b_cannot_take_org_as_number(
    api: ApiClient, db: asyncpg.Connection, graph: FakeGraphApi
) -> None:
    org_a, org_b = await create_org(db, "Loja A"), await create_org(db, "Loja B")
    admin_a, admin_b = (
        await create_key(db, org_a, Role.ADMIN),
        await create_key(db, org_b, Role.ADMIN),
    )
    number = {"kind": "cloud_api", "address": NUMBER_A}

    # B first, before A connected it: neither its own token nor the global one sees it.
    for body in (number, {**number, "access_token": TOKEN_B}, {**number, "access_token": "x" * 20}):
        refused = await api.call("POST", "/v1/channels", admin_b, json_body=body)
        assert (refused.status, refused.code) == (422, "channel_not_verified"), refused.body
        assert "token" in refused.body["message"] and "phone_number_id" in refused.body["message"]
    assert await db.fetchval("select count(*) from channels") == 0
    assert await _secrets_in_db(db) == 0

    added = await api.call(
        "POST",
        "/v1/channels",
        admin_a,
        json_body={**number, "access_token": TOKEN_A, "waba_id": WABA_A},
    )
    assert added.status == 201, added.body
    assert added.body["access_token"] == "****0001" and added.body["waba_id"] == WABA_A
    assert added.body["display_phone"] == "+55 11 4000-0001"  # as Meta says it
    assert added.body["status"] == "active"

    # Now connected to A: B learns nothing new (same answer as before), A is told it is its own.
    again_b = await api.call(
        "POST", "/v1/channels", admin_b, json_body={**number, "access_token": TOKEN_B}
    )
    assert (again_b.status, again_b.code) == (422, "channel_not_verified")
    again_a = await api.call(
        "POST", "/v1/channels", admin_a, json_body={**number, "access_token": TOKEN_A}
    )
    assert (again_a.status, again_a.code) == (409, "channel_exists")
    # A token that does prove it (B got A's token): claimed elsewhere, still nothing moves.
    proven = await api.call(
        "POST", "/v1/channels", admin_b, json_body={**number, "access_token": TOKEN_A}
    )
    assert (proven.status, proven.code) == (409, "channel_claimed_elsewhere")
    assert "skillet channels move" in proven.body["message"]
    assert await db.fetchval("select organization_id from channels") == org_a

    # Changing the token is proven too; the token never comes back.
    path = f"/v1/channels/cloud_api/{NUMBER_A}"
    wrong = await api.call("PATCH", path, admin_a, json_body={"access_token": TOKEN_B})
    assert (wrong.status, wrong.code) == (422, "channel_not_verified")
    listed = await api.get("/v1/channels", admin_a)
    [channel] = listed.body["items"]
    assert channel["access_token"] == "****0001"
    for answer in (added, listed, again_a, proven):
        assert TOKEN_A not in str(answer.body) and TOKEN_B not in str(answer.body)
    assert (await api.get("/v1/channels", admin_b)).body["items"] == []

    # Only the narrow function reads it, for the bound org's number, as worker or API.
    for role in ("skillet_api", "skillet_worker", "skillet_webhook"):
        async with db.transaction():
            await db.execute(f"set local role {role}")
            try:
                async with db.transaction():  # a savepoint: the refusal aborts only it
                    await db.fetch("select * from channel_secrets")
            except asyncpg.InsufficientPrivilegeError:
                pass
            else:
                raise AssertionError(f"{role} read channel_secrets")
            if role != "skillet_webhook":  # unbound: no org, no row
                rows = await db.fetch(
                    "select * from skillet_channel_secrets('cloud_api', $1)", NUMBER_A
                )
                assert rows == []
    webhook_may = await db.fetchval(
        "select has_function_privilege('skillet_webhook', 'skillet_channel_secrets(text, text)',"
        " 'execute')"
    )
    assert webhook_may is False

    trail = [
        (r["action"], r["outcome"], r["detail"].get("code")) for r in await audit_rows(db, org_b)
    ]
    assert ("channel.add", "refused", "channel_claimed_elsewhere") in trail


async def test_the_operator_moves_a_proven_number_audited_in_both_orgs(
    api: ApiClient, db: asyncpg.Connection, proving: Settings
) -> None:
    org_a, org_b = await create_org(db, "Loja A"), await create_org(db, "Loja B")
    await insert_agent(db, org_b, "Bia", "Você é a Bia.")
    admin_a, admin_b = (
        await create_key(db, org_a, Role.ADMIN),
        await create_key(db, org_b, Role.ADMIN),
    )
    body = {"kind": "cloud_api", "address": NUMBER_A, "access_token": TOKEN_A}
    assert (await api.call("POST", "/v1/channels", admin_a, json_body=body)).status == 201

    args = argparse.Namespace(kind="cloud_api", address=NUMBER_A, to=org_b)
    moved = await cmd_move(args, proving)  # the operator's CLI, as the owner
    assert moved["organization_id"] == str(org_b) and moved["moved_from"] == str(org_a)
    for org in (org_a, org_b):
        [entry] = [r for r in await audit_rows(db, org) if r["action"] == "channel.move"]
        assert entry["detail"] == {
            "kind": "cloud_api",
            "address": NUMBER_A,
            "from": str(org_a),
            "to": str(org_b),
        }
    assert (await api.get("/v1/channels", admin_a)).body["items"] == []
    [theirs] = (await api.get("/v1/channels", admin_b)).body["items"]
    assert theirs["access_token"] == "****0001"  # its secret followed it
    assert await db.fetchval("select organization_id from channel_secrets") == org_b


async def test_waha_sessions_are_proven_on_their_own_server_or_connected_by_the_operator(
    api: ApiClient, db: asyncpg.Connection, waha_b: FakeWaha
) -> None:
    org_b = await create_org(db, "Loja B")
    admin_b = await create_key(db, org_b, Role.ADMIN)
    shared = await api.call(
        "POST", "/v1/channels", admin_b, json_body={"kind": "waha", "address": "loja-b"}
    )
    assert (shared.status, shared.code) == (422, "channel_not_verified")
    assert "operador" in shared.body["message"]
    own = {"kind": "waha", "address": "loja-b", "waha_base_url": waha_b.base_url}
    wrong_key = await api.call(
        "POST", "/v1/channels", admin_b, json_body={**own, "waha_api_key": "errada"}
    )
    assert (wrong_key.status, wrong_key.code) == (422, "channel_not_verified")
    unknown = await api.call(
        "POST",
        "/v1/channels",
        admin_b,
        json_body={**own, "address": "outra", "waha_api_key": WAHA_KEY_B},
    )
    assert (unknown.status, unknown.code) == (422, "channel_not_verified")
    assert await db.fetchval("select count(*) from channels") == 0
    added = await api.call(
        "POST", "/v1/channels", admin_b, json_body={**own, "waha_api_key": WAHA_KEY_B}
    )
    assert added.status == 201, added.body
    assert (
        added.body["waha_api_key"] == "****ja-b" and added.body["waha_base_url"] == waha_b.base_url
    )
    assert WAHA_KEY_B not in str(added.body)
    # An org's admin gave this server: nobody vouched for it, the worker checks it each call.
    assert await db.fetchval("select waha_server_vouched from channels") is False


async def _inbound(settings: Settings, text: str, wamid: str) -> None:
    message = cloud_text(wamid, text, sender="5511912345678", timestamp=int(time.time()))
    async with running_webhook(settings) as hook:
        posted = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER_A, [message])))
    assert posted.body["enqueued"] == 1


async def test_replies_leave_with_the_numbers_token_and_wait_while_meta_refuses_it(
    api: ApiClient,
    db: asyncpg.Connection,
    graph: FakeGraphApi,
    proving: Settings,
    resources: Resources,
    env: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    org = await create_org(db, "Loja A")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja A.")
    admin = await create_key(db, org, Role.ADMIN)
    body = {"kind": "cloud_api", "address": NUMBER_A, "access_token": TOKEN_A}
    assert (await api.call("POST", "/v1/channels", admin, json_body=body)).status == 201
    graph.delivered.clear()
    graph.sent_with.clear()

    await _inbound(proving, "Oi! Vocês entregam hoje?", "wamid.own.1")
    worker = await run_burst(proving)
    assert worker.jobs_failed == 0
    assert graph.sent_with == [TOKEN_A]  # the number's own, not the global one

    graph.revoke(TOKEN_A)  # the business rotated it at Meta
    await _inbound(proving, "E amanhã?", "wamid.own.2")
    worker = await run_burst(proving)
    assert worker.jobs_failed == 0 and len(graph.delivered) == 1
    waiting = await db.fetchrow(
        "select status, delivery_claimed_at from outbox order by created_at desc limit 1"
    )
    assert (waiting["status"], waiting["delivery_claimed_at"]) == ("pending", None)
    assert await db.fetchval("select status from channels") == "needs_token"
    assert await db.fetchval("select count(*) from dead_letters") == 0
    [listed] = (await api.get("/v1/channels", admin)).body["items"]
    assert listed["status"] == "needs_token"
    assert await asyncio.to_thread(main, ["status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert status["channels_needing_token"] == [
        {"organization_id": str(org), "kind": "cloud_api", "address": NUMBER_A}
    ]
    # Another message while it waits: its reply waits too, nothing is sent with the old token.
    await _inbound(proving, "Alô?", "wamid.own.3")
    await run_burst(proving)
    assert len(graph.delivered) == 1
    assert await db.fetchval("select count(*) from outbox where status = 'pending'") == 2

    graph.own(TOKEN_A_NEW, NUMBER_A)
    path = f"/v1/channels/cloud_api/{NUMBER_A}"
    renewed = await api.call("PATCH", path, admin, json_body={"access_token": TOKEN_A_NEW})
    assert renewed.status == 200, renewed.body
    assert (renewed.body["status"], renewed.body["resumed_conversations"]) == ("active", 1)
    worker = await run_burst(proving)
    assert worker.jobs_failed == 0
    assert graph.sent_with == [TOKEN_A, TOKEN_A_NEW, TOKEN_A_NEW]  # both waiting, in order
    assert await db.fetchval("select count(*) from outbox where status = 'sent'") == 3


async def test_a_waiting_reply_fails_when_its_window_closes(
    api: ApiClient,
    db: asyncpg.Connection,
    graph: FakeGraphApi,
    proving: Settings,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja A")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja A.")
    admin = await create_key(db, org, Role.ADMIN)
    graph.own("EAAG-token-da-loja-a-0003", NUMBER_A)
    body = {"kind": "cloud_api", "address": NUMBER_A, "access_token": "EAAG-token-da-loja-a-0003"}
    assert (await api.call("POST", "/v1/channels", admin, json_body=body)).status == 201
    graph.revoke("EAAG-token-da-loja-a-0003")
    await _inbound(proving, "Oi?", "wamid.window.1")
    await run_burst(proving)
    assert await db.fetchval("select status from outbox") == "pending"

    ctx: JobContext = {"pool": resources.pool, "outbox_abandoned_after_s": 600.0}
    ctx["customer_service_window_s"] = 86_400
    assert await outbox_sweep(ctx) == {"status": "ok", "failed": 0}  # still within 24 h
    await db.execute(
        "update messages set sent_at = now() - interval '25 hours' where direction = 'inbound'"
    )
    assert await outbox_sweep(ctx) == {"status": "ok", "failed": 0, "outside_window": 1}
    failed = await db.fetchrow("select status, last_error from outbox")
    assert failed["status"] == "failed"
    assert failed["last_error"].startswith("outside_service_window:")


async def test_a_session_of_its_own_waha_is_answered_there_with_its_key(
    api: ApiClient,
    db: asyncpg.Connection,
    waha_b: FakeWaha,
    fake_waha: FakeWaha,
    proving: Settings,
) -> None:
    org = await create_org(db, "Loja B")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja B.")
    admin = await create_key(db, org, Role.ADMIN)
    own = {"kind": "waha", "address": "loja-b", "waha_base_url": waha_b.base_url}
    added = await api.call(
        "POST", "/v1/channels", admin, json_body={**own, "waha_api_key": WAHA_KEY_B}
    )
    assert added.status == 201, added.body
    shared_before = len(fake_waha.delivered)
    event = waha_event(
        "loja-b",
        "false_5511912345678@c.us_3EB0C767D26A1D4C5F",
        "Vocês abrem domingo?",
        sender="5511912345678@c.us",
        timestamp=int(time.time()),
    )
    async with running_webhook(proving) as hook:
        assert (await hook.post_waha(event)).body["enqueued"] == 1
    # The org gave a server on loopback (the API's guard allows it here): the worker checks
    # it at every send, so it is let through the same way.
    worker = await run_burst(proving.model_copy(update={"events_allow_private_urls": True}))
    assert worker.jobs_failed == 0
    [(session, chat_id, text)] = waha_b.delivered
    assert (session, chat_id) == ("loja-b", "5511912345678@c.us") and text.strip()
    assert len(fake_waha.delivered) == shared_before  # not the shared WAHA
    assert await db.fetchval("select status from outbox") == "sent"


async def test_a_hostile_graph_answer_proves_nothing() -> None:
    """A server that answers 200 but not for this number, or more than 64 KiB, or not JSON."""
    answers = {
        "other": web.json_response({"id": "999"}),
        "huge": web.Response(
            body=b'{"id": "1", "pad": "' + b" " * (MAX_ANSWER_BYTES * 4) + b'"}',
            content_type="application/json",
        ),
        "text": web.Response(text="<html>ok</html>"),
        "redirect": web.Response(status=302, headers={"Location": "http://127.0.0.1:1/"}),
    }

    async def phone(request: web.Request) -> web.Response:
        return answers[request.match_info["case"]]

    app = web.Application()
    app.router.add_get("/{case}/{number}", phone)
    runner, port = await start_site(app, "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http:
            for case in answers:
                base = f"http://127.0.0.1:{port}/{case}"
                with pytest.raises(ChannelNotVerified):
                    await verify_cloud_api(http, base, "1", "EAAG-um-token-qualquer-1")
    finally:
        await runner.cleanup()


async def test_only_an_operator_vouches_for_a_numbers_own_waha_server(
    db: asyncpg.Connection, waha_b: FakeWaha, proving: Settings
) -> None:
    from channels.connect import Credentials, NewChannel, Prover, insert_proven_channel
    from channels.credential_queries import update_channel_credentials
    from core.channel_kind import ChannelKind
    from worker.channel_senders import proof_config

    org = await create_org(db, "Loja B")
    given = Credentials(waha_base_url=waha_b.base_url, waha_api_key=WAHA_KEY_B)
    async with aiohttp.ClientSession() as http:
        prover = Prover(http, proof_config(proving))
        by_org = await prover.prove(ChannelKind.WAHA, "loja-b", given, operator=False)
        by_operator = await prover.prove(ChannelKind.WAHA, "loja-b", given, operator=True)
    assert (by_org.waha_server_vouched, by_operator.waha_server_vouched) == (False, True)
    wanted = NewChannel(org, ChannelKind.WAHA, "loja-b")
    channel = await insert_proven_channel(db, wanted, given, by_operator)
    vouched = "select waha_server_vouched from channels where id = $1"
    assert await db.fetchval(vouched, channel.id) is True
    # A new URL from the API (an org's admin) drops the vouch; the CLI's sets it again.
    await update_channel_credentials(db, channel.id, waha_base_url="https://waha.loja-b.example")
    assert await db.fetchval(vouched, channel.id) is False
    await update_channel_credentials(
        db, channel.id, waha_base_url=waha_b.base_url, waha_server_vouched=True
    )
    assert await db.fetchval(vouched, channel.id) is True
