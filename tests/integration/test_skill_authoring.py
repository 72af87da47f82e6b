"""skill_manage and skill_view on real Postgres and S3, and inside a real turn (auto mode:
the agent publishes at once; drafts under review have tests of their own)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio

from core.object_store import object_key
from skills.authoring import SkillAuthor
from skills.authoring_rules import AuthoringError
from skills.draft_queries import AuthoringMode
from skills.drafts import set_agent_authoring
from skills.models import LoadedSkill
from skills.queries import list_installed_skills
from skills.usage import UsageStore
from tests.integration.support import create_org, enqueue, payload, publish, result_of, run_burst
from turn.model import ModelRequest, ModelResponse, ToolCall
from turn.tools.base import ToolContext, ToolResult, TurnLedger
from turn.tools.registry import default_registry
from worker.resources import Resources
from worker.settings import Settings


def _author(db: asyncpg.Connection, resources: Resources, org: uuid.UUID) -> SkillAuthor:
    return SkillAuthor(
        db, resources.store, UsageStore(resources.turn_deps.clock), org, mode=AuthoringMode.AUTO
    )


def tool_context(
    resources: Resources,
    org: uuid.UUID,
    installed: list[LoadedSkill] | None = None,
    *,
    max_writes: int = 5,
) -> ToolContext:
    """What a turn hands its tools, on the worker's real pool, store and recorder."""
    return ToolContext(
        organization_id=org,
        pool=resources.pool,
        store=resources.store,
        usage=resources.turn_deps.usage,
        matched=(),
        installed=installed or [],
        max_read_bytes=1000,
        ledger=TurnLedger(max_writes=max_writes),
    )


async def call_tool(context: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return await default_registry().execute(context, ToolCall("c1", tool, arguments))


@pytest_asyncio.fixture(loop_scope="session")
async def org(db: asyncpg.Connection) -> AsyncIterator[uuid.UUID]:
    created = await create_org(db)
    await set_agent_authoring(db, organization_id=created, mode=AuthoringMode.AUTO, actor="test")
    yield created


async def _versions(db: asyncpg.Connection, org: uuid.UUID, name: str) -> list[asyncpg.Record]:
    return await db.fetch(
        "select id, created_by, body, manifest from skill_versions "
        "where organization_id = $1 and name = $2 order by created_at",
        org,
        name,
    )


async def _pointer(db: asyncpg.Connection, org: uuid.UUID, name: str) -> uuid.UUID:
    return await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2", org, name
    )


async def test_each_action_makes_a_new_version_and_moves_the_pointer(
    db: asyncpg.Connection, resources: Resources, org: uuid.UUID
) -> None:
    author = _author(db, resources, org)
    created = await author.create(
        "troca", "Como trocar um produto", "Peça o número do pedido.", ["troca"], ["devolver"]
    )
    assert await _pointer(db, org, "troca") == created.version_id
    patched = await author.patch("troca", "número do pedido", "número do pedido e a foto")
    written = await author.write_file("troca", "templates/resposta.txt", "Olá {nome}!")
    file_patched = await author.patch("troca", "Olá", "Oi", "templates/resposta.txt")
    removed = await author.remove_file("troca", "templates/resposta.txt")

    versions = await _versions(db, org, "troca")
    assert [v["id"] for v in versions] == [
        created.version_id,
        patched.version_id,
        written.version_id,
        file_patched.version_id,
        removed.version_id,
    ]  # every previous version stays
    assert {v["created_by"] for v in versions} == {"agent"}
    assert versions[1]["body"] == "Peça o número do pedido e a foto."
    assert [e["path"] for e in versions[3]["manifest"]] == ["templates/resposta.txt"]
    assert versions[4]["manifest"] == []
    assert await _pointer(db, org, "troca") == removed.version_id
    stored = await resources.store.get(
        object_key(org, "troca", file_patched.version_id, "templates/resposta.txt"), max_bytes=100
    )
    assert stored.data == b"Oi {nome}!"
    usage = await db.fetchrow(
        "select patch_count, created_by from skill_usage where organization_id = $1", org
    )
    assert (usage["patch_count"], usage["created_by"]) == (5, "agent")


