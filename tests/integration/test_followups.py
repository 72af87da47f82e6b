"""Follow-ups end to end: the model schedules a template (schedule_followup) in a real burst
worker; the cron sends a due one once through the outbox to a fake Graph API, and not at all
when the customer wrote since, opted out (PARAR) or a person holds the conversation; the
caps and refusals; a person lists and cancels them through the API."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from jobs.context import JobContext
from jobs.followup_tick import followup_tick
from jobs.queue import open_queue
from tests.integration.api_support import running_api
from tests.integration.support import run_burst
from tests.integration.test_templates import CUSTOMER, NUMBER, customer_says, setup_number
from tests.integration.whatsapp_fakes import FakeGraphApi
from turn.model import ModelRequest, ModelResponse, ToolCall
from worker.metrics import WorkerMetrics
from worker.resources import Resources
from worker.settings import Settings

SCHEDULED = "Combinado, te lembro na véspera."


@dataclass
class SchedulingModel:
    """Calls schedule_followup with `arguments` when the customer says "agendar", then
    answers SCHEDULED; keeps what each tool call answered."""

    arguments: dict[str, Any]
    tool_answers: list[str] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        tools = [m for m in request.messages if m.role == "tool"]
        if tools:
            self.tool_answers.append(str(tools[-1].content))
            return ModelResponse(text=SCHEDULED, provider="local", model="local")
        if "agendar" not in str(request.messages[-1].content):
            return ModelResponse(text="Certo.", provider="local", model="local")
        call = ToolCall("f1", "schedule_followup", self.arguments)
        return ModelResponse(text=None, tool_calls=(call,), provider="local", model="local")


def _reminder(at: datetime, **more: Any) -> dict[str, Any]:
    return {
        "at": at.isoformat(),
        "template": "lembrete_vespera",
        "params": ["Ana", "15h"],
        **more,
    }


METRICS = WorkerMetrics()


async def _tick(resources: Resources, settings: Settings) -> dict[str, Any]:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        ctx: JobContext = {"pool": resources.pool, "redis": redis, "metrics": METRICS}
        return await followup_tick(ctx)
    finally:
        await redis.aclose()


async def _sync(db: asyncpg.Connection, org: Any) -> None:
    channel = await db.fetchval("select id from channels where address = $1", NUMBER)
    await db.execute(
        "insert into message_templates (organization_id, channel_id, name, language, "
        "category, status, body, placeholders) values "
        "($1, $2, 'lembrete_vespera', 'pt_BR', 'UTILITY', 'APPROVED', "
        "'Oi {{1}}, lembrete: seu horário é amanhã às {{2}}.', '{1,2}'), "
        "($1, $2, 'promo', 'pt_BR', 'MARKETING', 'REJECTED', 'Só hoje', '{}')",
        org,
        channel,
    )


DUE_NOW = "update followups set due_at = now() - interval '1 second' where status = 'scheduled'"
STATUSES = "select status, status_reason from followups order by created_at"


async def test_a_due_followup_is_sent_once_and_not_when_the_customer_wrote_since(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor = await setup_number(db, fake_graph)
    await _sync(db, org)
    model = SchedulingModel(_reminder(datetime.now(UTC) + timedelta(days=1)))
    await customer_says(whatsapp_settings, "quero agendar amanhã 15h")
    await run_burst(whatsapp_settings, model=model)
    assert model.tool_answers[0].startswith("Agendado")
    assert [tuple(r) for r in await db.fetch(STATUSES)] == [("scheduled", None)]
    assert (await _tick(resources, whatsapp_settings))["sent"] == 0  # not due yet

    await db.execute(DUE_NOW)
    assert (await _tick(resources, whatsapp_settings))["sent"] == 1
    assert (await _tick(resources, whatsapp_settings))["sent"] == 0  # decided once
    await run_burst(whatsapp_settings, model=model)  # the job enqueued at once
    await run_burst(whatsapp_settings, model=model)
    assert fake_graph.templates_sent == [
        (NUMBER, CUSTOMER, "lembrete_vespera", "pt_BR", ["Ana", "15h"])
    ]
    assert await db.fetchval("select count(*) from outbox where template is not null") == 1

    # The next one: the customer writes before it is due, so it is never sent.
    await customer_says(whatsapp_settings, "vou agendar outro")
    await run_burst(whatsapp_settings, model=model)
    await customer_says(whatsapp_settings, "na verdade já resolvi, obrigado")
    await run_burst(whatsapp_settings, model=model)
    await db.execute(DUE_NOW)
    assert (await _tick(resources, whatsapp_settings))["skipped"] == {"customer_wrote": 1}
    await run_burst(whatsapp_settings, model=model)
    assert len(fake_graph.templates_sent) == 1

    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        listed = (await api.get(f"/v1/conversations/{item['id']}/followups", editor)).body
        assert [(f["status"], f["reason"]) for f in listed["items"]] == [
            ("sent", None),
            ("skipped", "customer_wrote"),
        ]
        assert listed["items"][0]["body"] == "Oi Ana, lembrete: seu horário é amanhã às 15h."


async def test_no_followup_after_parar_nor_while_a_person_holds_it_and_a_person_cancels(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor = await setup_number(db, fake_graph)
    await _sync(db, org)
    model = SchedulingModel(_reminder(datetime.now(UTC) + timedelta(hours=3)))
    for _ in range(3):
        await customer_says(whatsapp_settings, "quero agendar")
        await run_burst(whatsapp_settings, model=model)
    assert all(a.startswith("Agendado") for a in model.tool_answers)
    await customer_says(whatsapp_settings, "quero agendar mais um")
    await run_burst(whatsapp_settings, model=model)
    assert "followup_cap_reached" in model.tool_answers[-1]

    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        base = f"/v1/conversations/{item['id']}/followups"
        first, second, third = (await api.get(base, editor)).body["items"]
        cancelled = await api.call("POST", f"{base}/{first['id']}/cancel", editor, json_body={})
        assert cancelled.status == 200 and cancelled.body["status"] == "cancelled"
        again = await api.call("POST", f"{base}/{first['id']}/cancel", editor, json_body={})
        assert again.status == 200 and again.body["cancelled_now"] is False

        # After PARAR nothing is sent. (Each is made as if scheduled after the customer's
        # last message, so only the rule under test can skip it.)
        fresh = "update followups set created_at = now(), due_at = now() where id = $1"
        await customer_says(whatsapp_settings, "PARAR")
        await run_burst(whatsapp_settings, model=model)
        await db.execute(fresh, uuid.UUID(second["id"]))
        tick = await _tick(resources, whatsapp_settings)
        assert tick["sent"] == 0 and tick["skipped"] == {"opted_out": 1}

        # Back in, but a person holds the conversation: still nothing.
        await customer_says(whatsapp_settings, "VOLTAR")
        await run_burst(whatsapp_settings, model=model)
        taken = await api.call(
            "POST", f"/v1/conversations/{item['id']}/takeover", editor, json_body={}
        )
        assert taken.status == 200
        await db.execute(fresh, uuid.UUID(third["id"]))
        tick = await _tick(resources, whatsapp_settings)
        assert tick["sent"] == 0 and tick["skipped"] == {"person_holds": 1}
        await run_burst(whatsapp_settings, model=model)
        statuses = [(f["status"], f["reason"]) for f in (await api.get(base, editor)).body["items"]]
        assert sorted(statuses, key=str) == sorted(
            [("cancelled", editor[:12]), ("skipped", "opted_out"), ("skipped", "person_holds")],
            key=str,
        )
    assert fake_graph.templates_sent == []


async def test_the_tool_refuses_a_bad_time_an_unknown_or_rejected_template_and_opted_out(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org, _ = await setup_number(db, fake_graph)
    await _sync(db, org)
    now = datetime.now(UTC)
    cases = [
        ({"at": "amanhã", "template": "lembrete_vespera"}, "followup_time_invalid"),
        ({"at": "2026-12-10T09:00:00", "template": "lembrete_vespera"}, "followup_time_invalid"),
        (_reminder(now + timedelta(seconds=20)), "followup_time_invalid"),
        (_reminder(now + timedelta(days=31)), "followup_time_invalid"),
        (_reminder(now + timedelta(days=1), template="nao_existe"), "template_not_found"),
        (_reminder(now + timedelta(days=1), template="promo", params=[]), "template_not_approved"),
        (_reminder(now + timedelta(days=1), params=["Ana"]), "template_params_mismatch"),
    ]
    for arguments, code in cases:
        model = SchedulingModel(arguments)
        await customer_says(whatsapp_settings, "quero agendar")
        await run_burst(whatsapp_settings, model=model)
        assert f"[erro {code}]" in model.tool_answers[-1], (arguments, model.tool_answers)
    await customer_says(whatsapp_settings, "Stop")
    await run_burst(whatsapp_settings, model=SchedulingModel({}))
    model = SchedulingModel(_reminder(now + timedelta(days=1)))
    await customer_says(whatsapp_settings, "quero agendar")
    await run_burst(whatsapp_settings, model=model)
    assert "[erro contact_opted_out]" in model.tool_answers[-1]
    assert await db.fetchval("select count(*) from followups") == 0


async def test_a_followup_whose_template_is_no_longer_approved_is_not_sent(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, _ = await setup_number(db, fake_graph)
    await _sync(db, org)
    model = SchedulingModel(_reminder(datetime.now(UTC) + timedelta(days=1)))
    await customer_says(whatsapp_settings, "quero agendar")
    await run_burst(whatsapp_settings, model=model)
    await db.execute("update message_templates set status = 'PAUSED'")  # as the next sync saw
    await db.execute(DUE_NOW)
    before = METRICS.followups.labels(result="template_unavailable")._value.get()
    tick = await _tick(resources, whatsapp_settings)
    assert tick["sent"] == 0 and tick["skipped"] == {"template_unavailable": 1}
    assert METRICS.followups.labels(result="template_unavailable")._value.get() == before + 1
    await run_burst(whatsapp_settings, model=model)
    assert fake_graph.templates_sent == []
