"""WhatsApp templates end to end: synced from a fake Graph API (paging.next), listed by the
CLI and the API, sent by a person through the outbox as a real `type: template` message by
a burst worker; an unknown, rejected or mis-parametered one refused, an opted-out contact
refused, and outside the 24-hour window the text refusal lists the approved ones."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import asyncpg
import pytest

from api.keys import Role
from cli.main import main
from core.channel_kind import ChannelKind
from jobs.context import JobContext
from jobs.template_sync import template_sync
from tests.integration.api_support import create_key, running_api
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, meta_template
from tests.whatsapp_payloads import ACCESS_TOKEN, cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.crons import template_sync_config
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242944"
WABA = "102290129340398"
CUSTOMER = "5511912349999"
REMINDER = "Oi {{1}}, lembrete: seu horário é amanhã às {{2}}."


def waba_templates() -> list[dict[str, object]]:
    return [
        meta_template("lembrete_vespera", REMINDER),
        meta_template("promo_black_friday", "Só hoje!", status="REJECTED"),
        meta_template("boas_vindas", "Olá! Como podemos ajudar?"),
        meta_template("boas_vindas", "Hello! How can we help?", language="en_US"),
        {"name": "Nome Inválido!", "language": "pt_BR", "status": "APPROVED"},
    ]


async def customer_says(settings: Settings, text: str, *, age_s: int = 0) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=CUSTOMER, timestamp=int(time.time()) - age_s
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


async def setup_number(db: asyncpg.Connection, graph: FakeGraphApi) -> tuple[uuid.UUID, str]:
    org = await create_org(db, "Clínica Sorriso")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    channel = await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    await db.execute("update channels set waba_id = $2 where id = $1", channel.id, WABA)
    graph.waba_templates[WABA] = waba_templates()
    return org, await create_key(db, org, Role.EDITOR)


async def _cli_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert await asyncio.to_thread(main, [*argv, "--json"]) == 0
    parsed: dict[str, object] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return parsed


@pytest.fixture
def cli_env(
    env: Settings, whatsapp_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    monkeypatch.setenv("SKILLET_GRAPH_API_BASE_URL", whatsapp_settings.graph_api_base_url)
    monkeypatch.setenv("SKILLET_WHATSAPP_ACCESS_TOKEN", ACCESS_TOKEN)
    return whatsapp_settings


async def test_templates_are_synced_page_by_page_listed_and_sent_as_templates(
    cli_env: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    capsys: pytest.CaptureFixture[str],
) -> None:
    org, editor = await setup_number(db, fake_graph)
    base = ["channels", "templates"]
    where = ["--org", str(org), "--address", NUMBER]
    synced = await _cli_json(capsys, [*base, "sync", *where])
    assert (synced["templates"], synced["approved"], synced["skipped"]) == (4, 3, 1)
    assert synced["pages"] == 3 and fake_graph.template_pages_served == 3  # paging.next
    listed = await _cli_json(capsys, [*base, "list", *where])
    by_name = {(t["name"], t["language"]): t for t in listed["templates"]}  # type: ignore[attr-defined]
    assert by_name["lembrete_vespera", "pt_BR"]["placeholders"] == ["1", "2"]
    assert by_name["promo_black_friday", "pt_BR"]["status"] == "REJECTED"

    # A template the WABA dropped goes at the next sync.
    fake_graph.waba_templates[WABA] = waba_templates()[:3]
    assert (await _cli_json(capsys, [*base, "sync", *where]))["dropped"] == 1

    model = CountingModel()
    await customer_says(cli_env, "Oi, quero marcar uma limpeza")
    await run_burst(cli_env, model=model)
    async with running_api(cli_env, resources.store) as api:
        shown = await api.get(f"/v1/channels/cloud_api/{NUMBER}/templates", editor)
        assert shown.status == 200 and len(shown.body["items"]) == 3
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        path = f"/v1/conversations/{item['id']}/messages"

        def call(name: str, params: list[str], **more: str) -> dict[str, object]:
            return {"template": {"name": name, "params": params, **more}}

        refusals = [
            (call("nao_existe", []), 422, "template_not_found"),
            (call("promo_black_friday", []), 422, "template_not_approved"),
            (call("lembrete_vespera", ["Ana"]), 422, "template_params_mismatch"),
            (call("boas_vindas", [], language="en_US"), 422, "template_not_found"),  # dropped
            ({"text": "oi", **call("boas_vindas", [])}, 422, "invalid_input"),
        ]
        for body, status, code in refusals:
            refused = await api.call("POST", path, editor, json_body=body)
            assert (refused.status, refused.code) == (status, code), (body, refused.body)
        assert fake_graph.templates_sent == []

        sent = await api.call(
            "POST", path, editor, json_body=call("lembrete_vespera", ["Ana", "15h"])
        )
        assert sent.status == 202, sent.body
        assert sent.body["kind"] == "template" and sent.body["author"] == "person"
        assert sent.body["body"] == "Oi Ana, lembrete: seu horário é amanhã às 15h."
        await run_burst(cli_env, model=model)  # the job enqueued at once
        assert fake_graph.templates_sent == [
            (NUMBER, CUSTOMER, "lembrete_vespera", "pt_BR", ["Ana", "15h"])
        ]
        shown = (await api.get(f"/v1/conversations/{item['id']}", editor)).body
        assert shown["mode"] == "human"  # it took the conversation over
        messages = (await api.get(path, editor)).body["items"]
        assert messages[-1]["delivery"]["status"] == "sent"

        # After PARAR no template leaves.
        await customer_says(cli_env, "PARAR")
        await run_burst(cli_env, model=model)
        refused = await api.call("POST", path, editor, json_body=call("boas_vindas", []))
        assert (refused.status, refused.code) == (409, "contact_opted_out")
        assert len(fake_graph.templates_sent) == 1 and len(model.requests) == 1


async def test_outside_the_window_a_text_is_refused_with_the_templates_and_a_template_goes(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor = await setup_number(db, fake_graph)
    channel_id = await db.fetchval("select id from channels where address = $1", NUMBER)
    await db.execute(
        "insert into message_templates (organization_id, channel_id, name, language, "
        "category, status, body, placeholders) values "
        "($1, $2, 'boas_vindas', 'pt_BR', 'UTILITY', 'APPROVED', 'Olá!', '{}'), "
        "($1, $2, 'promo', 'pt_BR', 'MARKETING', 'REJECTED', 'Só hoje', '{}')",
        org,
        channel_id,
    )
    await customer_says(whatsapp_settings, "Oi", age_s=25 * 3600)
    await run_burst(whatsapp_settings, model=CountingModel())
    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        path = f"/v1/conversations/{item['id']}/messages"
        refused = await api.call("POST", path, editor, json_body={"text": "Oi, tudo bem?"})
        assert (refused.status, refused.code) == (409, "outside_service_window")
        assert [t["name"] for t in refused.body["templates"]] == ["boas_vindas"]
        sent = await api.call(
            "POST", path, editor, json_body={"template": {"name": "boas_vindas", "params": []}}
        )
        assert sent.status == 202, sent.body
        await run_burst(whatsapp_settings, model=CountingModel())
    assert [t[2] for t in fake_graph.templates_sent] == ["boas_vindas"]
    assert [text for _, _, text in fake_graph.delivered] == []  # the agent's reply: too late


async def test_the_sync_is_bounded_in_pages_and_bytes_and_refuses_waha(
    cli_env: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    capsys: pytest.CaptureFixture[str],
) -> None:
    org, _ = await setup_number(db, fake_graph)
    where = ["--org", str(org), "--address", NUMBER]
    fake_graph.waba_templates[WABA] = [meta_template(f"t_{i:03}", "Oi") for i in range(60)]
    fake_graph.templates_page_size = 1
    synced = await _cli_json(capsys, ["channels", "templates", "sync", *where])
    assert (synced["pages"], synced["complete"], synced["templates"]) == (50, False, 50)
    # An incomplete listing drops nothing: what the pages not read hold may still exist.
    await db.execute(
        "insert into message_templates (organization_id, channel_id, name, language, category, "
        "status) select $1, id, 'antigo', 'pt_BR', 'UTILITY', 'APPROVED' from channels",
        org,
    )
    synced = await _cli_json(capsys, ["channels", "templates", "sync", *where])
    assert synced["dropped"] == 0
    before = await db.fetchval("select count(*) from message_templates")

    fake_graph.template_page_extra = {"padding": "x" * (2 << 20)}  # a page past 1 MiB
    code = await asyncio.to_thread(main, ["channels", "templates", "sync", *where, "--json"])
    failure = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code != 0 and failure["error"] == "template_sync_failed"
    assert await db.fetchval("select count(*) from message_templates") == before  # no partial

    await connect_number(db, org, ChannelKind.WAHA, "loja")
    code = await asyncio.to_thread(
        main, ["channels", "templates", "sync", "--org", str(org), "--address", "loja", "--json"]
    )
    failure = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code != 0 and failure["error"] == "templates_unsupported"


async def test_the_daily_sync_reads_each_number_with_its_own_token(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, _ = await setup_number(db, fake_graph)
    own_token = "EAAG-own-token-of-the-clinic-0001"
    fake_graph.own(own_token, NUMBER)
    channel_id = await db.fetchval("select id from channels where address = $1", NUMBER)
    await db.execute(
        "insert into channel_secrets (channel_id, organization_id, access_token) "
        "values ($1, $2, $3)",
        channel_id,
        org,
        own_token,
    )
    other = await create_org(db, "Sem WABA")
    await connect_number(db, other, ChannelKind.CLOUD_API, "106540352240000")
    ctx: JobContext = {
        "pool": resources.pool,
        "templates": template_sync_config(whatsapp_settings),
    }
    fake_graph.revoke(ACCESS_TOKEN)  # only the clinic's own token can list its WABA now
    outcome = await template_sync(ctx)
    assert (outcome["status"], outcome["channels"], outcome["failed"]) == ("ok", 1, 1)
    assert outcome["templates"] == 4
    names = await db.fetch("select name from message_templates where channel_id = $1", channel_id)
    assert {r["name"] for r in names} == {"lembrete_vespera", "promo_black_friday", "boas_vindas"}
