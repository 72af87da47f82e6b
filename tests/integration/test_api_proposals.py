"""The API of consolidation: settings, proposals (list, show, approve, refusals), close skills
named on drafts and listed on skills, through a running API as its own database role."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio

from api.keys import Role
from consolidation.run import consolidate_org
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.curator_support import NOW
from tests.integration.test_consolidation import EAGER, _org
from worker.resources import Resources
from worker.settings import Settings


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_settings_proposals_and_close_skills(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store, mode="off")
    admin = await create_key(db, org, Role.ADMIN)
    editor = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)

    got = await api.call("GET", "/v1/settings", viewer)
    assert got.body["consolidation"] == "off"
    changed = await api.call("PATCH", "/v1/settings", admin, json_body={"consolidation": "review"})
    assert changed.status == 200 and changed.body["consolidation"] == "review"
    assert changed.body["previous"] == {"consolidation": "off"}
    empty = await api.call("PATCH", "/v1/settings", admin, json_body={})
    assert empty.status == 422

    report = await consolidate_org(db, resources.store, org, EAGER, now=NOW)
    [made] = report.proposals
    listed = await api.call("GET", "/v1/proposals", viewer)
    assert [p["id"] for p in listed.body["items"]] == [str(made.id)]
    shown = await api.call("GET", f"/v1/proposals/{made.id}", viewer)
    assert shown.status == 200
    assert "+- politica-de-troca:" in shown.body["diff"]["skill_md"]
    assert "references/politica-de-troca/SKILL.md" in shown.body["diff"]["files"]["added"]
    uses = {m["name"]: m["uses_30d"] for m in shown.body["members"]}
    assert uses == {"trocar-produto": 9, "troca-de-produto": 2, "politica-de-troca": 0}

    skills = await api.call("GET", "/v1/skills", viewer)
    near = {s["name"]: [n["name"] for n in s["neighbours"]] for s in skills.body["items"]}
    assert "trocar-produto" in near["troca-de-produto"]
    assert near["horario-de-funcionamento"] == []

    refused = await api.call("POST", f"/v1/proposals/{made.id}/approve", viewer)
    assert refused.status == 403
    approved = await api.call("POST", f"/v1/proposals/{made.id}/approve", editor)
    assert approved.status == 200 and approved.body["status"] == "approved"
    assert "as duas podem ser acionadas" in approved.body["note"]
    again = await api.call("POST", f"/v1/proposals/{made.id}/reject", editor)
    assert (again.status, again.code) == (409, "proposal_decided")
    bogus = await api.call("GET", "/v1/proposals/not-a-uuid", viewer)
    assert bogus.status == 404

    # The agent drafts a near-duplicate of an installed skill: the draft says so.
    await db.execute("update organizations set agent_authoring = 'review' where id = $1", org)
    author = SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )
    await author.create(
        "chave-pix-pagamento",
        "Envia a chave Pix e confirma o pagamento do pedido",
        "Mande a chave Pix da loja e peça o comprovante do Pix.",
        ["pix", "chave pix"],
    )
    drafts = await api.call("GET", "/v1/drafts", viewer)
    [draft] = drafts.body["items"]
    assert draft["close_to"][0]["name"] == "pagamento-pix"
    assert draft["close_to"][0]["score"] > 0.5
    one = await api.call("GET", "/v1/drafts/chave-pix-pagamento", viewer)
    assert one.body["close_to"] == draft["close_to"]
