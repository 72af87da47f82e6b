"""Sugestões and the customers' WhatsApp profile names, on real Postgres through the API: a
profile name is `[removido]` in the questions shown, never kept in a draft's body (not even
when answers to two customers repeat it), listed among the draft's removals, and never a
keyword; the business's own value beside it stays."""

from __future__ import annotations

import uuid

import asyncpg

from api.keys import Role
from tests.integration.api_support import create_key, running_api
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

MESSAGE = """
insert into messages (organization_id, conversation_id, direction, channel, external_id, body,
                      received_at, created_at, kind, author, author_key_prefix)
values ($1, $2, $3, 'whatsapp', $4, $5, now() - make_interval(secs => $6),
        now() - make_interval(secs => $6), 'text', $7, $8)
returning id
"""

THREADS = {
    # contact: (profile name, customer's question, the person's answer)
    "5511933330001": (
        "Mariana Costa 🌸",
        "Mariana aqui! vocês aceitam pagamento no pix?",
        "Oi Mariana! Aceitamos sim, a chave pix é loja@exemplo.com, manda o comprovante.",
    ),
    "5511933330002": (
        "Rafael",
        "boa tarde, da pra pagar no pix? Rafael",
        "Pode sim, Rafael Mariana Costa: a chave pix é loja@exemplo.com, manda o comprovante.",
    ),
}


async def _thread(
    db: asyncpg.Connection, org: uuid.UUID, contact: str, name: str, question: str, answer: str
) -> None:
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id, contact_name) "
        "values ($1, 'whatsapp', $2, $3) returning id",
        org,
        contact,
        name,
    )
    asked = await db.fetchval(
        MESSAGE, org, conversation, "inbound", f"wamid.{contact}", question, 120.0, None, None
    )
    answered = await db.fetchval(
        MESSAGE, org, conversation, "outbound", None, answer, 60.0, "person", "skt_person1"
    )
    await db.execute("update messages set answered_by = $1 where id = $2", answered, asked)


async def test_a_profile_name_never_reaches_a_suggestions_draft(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    for contact, (name, question, answer) in THREADS.items():
        await _thread(db, org, contact, name, question, answer)
    editor = await create_key(db, org, Role.EDITOR)
    async with running_api(settings, resources.store) as client:
        listed = await client.get("/v1/suggestions", editor)
        assert listed.status == 200, listed.body
        [group] = listed.body["items"]
        questions = [q["text"] for q in group["questions"]]
        assert questions == [
            "[removido] aqui! vocês aceitam pagamento no pix?",
            "boa tarde, da pra pagar no pix? [removido]",
        ]
        made = await client.call("POST", f"/v1/suggestions/{group['id']}/draft", editor)
        assert made.status == 201, made.body
        shown = await client.get(f"/v1/drafts/{made.body['draft']}", editor)
        body, suggestion = shown.body["body"], shown.body["suggestion"]
        # Both answers name Mariana and Rafael: a value two customers got, yet theirs.
        assert "Mariana" not in body and "Rafael" not in body, body
        assert "loja@exemplo.com" in body  # the business's own key stays
        removed_names = {r["value"] for r in suggestion["removed"] if r["kind"] == "name"}
        assert {"Mariana", "Rafael"} <= {v.split()[0] for v in removed_names}
        assert "loja@exemplo.com" in {k["value"] for k in suggestion["kept"]}
        keywords = await db.fetchval(
            "select array(select jsonb_array_elements_text(v.matcher->'any_keywords')) "
            "from skill_versions v join skill_drafts d on d.version_id = v.id where d.name = $1",
            made.body["draft"],
        )
        assert keywords and not any(
            n in k.casefold() for k in keywords for n in ("mariana", "rafael", "costa")
        )
