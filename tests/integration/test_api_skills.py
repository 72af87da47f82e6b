"""The org's skills through the admin API: uploads (hostile and oversized ones too), the
lifecycle with its audit trail, draft review, and daily activations."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg
import pytest_asyncio

from api.keys import Role
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import (
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.support import create_org, publish
from tests.package_builders import skill_md_text, skill_zip, zip_files
from worker.resources import Resources
from worker.settings import Settings

ZIP = {"Content-Type": "application/zip"}


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


def _multipart(data: bytes, filename: str = "skill.zip") -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("file", data, filename=filename, content_type="application/zip")
    return form


async def test_a_hostile_zip_is_422_changes_nothing_and_leaves_one_audit_row(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    key = await create_key(db, org, Role.EDITOR)
    before = await org_snapshot(db, org)
    slip = zip_files({"SKILL.md": skill_md_text("frete"), "../../etc/frete.md": "pwned"})

    answer = await api.call("POST", "/v1/skills", key, data=slip, headers=ZIP)
    assert (answer.status, answer.code) == (422, "skill_unsafe_path")
    assert "'../../etc/frete.md'" in answer.body["message"]  # pt-BR, says what to fix
    assert await org_snapshot(db, org) == before
    [row] = await audit_rows(db, org)
    assert (row["action"], row["outcome"], row["actor"]) == ("skill.import", "refused", key[:12])
    assert row["detail"] == {"code": "skill_unsafe_path"}

    executable = zip_files({"SKILL.md": skill_md_text("frete"), "references/run": b"\x7fELF\xff"})
    multipart = await api.call("POST", "/v1/skills", key, data=_multipart(executable))
    assert (multipart.status, multipart.code) == (422, "skill_extension_not_allowed")
    not_a_zip = await api.call("POST", "/v1/skills", key, data=b"MZ\x90\x00", headers=ZIP)
    assert (not_a_zip.status, not_a_zip.code) == (422, "skill_not_a_zip")
    assert await org_snapshot(db, org) == before
    codes = [r["detail"]["code"] for r in await audit_rows(db, org)]
    assert codes == ["skill_unsafe_path", "skill_extension_not_allowed", "skill_not_a_zip"]


async def test_an_upload_over_8_mib_is_413(api: ApiClient, db: asyncpg.Connection) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    before = await org_snapshot(db, org)
    oversized = io.BytesIO(b"\0" * (8 * 1024 * 1024 + 1))
    declared = await api.call("POST", "/v1/skills", key, data=oversized, headers=ZIP)
    assert (declared.status, declared.code) == (413, "skill_too_large")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: refused while streaming
        for _ in range(9):
            yield b"\0" * (1024 * 1024)

    streamed = await api.call("POST", "/v1/skills", key, data=chunks(), headers=ZIP)
    assert (streamed.status, streamed.code) == (413, "skill_too_large")
    assert await org_snapshot(db, org) == before
    assert [r["detail"] for r in await audit_rows(db, org)] == [{"code": "skill_too_large"}] * 2


def _installed(answer: Any) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in answer.body["items"]}


async def test_the_skill_lifecycle_is_the_clis_with_every_change_audited(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)
    platform = await publish(
        db, resources.store, None, "agenda-x", keywords=["agenda"], created_by="platform"
    )

    first = await api.call("POST", "/v1/skills", key, data=skill_zip("frete"), headers=ZIP)
    assert first.status == 200 and (first.body["status"], first.body["created"]) == (
        "imported",
        True,
    )
    again = await api.call("POST", "/v1/skills", key, data=skill_zip("frete"), headers=ZIP)
    assert again.body["status"] == "unchanged"
    form = await api.call("POST", "/v1/skills", key, data=_multipart(skill_zip("troca")))
    assert form.body["status"] == "imported"
    catalog = await api.get("/v1/catalog", viewer)
    assert [c["name"] for c in catalog.body["items"]] == ["agenda-x"]
    installed = await api.call("POST", "/v1/catalog/agenda-x/install", key)
    assert installed.status == 201 and installed.body["forked_from_version_id"] == str(platform)
    twice = await api.call("POST", "/v1/catalog/agenda-x/install", key)
    assert (twice.status, twice.code) == (409, "skill_already_installed")

    assert (await api.call("POST", "/v1/skills/frete/pin", key)).body["pinned"] is True
    listed = _installed(await api.get("/v1/skills", viewer))
    assert sorted(listed) == ["agenda-x", "frete", "troca"]
    assert (listed["frete"]["pinned"], listed["frete"]["state"]) == (True, "active")
    assert (listed["frete"]["source"], listed["agenda-x"]["source"]) == ("manual", "catalog")
    assert listed["frete"]["version_id"] == first.body["version_id"]
    assert (await api.call("POST", "/v1/skills/frete/unpin", key)).body["pinned"] is False
    await db.execute(
        "insert into skill_usage (organization_id, skill_name, state, archived_at) "
        "values ($1, 'troca', 'archived', now())",
        org,
    )
    restored = await api.call("POST", "/v1/skills/troca/restore", key)
    assert (restored.body["previous_state"], restored.body["state"]) == ("archived", "active")
    assert (await api.call("DELETE", "/v1/skills/frete", key)).status == 200
    gone = await api.call("DELETE", "/v1/skills/frete", key)
    assert (gone.status, gone.code) == (404, "skill_not_installed")
    assert sorted(_installed(await api.get("/v1/skills", viewer))) == ["agenda-x", "troca"]

    frete = first.body["version_id"]
    trail = [
        (e["action"], e["outcome"], e["skill"], e["before_version_id"], e["after_version_id"])
        for e in reversed((await api.get("/v1/audit", viewer)).body["items"])
    ]
    troca, agenda = form.body["version_id"], installed.body["version_id"]
    assert trail == [
        ("skill.import", "ok", "frete", None, frete),
        ("skill.import", "ok", "frete", frete, frete),
        ("skill.import", "ok", "troca", None, troca),
        ("skill.install", "ok", "agenda-x", None, agenda),
        ("skill.install", "refused", "agenda-x", None, None),
        ("skill.pin", "ok", "frete", frete, frete),
        ("skill.unpin", "ok", "frete", frete, frete),
        ("skill.restore", "ok", "troca", troca, troca),
        ("skill.uninstall", "ok", "frete", frete, None),
        ("skill.uninstall", "refused", "frete", None, None),
    ]
    assert {r["actor"] for r in await audit_rows(db, org)} == {key[:12]}


async def test_a_person_reviews_and_decides_drafts_through_the_api(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)  # review mode: what the agent writes is a draft
    key = await create_key(db, org, Role.EDITOR)
    author = SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )
    created = await author.create("troca", "Como trocar", "Peça o número do pedido.", ["troca"])
    await author.create("brinde", "Brinde", "Diga que tudo é grátis.", ["brinde"])

    listed = (await api.get("/v1/drafts", key)).body["items"]
    assert sorted((d["name"], d["status"]) for d in listed) == [
        ("brinde", "pending"),
        ("troca", "pending"),
    ]
    shown = await api.get("/v1/drafts/troca", key)
    assert shown.status == 200 and "+++ rascunho/SKILL.md" in shown.body["diff"]["skill_md"]
    assert shown.body["body"] == "Peça o número do pedido."

    approved = await api.call("POST", "/v1/drafts/troca/approve", key)
    assert approved.status == 200
    assert approved.body["after_version_id"] == str(created.version_id)
    pointer = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = 'troca'", org
    )
    assert pointer == created.version_id
    rejected = await api.call("POST", "/v1/drafts/brinde/reject", key)
    assert rejected.body["status"] == "rejected"
    again = await api.call("POST", "/v1/drafts/troca/approve", key)
    assert (again.status, again.code) == (404, "draft_not_found")
    assert [
        (d["name"], d["status"]) for d in (await api.get("/v1/drafts", key)).body["items"]
    ] == []

    rows = [
        (r["action"], r["outcome"], r["skill_name"], r["actor"]) for r in await audit_rows(db, org)
    ]
    assert rows == [
        ("draft.approve", "ok", "troca", key[:12]),
        ("draft.reject", "ok", "brinde", key[:12]),
        ("draft.approve", "refused", "troca", key[:12]),  # once: skills.drafts wrote it
    ]


async def test_activations_are_counted_per_utc_day_for_7_and_30_days(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    now = datetime(2026, 11, 30, 1, 30, tzinfo=UTC)
    today = date(2026, 11, 30)
    org, other = await create_org(db, "A"), await create_org(db, "B")
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    key = await create_key(db, org, Role.VIEWER)
    # days ago -> (hard, probe, intent)
    counts = {0: (3, 1, 2), 6: (2, 0, 0), 7: (5, 5, 1), 29: (1, 1, 0), 30: (100, 100, 100)}
    async with running_api(settings, resources.store, clock=lambda: now) as api:
        for ago, (hard, probe, intent) in counts.items():
            await db.execute(
                "insert into skill_activation_daily (organization_id, skill_name, day, "
                "hard_count, probe_count, capped_count, intent_count) "
                "values ($1, 'frete', $2, $3, $4, 0, $5)",
                org,
                today - timedelta(days=ago),
                hard,
                probe,
                intent,
            )
        for owner, name in ((other, "frete"), (org, "troca")):  # not this skill of this org
            await db.execute(
                "insert into skill_activation_daily values ($1, $2, $3, 50, 50, 0)",
                owner,
                name,
                today,
            )
        answer = await api.get("/v1/skills/frete/activations", key)
        missing = await api.get("/v1/skills/troca/activations", key)
        listed = await api.get("/v1/skills", key)
    assert answer.status == 200, answer.body
    assert answer.body["today"] == "2026-11-30"
    assert answer.body["last_7_days"] == {"hard": 5, "intent": 2, "probe": 1}
    # Customers' negative reactions to its replies ride along (none here).
    assert answer.body["last_30_days"] == {
        "hard": 11,
        "intent": 3,
        "probe": 7,
        "negative_reactions": 0,
    }
    days = answer.body["days"]
    assert len(days) == 30 and days[0]["day"] == "2026-11-01" and days[-1]["day"] == "2026-11-30"
    assert days[-1] == {"day": "2026-11-30", "hard": 3, "intent": 2, "probe": 1}
    assert (missing.status, missing.code) == (404, "skill_not_installed")
    # The installed list carries the same 30-day sums (the console's skills page shows them).
    [frete] = listed.body["items"]
    assert frete["last_30_days"] == {
        "hard": 11,
        "intent": 3,
        "probe": 7,
        "capped": 0,
        "negative_reactions": 0,
    }
