"""read_skill_reference against the real S3 server: caps, tenancy, storage failures."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from core.object_store import S3ObjectStore
from dev.processes import free_port
from skills.models import LoadedSkill
from skills.queries import list_installed_skills
from tests.integration.support import create_org, publish
from tests.tool_support import read_reference, reference_context
from worker.resources import Resources, s3_client
from worker.settings import Settings

LONG = "ação " * 2000  # 10,000+ bytes, multi-byte characters across the cap


async def _installed(db: asyncpg.Connection, org: uuid.UUID) -> list[LoadedSkill]:
    return await list_installed_skills(db, org)


async def test_reads_a_listed_reference_page_by_page_from_real_storage(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "manual",
        keywords=["manual"],
        references={"references/curto.md": "Prazo: 3 dias.", "references/longo.md": LONG},
    )
    matched = await _installed(db, org)
    short = await read_reference(
        reference_context(resources.store, org, matched, max_bytes=1024),
        "manual",
        "references/curto.md",
    )
    assert short.error_code is None and short.content == "Prazo: 3 dias."
    context = reference_context(resources.store, org, matched, max_bytes=1024)
    offset, pages = 0, []
    while True:  # S3 range reads, as the model follows the offsets each page names
        page = await read_reference(context, "manual", "references/longo.md", offset)
        assert page.error_code is None
        body, _, notice = page.content.partition("\n\n[trecho")
        assert len(body.encode()) <= 1024
        pages.append(body)
        if "offset=" not in notice:
            break
        offset = int(notice.rsplit("offset=", 1)[1].rstrip("]"))
    assert "".join(pages) == LONG and len(pages) > 1


async def test_another_orgs_reference_is_unreachable(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org_a = await create_org(db, "A")
    org_b = await create_org(db, "B")
    await publish(
        db,
        resources.store,
        org_a,
        "manual",
        keywords=["manual"],
        references={"references/segredo.md": "segredo da org A"},
    )
    a_skills = await _installed(db, org_a)
    # Even handed A's skill as if it matched, B's turn builds keys under B's own prefix.
    result = await read_reference(
        reference_context(resources.store, org_b, a_skills, max_bytes=1024),
        "manual",
        "references/segredo.md",
    )
    assert result.error_code == "reference_not_found"
    assert "segredo da org A" not in result.content


async def test_storage_down_is_a_teaching_message(
    db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "manual",
        keywords=["manual"],
        references={"references/a.md": "texto"},
    )
    matched = await _installed(db, org)
    dead = settings.model_copy(update={"s3_endpoint_url": f"http://127.0.0.1:{free_port()}"})
    async with s3_client(dead) as client:
        result = await read_reference(
            reference_context(S3ObjectStore(client, dead.s3_bucket), org, matched, max_bytes=1024),
            "manual",
            "references/a.md",
        )
    assert result.error_code == "storage_unavailable"


@pytest.mark.parametrize(
    ("skill_name", "path", "code"),
    [
        ("nao-casada", "references/a.md", "skill_not_active"),
        ("manual", "references/outro.md", "reference_not_found"),
        ("manual", "../../outra-org/x.md", "reference_not_found"),
        ("manual", None, "tool_arguments_invalid"),
    ],
)
async def test_refusals_name_the_rule(
    db: asyncpg.Connection, resources: Resources, skill_name: str, path: str | None, code: str
) -> None:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "manual",
        keywords=["manual"],
        references={"references/a.md": "texto"},
    )
    result = await read_reference(
        reference_context(resources.store, org, await _installed(db, org), max_bytes=1024),
        skill_name,
        path,
    )
    assert result.error_code == code
