"""The skill editor through the admin API: publish from fields (the package's rules, refusals
that write nothing), files, history, rollback, optimistic concurrency, roles and the audit."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest_asyncio

from api.keys import Role
from skills.curator.run import run_curator
from tests.integration.api_support import (
    Answer,
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.curator_support import days_ago, install, options, states
from tests.integration.support import create_org, publish
from tests.package_builders import skill_zip
from worker.resources import Resources
from worker.settings import Settings

ZIP = {"Content-Type": "application/zip"}
RAW = {"Content-Type": "application/octet-stream"}


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


def _edit(base: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "base_version_id": base,
        "description": fields.get("description", "Política de trocas da loja."),
        "body": fields.get("body", "Trocas em até 7 dias com nota fiscal."),
        "keywords": fields.get("keywords", "troca, trocar, devolução"),
        "probe_keywords": fields.get("probe_keywords", "garantia"),
    }


async def _put(api: ApiClient, key: str, name: str, body: dict[str, Any]) -> Answer:
    return await api.call("PUT", f"/v1/skills/{name}", key, json_body=body)


async def test_a_new_skill_then_a_new_version_signed_by_the_key_and_audited(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR, name="Maria (loja)")

    created = await _put(api, key, "trocas", _edit(None))
    assert created.status == 201, created.body
    assert created.body["created"] is True and created.body["base_version_id"] is None
    first = created.body["version_id"]

    shown = await api.get("/v1/skills/trocas", key)
    assert shown.status == 200
    body = shown.body
    assert (body["version_id"], body["keywords"], body["probe_keywords"]) == (
        first,
        "troca, trocar, devolução",
        "garantia",
    )
    assert (body["created_via"], body["source"], body["state"], body["pinned"]) == (
        "editor",
        "manual",
        "active",
        False,
    )
    assert body["author"] == {"key_prefix": key[:12], "key_name": "Maria (loja)"}
    assert body["files"] == [] and body["close_to"] == []

    again = await _put(api, key, "trocas", _edit(first, body="Trocas em até 30 dias."))
    assert again.status == 200 and again.body["created"] is False
    second = again.body["version_id"]
    stale = await _put(api, key, "trocas", _edit(first, body="Outra coisa."))
    assert (stale.status, stale.code) == (409, "skill_base_moved")
    assert stale.body["current_version_id"] == second
    twice = await _put(api, key, "trocas", _edit(None))
    assert (twice.status, twice.code) == (409, "skill_already_installed")

    row = await db.fetchrow(
        "select created_by, created_via, author_key_prefix from skill_versions where id = $1",
        uuid.UUID(second),
    )
    assert tuple(row) == ("user", "editor", key[:12])  # the business's, not the agent's
    rows = await audit_rows(db, org)
    assert [(r["action"], r["outcome"]) for r in rows] == [
        ("skill.edit", "ok"),
        ("skill.edit", "ok"),
        ("skill.edit", "refused"),
        ("skill.edit", "refused"),
    ]
    assert rows[1]["before_version_id"] == uuid.UUID(first)
    assert rows[1]["after_version_id"] == uuid.UUID(second)
    assert rows[2]["detail"] == {"code": "skill_base_moved"}


async def test_package_refusals_name_their_field_and_write_nothing(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    made = await _put(api, key, "trocas", _edit(None))
    base = made.body["version_id"]
    before = await org_snapshot(db, org)
    cases = [
        (_edit(base, description="Use <script>"), "skill_frontmatter_invalid", "description"),
        (_edit(base, body="linha\n" * 201), "skill_body_too_long", "body"),
        (_edit(base, keywords="", probe_keywords="pix"), "skill_frontmatter_invalid", "keywords"),
        (_edit(base, keywords="a +"), "skill_frontmatter_invalid", "keywords"),
        (_edit(base, probe_keywords="x" * 65), "skill_frontmatter_invalid", "probe_keywords"),
        (_edit(base, body="   "), "skill_frontmatter_invalid", "body"),
    ]
    for body, code, field in cases:
        answer = await _put(api, key, "trocas", body)
        assert (answer.status, answer.code, answer.body.get("field")) == (422, code, field)
        assert answer.body["message"]  # the package's pt-BR message
    bad_name = await _put(api, key, "Trocas Loja", _edit(None))
    assert (bad_name.status, bad_name.code, bad_name.body["field"]) == (
        422,
        "skill_frontmatter_invalid",
        "name",
    )
    assert await org_snapshot(db, org) == before
    refused = [r for r in await audit_rows(db, org) if r["outcome"] == "refused"]
    assert len(refused) == len(cases) + 1


async def test_files_carry_over_download_as_attachments_and_refuse_like_a_zip(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    v1 = (await _put(api, key, "pix", _edit(None, keywords="pix"))).body["version_id"]
    page = b"<html><script>alert(1)</script></html>"
    added = await api.call(
        "PUT",
        f"/v1/skills/pix/files/assets/pagina.html?base_version_id={v1}",
        key,
        data=page,
        headers=RAW,
    )
    assert added.status == 200, added.body
    v2 = added.body["version_id"]
    ref = await api.call(
        "PUT",
        f"/v1/skills/pix/files/references/chave.md?base_version_id={v2}",
        key,
        data=b"Chave Pix: loja@example.com",
        headers=RAW,
    )
    v3 = ref.body["version_id"]
    edited = await _put(api, key, "pix", _edit(v3, keywords="pix", body="Veja references/chave.md"))
    v4 = edited.body["version_id"]
    shown = (await api.get("/v1/skills/pix", key)).body
    assert [(f["path"], f["size"], f["read_count"]) for f in shown["files"]] == [
        ("assets/pagina.html", len(page), 0),
        ("references/chave.md", 27, 0),
    ]

    async with api.http.get(
        api.base_url + "/v1/skills/pix/files/assets/pagina.html",
        headers={"Authorization": f"Bearer {key}"},
    ) as response:
        assert response.status == 200
        assert await response.read() == page
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Content-Disposition"] == 'attachment; filename="pagina.html"'
        assert response.headers["Content-Type"].startswith("text/plain")  # never text/html
        assert "sandbox" in response.headers["Content-Security-Policy"]
    old = await api.get(f"/v1/skills/pix/files/references/chave.md?version_id={v2}", key)
    assert (old.status, old.code) == (404, "skill_file_not_found")

    binary = await api.call(
        "PUT",
        f"/v1/skills/pix/files/references/foto.md?base_version_id={v4}",
        key,
        data=b"\xff\xd8\xff\xe0",
        headers=RAW,
    )
    assert (binary.status, binary.code, binary.body["field"]) == (
        422,
        "skill_extension_not_allowed",
        "file",
    )
    escape = await api.call(
        "PUT",
        f"/v1/skills/pix/files/references/../../x.md?base_version_id={v4}",
        key,
        data=b"x",
        headers=RAW,
    )
    assert escape.status in (404, 422)  # the client or the parser: never stored
    no_base = await api.call("DELETE", "/v1/skills/pix/files/assets/pagina.html", key)
    assert (no_base.status, no_base.code) == (422, "base_required")
    removed = await api.call(
        "DELETE", f"/v1/skills/pix/files/assets/pagina.html?base_version_id={v4}", key
    )
    assert removed.status == 200
    after = (await api.get("/v1/skills/pix", key)).body
    assert [f["path"] for f in after["files"]] == ["references/chave.md"]
    assert after["body"] == "Veja references/chave.md"
    missing = await api.call(
        "DELETE",
        f"/v1/skills/pix/files/assets/pagina.html?base_version_id={removed.body['version_id']}",
        key,
    )
    assert (missing.status, missing.code) == (404, "skill_file_not_found")
    actions = [r["action"] for r in await audit_rows(db, org) if r["outcome"] == "ok"]
    assert actions == [
        "skill.edit",
        "skill.file_put",
        "skill.file_put",
        "skill.edit",
        "skill.file_delete",
    ]


async def test_history_pages_diffs_and_rolls_back_with_concurrency_checked(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    other_org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    versions = []
    base = None
    for n in range(3):
        answer = await _put(api, key, "horario", _edit(base, body=f"Abrimos às {8 + n}h."))
        base = answer.body["version_id"]
        versions.append(base)
    other = await _put(api, key, "outra", _edit(None, keywords="outra"))
    foreign = await publish(db, resources.store, other_org, "horario", keywords=["h"])

    pages = await api.walk("/v1/skills/horario/versions", key, 2)
    assert [len(p) for p in pages] == [2, 1]
    listed = [v["version_id"] for p in pages for v in p]
    assert listed == versions[::-1]
    assert [v["current"] for p in pages for v in p] == [True, False, False]

    one = await api.get(f"/v1/skills/horario/versions/{versions[0]}", key)
    assert one.status == 200 and one.body["body"] == "Abrimos às 8h."
    assert "-Abrimos às 10h." in one.body["diff"]["skill_md"]
    assert "+Abrimos às 8h." in one.body["diff"]["skill_md"]

    back = await api.call(
        "POST",
        "/v1/skills/horario/rollback",
        key,
        json_body={"version_id": versions[0], "base_version_id": versions[2]},
    )
    assert back.status == 200 and back.body["version_id"] == versions[0]
    assert (await api.get("/v1/skills/horario", key)).body["body"] == "Abrimos às 8h."
    stale = await api.call(
        "POST",
        "/v1/skills/horario/rollback",
        key,
        json_body={"version_id": versions[1], "base_version_id": versions[2]},
    )
    assert (stale.status, stale.code) == (409, "skill_base_moved")
    assert stale.body["current_version_id"] == versions[0]
    for wrong in (other.body["version_id"], str(foreign)):
        refused = await api.call(
            "POST",
            "/v1/skills/horario/rollback",
            key,
            json_body={"version_id": wrong, "base_version_id": versions[0]},
        )
        assert (refused.status, refused.code) == (404, "skill_version_not_found")
    foreign_read = await api.get(f"/v1/skills/horario/versions/{foreign}", key)
    assert foreign_read.status == 404


async def test_two_editors_from_one_base_one_wins_one_is_told_the_current(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    base = (await _put(api, key, "frete", _edit(None, keywords="frete"))).body["version_id"]
    for _ in range(3):
        answers = await asyncio.gather(
            *(
                _put(api, key, "frete", _edit(base, keywords="frete", body=f"Versão {n}."))
                for n in range(4)
            )
        )
        won = [a for a in answers if a.status == 200]
        lost = [a for a in answers if a.status == 409]
        assert len(won) == 1 and len(lost) == 3, [a.body for a in answers]
        assert {a.body["current_version_id"] for a in lost} == {won[0].body["version_id"]}
        base = won[0].body["version_id"]
    pointer = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = 'frete'",
        org,
    )
    assert str(pointer) == base


async def test_catalog_names_fork_on_edit_and_an_uninstalled_name_keeps_its_history(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    name = f"catalogo-{uuid.uuid4().hex[:8]}"
    platform = await publish(
        db,
        resources.store,
        None,
        name,
        keywords=["agenda"],
        created_by="platform",
        references={"references/guia.md": "Guia do catálogo."},
    )
    reserved = await _put(api, key, name, _edit(None))
    assert (reserved.status, reserved.code) == (409, "skill_name_reserved")
    forked = await _put(api, key, name, _edit(str(platform), body="Nossa agenda."))
    assert forked.status == 201, forked.body
    assert forked.body["forked_from_version_id"] == str(platform)
    history = (await api.get(f"/v1/skills/{name}/versions", key)).body["items"]
    assert [v["created_via"] for v in history] == ["editor", "catalog"]
    shown = (await api.get(f"/v1/skills/{name}", key)).body
    assert [f["path"] for f in shown["files"]] == ["references/guia.md"]
    file = await api.get(f"/v1/skills/{name}/files/references/guia.md", key)
    assert file.body == "Guia do catálogo."

    upload = await api.call("POST", "/v1/skills", key, data=skill_zip("reuso"), headers=ZIP)
    assert upload.status == 200
    assert (await api.call("DELETE", "/v1/skills/reuso", key)).status == 200
    again = await _put(api, key, "reuso", _edit(None))
    assert again.status == 201
    history = (await api.get("/v1/skills/reuso/versions", key)).body["items"]
    assert [v["created_via"] for v in history] == ["editor", "upload"]
    # An upload and an install through the API are signed by the key too.
    assert history[1]["author"] == {"key_prefix": key[:12], "key_name": None}
    other = f"{name}-b"
    await publish(db, resources.store, None, other, keywords=["b"], created_by="platform")
    installed = await api.call("POST", f"/v1/catalog/{other}/install", key)
    assert installed.status == 201
    shown = (await api.get(f"/v1/skills/{other}", key)).body
    assert (shown["created_via"], shown["author"]) == (
        "catalog",
        {"key_prefix": key[:12], "key_name": None},
    )


async def test_a_viewer_reads_and_is_refused_every_write(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    editor = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)
    base = (await _put(api, editor, "pix", _edit(None, keywords="pix"))).body["version_id"]
    before = await org_snapshot(db, org)
    assert (await api.get("/v1/skills/pix", viewer)).status == 200
    assert (await api.get("/v1/skills/pix/versions", viewer)).status == 200
    writes = [
        ("PUT", "/v1/skills/pix", {"json_body": _edit(base)}),
        ("PUT", f"/v1/skills/pix/files/references/a.md?base_version_id={base}", {"data": b"a"}),
        ("DELETE", f"/v1/skills/pix/files/references/a.md?base_version_id={base}", {}),
        (
            "POST",
            "/v1/skills/pix/rollback",
            {"json_body": {"version_id": base, "base_version_id": base}},
        ),
    ]
    for method, path, kwargs in writes:
        answer = await api.call(method, path, viewer, **kwargs)
        assert (answer.status, answer.code) == (403, "forbidden")
    assert await org_snapshot(db, org) == before


async def test_an_agent_skill_edited_by_the_business_is_no_longer_the_curators(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    await install(db, org, "ocioso", last_activity_at=days_ago(120))  # the agent's
    await install(db, org, "tambem-ocioso", last_activity_at=days_ago(120))
    current = (await api.get("/v1/skills/ocioso", key)).body
    assert current["source"] == "agent" and current["created_via"] == "agent"
    edited = await _put(api, key, "ocioso", _edit(current["version_id"], keywords="ocioso"))
    assert edited.status == 200

    report = (await run_curator(db, org, options())).to_json()
    assert {"name": "ocioso", "reason": "not-agent-created"} in report["skipped"]
    assert report["transitioned"] == [{"name": "tambem-ocioso", "from": "active", "to": "archived"}]
    assert (await states(db, org))["ocioso"] == "active"
