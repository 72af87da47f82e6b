"""Conversas' search and filters through the API on real Postgres: `?q=` over names, numbers
and what customers wrote (accents and case folded, `%` and `_` literal, bounded length),
`?held_by=`, `?unanswered=`, `?mode=`, paging under filters, and one org never finding
another's conversations."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg

from api.keys import Role
from api.people_queries import person_actor
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.conversation_rows import insert_conversation
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


async def _found(api: ApiClient, key: str, query: str) -> list[str]:
    answer = await api.get(f"/v1/conversations?{query}", key)
    assert answer.status == 200, answer.body
    return [c["contact_id"] for c in answer.body["items"]]


async def test_search_finds_by_name_number_and_words_and_never_in_another_org(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja Busca")
    other = await create_org(db, "Outra Loja")
    at = T0
    await insert_conversation(db, org, "5511977776666", "João Araújo", ["oi"], at=at)
    await insert_conversation(
        db, org, "5521988887777", "Mariana", ["Vocês aceitam PIX?"], at=at + timedelta(1)
    )
    await insert_conversation(
        db, org, "5531999990000", None, ["tem 50% de desconto?"], at=at + timedelta(2)
    )
    await insert_conversation(
        db, org, "5541911112222", None, ["quero 500 unidades", "a_b"], at=at + timedelta(3)
    )
    # The other org's customer says the very words searched for, under the same name.
    await insert_conversation(
        db, other, "5511977776666", "João Araújo", ["aceitam pix? 50%"], at=at + timedelta(4)
    )
    key = await create_key(db, org, Role.VIEWER)
    other_key = await create_key(db, other, Role.VIEWER)
    async with running_api(settings, resources.store) as api:
        assert await _found(api, key, "q=joao") == ["5511977776666"]  # accents, case
        assert await _found(api, key, "q=ARAÚJO") == ["5511977776666"]
        assert await _found(api, key, "q=pix") == ["5521988887777"]  # what they wrote
        assert await _found(api, key, "q=aceitam%20p") == ["5521988887777"]
        assert await _found(api, key, "q=97777-6666") == ["5511977776666"]  # the number
        assert await _found(api, key, "q=%2B55%2031%209999") == ["5531999990000"]
        assert await _found(api, key, "q=50%25") == ["5531999990000"]  # % is a percent sign
        assert await _found(api, key, "q=a_b") == ["5541911112222"]  # _ is an underscore
        assert await _found(api, key, "q=__") == []
        assert await _found(api, key, "q=%25%25") == []
        assert await _found(api, key, "q=ninguém") == []
        # The other org finds its own, only.
        assert await _found(api, other_key, "q=joao") == ["5511977776666"]
        assert await _found(api, other_key, "q=unidades") == []
        [mine] = (await api.get("/v1/conversations?q=joao", key)).body["items"]
        [theirs] = (await api.get("/v1/conversations?q=joao", other_key)).body["items"]
        assert mine["id"] != theirs["id"]

        for bad in ("q=a", "q=%20%20x%20", "q=" + "x" * 101, "q=", "q=ab%00"):
            refused = await api.get(f"/v1/conversations?{bad}", key)
            assert (refused.status, refused.code) == (422, "invalid_search"), bad
        assert await _found(api, key, "q=" + "x" * 100) == []


async def test_filters_narrow_the_list_and_paging_keeps_every_row_once(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja Filtros")
    ana, bia = uuid.uuid4(), uuid.uuid4()
    for person, name in ((ana, "Ana"), (bia, "Bia")):
        await db.execute(
            """insert into people (id, organization_id, name, email, role)
               values ($1, $2, $3, $4, 'editor')""",
            person,
            org,
            name,
            f"{name.lower()}@loja.example",
        )
    ana_key = f"person:{ana}"
    rows = [
        ("5511900000001", "human", ana_key, False),
        ("5511900000002", "human", person_actor(bia), True),
        ("5511900000003", "human", "phone", False),
        ("5511900000004", "waiting", None, False),
        ("5511900000005", "agent", None, True),
        ("5511900000006", "agent", None, False),
        ("5511900000007", "human", ana_key, False),
    ]
    for n, (contact, mode, held_by, answered) in enumerate(rows):
        await insert_conversation(
            db,
            org,
            contact,
            "Cliente Pix",
            ["pix?"],
            at=T0 + timedelta(minutes=n),
            mode=mode,
            held_by=held_by,
            answered=answered,
        )
    key = await create_key(db, org, Role.ADMIN)
    async with running_api(settings, resources.store) as api:
        assert await _found(api, key, f"held_by={bia}") == ["5511900000002"]
        assert await _found(api, key, "held_by=phone") == ["5511900000003"]
        assert await _found(api, key, f"held_by={ana}&unanswered=true") == [
            "5511900000007",
            "5511900000001",
        ]
        assert await _found(api, key, "unanswered=true&mode=agent") == ["5511900000006"]
        assert await _found(api, key, "unanswered=true&mode=waiting&q=pix") == ["5511900000004"]
        assert await _found(api, key, "held_by=me") == []  # the key holds none of them yet
        # A conversation the key itself holds (its prefix is its held_by): `me` finds it.
        await insert_conversation(
            db, org, "5511900000008", None, ["oi"], at=T0, mode="human", held_by=key[:12]
        )
        assert await _found(api, key, "held_by=me") == ["5511900000008"]
        assert len(await _found(api, key, "unanswered=false")) == len(rows) + 1
        for bad, code in (
            ("held_by=ninguem", "invalid_held_by"),
            ("unanswered=sim", "invalid_unanswered"),
        ):
            refused = await api.get(f"/v1/conversations?{bad}", key)
            assert (refused.status, refused.code) == (422, code), bad
        refused = await api.get("/v1/conversations?mode=todas", key)
        assert (refused.status, refused.code) == (400, "invalid_mode")

        # Paging under a filter: every matching row once, in order, across pages of one.
        pages = await api.walk("/v1/conversations?unanswered=true&q=cliente%20pix", key, 1)
        walked = [item["contact_id"] for page in pages for item in page]
        assert walked == [
            "5511900000007",
            "5511900000006",
            "5511900000004",
            "5511900000003",
            "5511900000001",
        ]
        # Each row: the last message (its preview) and the unanswered count.
        [row] = (await api.get("/v1/conversations?q=900000006", key)).body["items"]
        assert row["last_message"]["body"] == "pix?" and row["unanswered"] == 1
