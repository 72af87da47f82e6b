"""Internal notes and quick replies through the API: a note stays with the team (never sent,
never in the model's request), paged, audited; quick replies are the org's, capped at 200,
titles unique regardless of case, editors write and viewers read."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg

from api.keys import Role
from api.quick_reply_routes import MAX_QUICK_REPLIES
from core.channel_kind import ChannelKind
from tests.integration.api_support import audit_rows, create_key, running_api
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
NOTE = "Cliente VIP: já comprou 3 vezes, oferecer frete grátis (não dizer a ele)"


async def _customer_says(settings: Settings, text: str) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender="5511912345678", timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


async def test_a_note_stays_with_the_team_never_reaching_the_customer_or_the_model(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    editor = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)
    model = CountingModel()
    await _customer_says(whatsapp_settings, "Oi, qual o prazo?")
    await run_burst(whatsapp_settings, model=model)
    conversation = await db.fetchval("select id from conversations where organization_id = $1", org)
    path = f"/v1/conversations/{conversation}/notes"

    async with running_api(whatsapp_settings, resources.store) as api:
        for text in ("", "   ", "x" * 4097):
            bad = await api.call("POST", path, editor, json_body={"text": text})
            assert (bad.status, bad.code) == (422, "note_text_invalid"), text
        refused = await api.call("POST", path, viewer, json_body={"text": "oi"})
        assert (refused.status, refused.code) == (403, "forbidden")
        missing = await api.call(
            "POST", f"/v1/conversations/{uuid.uuid4()}/notes", editor, json_body={"text": "oi"}
        )
        assert (missing.status, missing.code) == (404, "conversation_not_found")

        made = await api.call("POST", path, editor, json_body={"text": f"  {NOTE}  "})
        assert made.status == 201, made.body
        assert (made.body["text"], made.body["author"]) == (NOTE, editor[:12])
        longest = await api.call("POST", path, editor, json_body={"text": "é" * 4096})
        assert longest.status == 201
        first = await api.get(f"{path}?limit=1", viewer)
        assert [n["text"] for n in first.body["items"]] == [NOTE]
        rest = await api.get(f"{path}?limit=1&cursor={first.body['next']}", viewer)
        assert [n["text"] for n in rest.body["items"]] == ["é" * 4096]
        assert rest.body["next"] is None
        # The thread's messages do not carry it.
        messages = (await api.get(f"/v1/conversations/{conversation}/messages", viewer)).body
        assert NOTE not in str(messages)

    await _customer_says(whatsapp_settings, "E o frete?")
    await run_burst(whatsapp_settings, model=model)
    assert len(model.requests) == 2 and [t for _, _, t in fake_graph.delivered][-1] == AGENT_REPLY
    for request in model.requests:
        assert "VIP" not in repr(request)  # prefix, skill context, messages, tools
    assert all("VIP" not in text for _, _, text in fake_graph.delivered)
    notes = [r for r in await audit_rows(db, org) if r["action"] == "conversation.note"]
    assert [r["outcome"] for r in notes] == ["refused"] * 5 + ["ok"] * 2
    assert all("VIP" not in str(r["detail"]) for r in notes)


async def test_quick_replies_are_the_orgs_capped_and_titled_once(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, other = await create_org(db, "Loja"), await create_org(db, "Outra")
    editor, viewer = await create_key(db, org, Role.EDITOR), await create_key(db, org, Role.VIEWER)
    stranger = await create_key(db, other, Role.ADMIN)
    async with running_api(settings, resources.store) as api:
        made = await api.call(
            "POST", "/v1/quick-replies", editor, json_body={"title": "Frete", "text": "Grátis!"}
        )
        assert made.status == 201, made.body
        same = await api.call(
            "POST", "/v1/quick-replies", editor, json_body={"title": " FRETE ", "text": "x"}
        )
        assert (same.status, same.code) == (409, "quick_reply_title_taken")
        for body, code in (
            ({"title": "x" * 41, "text": "t"}, "quick_reply_title_invalid"),
            ({"title": "  ", "text": "t"}, "quick_reply_title_invalid"),
            ({"title": "t", "text": "x" * 4097}, "quick_reply_text_invalid"),
            ({"title": "t", "text": " "}, "quick_reply_text_invalid"),
        ):
            bad = await api.call("POST", "/v1/quick-replies", editor, json_body=body)
            assert (bad.status, bad.code) == (422, code), body
        refused = await api.call(
            "POST", "/v1/quick-replies", viewer, json_body={"title": "a", "text": "b"}
        )
        assert (refused.status, refused.code) == (403, "forbidden")
        listed = await api.get("/v1/quick-replies", viewer)
        assert [q["title"] for q in listed.body["items"]] == ["Frete"]
        assert (await api.get("/v1/quick-replies", stranger)).body["items"] == []

        ident = made.body["id"]
        hidden = await api.call(
            "PATCH", f"/v1/quick-replies/{ident}", stranger, json_body={"text": "x"}
        )
        assert (hidden.status, hidden.code) == (404, "quick_reply_not_found")
        empty = await api.call("PATCH", f"/v1/quick-replies/{ident}", editor, json_body={})
        assert (empty.status, empty.code) == (422, "quick_reply_change_empty")
        changed = await api.call(
            "PATCH", f"/v1/quick-replies/{ident}", editor, json_body={"text": "Frete grátis."}
        )
        assert (changed.status, changed.body["title"], changed.body["text"]) == (
            200,
            "Frete",
            "Frete grátis.",
        )

        # The cap: 200 per org, then a clear 409 (the 201st is refused, nothing written).
        await db.execute(
            "insert into quick_replies (id, organization_id, title, text, created_by) "
            "select gen_random_uuid(), $1, 'r' || n, 'texto', 'cli' "
            "from generate_series(2, $2) n",
            org,
            MAX_QUICK_REPLIES,
        )
        full = await api.call(
            "POST", "/v1/quick-replies", editor, json_body={"title": "mais", "text": "x"}
        )
        assert (full.status, full.code) == (409, "quick_replies_full")
        pages = await api.walk("/v1/quick-replies", viewer, 100)
        assert [len(p) for p in pages] == [100, 100]
        gone = await api.call("DELETE", f"/v1/quick-replies/{ident}", editor)
        assert gone.status == 200
        again = await api.call(
            "POST", "/v1/quick-replies", editor, json_body={"title": "mais", "text": "x"}
        )
        assert again.status == 201
    actions = [r["action"] for r in await audit_rows(db, org) if r["outcome"] == "ok"]
    assert actions == [
        "quick_reply.create",
        "quick_reply.update",
        "quick_reply.delete",
        "quick_reply.create",
    ]


async def test_saving_at_once_never_passes_the_cap(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja")
    editor = await create_key(db, org, Role.EDITOR)
    await db.execute(
        "insert into quick_replies (id, organization_id, title, text, created_by) "
        "select gen_random_uuid(), $1, 'r' || n, 'texto', 'cli' from generate_series(2, $2) n",
        org,
        MAX_QUICK_REPLIES,
    )  # one short of the cap
    async with running_api(settings, resources.store) as api:
        answers = await asyncio.gather(
            *(
                api.call(
                    "POST", "/v1/quick-replies", editor, json_body={"title": f"n{n}", "text": "x"}
                )
                for n in range(5)
            )
        )
    assert (
        sorted((a.status, a.code) for a in answers)
        == [(201, None)] + [(409, "quick_replies_full")] * 4
    )
    count = await db.fetchval("select count(*) from quick_replies where organization_id = $1", org)
    assert count == MAX_QUICK_REPLIES