async def test_refusals_teach_and_write_nothing(
    db: asyncpg.Connection, resources: Resources, org: uuid.UUID
) -> None:
    await publish(db, resources.store, org, "da-empresa", keywords=["pix"])
    await _author(db, resources, org).create("minha", "Minha skill", "Texto único.", ["x"])
    before = await db.fetchval("select count(*) from skill_versions")
    context = tool_context(resources, org, max_writes=100)
    cases = [
        ({"action": "patch", "name": "da-empresa", "old": "a", "new": "b"}, "skill_read_only"),
        (
            {
                "action": "create",
                "name": "minha",
                "description": "d",
                "body": "b",
                "any_keywords": ["y"],
            },
            "skill_exists",
        ),
        ({"action": "patch", "name": "minha", "old": "nada disso", "new": "x"}, "patch_no_match"),
        ({"action": "patch", "name": "minha", "old": "Texto", "new": "Texto"}, "patch_identical"),
        ({"action": "patch", "name": "nenhuma", "old": "a", "new": "b"}, "skill_not_found"),
        (
            {"action": "write_file", "name": "minha", "path": "../x.md", "content": "c"},
            "skill_path_invalid",
        ),
        (
            {"action": "remove_file", "name": "minha", "path": "references/nao.md"},
            "skill_file_not_found",
        ),
        (
            {
                "action": "create",
                "name": "Maiuscula",
                "description": "d",
                "body": "b",
                "any_keywords": ["y"],
            },
            "skill_name_invalid",
        ),
        (
            {
                "action": "create",
                "name": "sem-palavras",
                "description": "d",
                "body": "b",
                "any_keywords": [],
            },
            "skill_keywords_invalid",
        ),
        ({"action": "delete", "name": "minha"}, "tool_arguments_invalid"),
        ({"action": "patch", "name": "minha", "old": 3, "new": "x"}, "tool_arguments_invalid"),
        ({"action": "patch", "name": "minha", "org": str(uuid.uuid4())}, "tool_arguments_invalid"),
    ]
    for arguments, code in cases:
        result = await call_tool(context, "skill_manage", **arguments)
        assert result.error_code == code, arguments
        assert result.content.startswith(f"[erro {code}]")
    assert await db.fetchval("select count(*) from skill_versions") == before


async def test_an_org_cannot_touch_or_view_another_orgs_skill(
    db: asyncpg.Connection, resources: Resources, org: uuid.UUID
) -> None:
    other = await create_org(db, "Outra")
    await _author(db, resources, org).create("segredo", "Segredo da org", "Sigilo.", ["x"])
    try:
        await _author(db, resources, other).patch("segredo", "Sigilo", "Vazou")
        raise AssertionError("patched another org's skill")
    except AuthoringError as exc:
        assert exc.code == "skill_not_found"
    installed = await list_installed_skills(db, other)
    for draft in (False, True):
        result = await call_tool(
            tool_context(resources, other, installed), "skill_view", name="segredo", draft=draft
        )
        assert result.error_code == "skill_not_found"


async def test_skill_view_shows_body_files_and_text_but_describes_binaries(
    db: asyncpg.Connection, resources: Resources, org: uuid.UUID
) -> None:
    author = _author(db, resources, org)
    await author.create("manual", "Manual", "Leia o guia.", ["manual"])
    await author.write_file("manual", "references/guia.md", "Passo 1: ...")
    await author.write_file("manual", "assets/logo.png", "not really a png")
    installed = await list_installed_skills(db, org)

    async def view(**arguments: str) -> str:
        result = await call_tool(tool_context(resources, org, installed), "skill_view", **arguments)
        return result.content

    overview = await view(name="manual")
    assert "Leia o guia." in overview and "references/guia.md" in overview
    assert await view(name="manual", file_path="references/guia.md") == "Passo 1: ..."
    assert "arquivo binário" in await view(name="manual", file_path="assets/logo.png")


class AuthoringModel:
    """Turn 1: writes a skill. Later turns: answer from the first injected skill, if any."""

    def __init__(self) -> None:
        self.prefixes: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.prefixes.append(request.prefix)
        if "aprenda" in request.messages[-1].content and request.messages[-1].role == "user":
            call = ToolCall(
                "c1",
                "skill_manage",
                {
                    "action": "create",
                    "name": "garantia-estendida",
                    "description": "Como oferecer a garantia estendida",
                    "body": "A garantia estendida custa 10% do produto e vale 2 anos.",
                    "any_keywords": ["garantia estendida"],
                },
            )
            return ModelResponse(text=None, tool_calls=(call,))
        if request.messages[-1].role == "tool":
            return ModelResponse(text="Anotado!")
        bodies = [s.body for s in request.injected_skills]
        return ModelResponse(text=bodies[0] if bodies else "Não sei.")


async def test_a_skill_created_in_a_turn_matches_from_the_next_turn(
    settings: Settings, db: asyncpg.Connection, resources: Resources, org: uuid.UUID
) -> None:
    model = AuthoringModel()
    contact = "5511977770000"
    [first] = await enqueue(settings, payload(org, "t1", "aprenda: garantia estendida", contact))
    await run_burst(settings, model=model)
    assert (await result_of(settings, first))["tools"] == ["skill_manage"]
    [second] = await enqueue(settings, payload(org, "t2", "quero a garantia estendida", contact))
    [third] = await enqueue(settings, payload(org, "t3", "e a garantia estendida?", contact))
    await run_burst(settings, model=model)
    # t2 and t3 are one burst: whichever job took the conversation answers both.
    results = [await result_of(settings, job) for job in (second, third)]
    [answering] = [r for r in results if "t2" in r["answered"]]
    assert [m["name"] for m in answering["matched"]] == ["garantia-estendida"]
    reply = await db.fetchval(
        "select r.body from messages i join messages r on r.id = i.answered_by "
        "where i.external_id = 't2'"
    )
    assert reply == "A garantia estendida custa 10% do produto e vale 2 anos."
    # The prefix changed once (the new skill joined the index), then stayed byte-identical.
    assert model.prefixes[0] == model.prefixes[1]  # same turn: before and after the tool call
    assert model.prefixes[2] != model.prefixes[0] and "garantia-estendida" in model.prefixes[2]
    assert len(set(model.prefixes[2:])) == 1
    assert sorted(r["status"] for r in results) in (["queued", "replied"], ["replied", "replied"])
