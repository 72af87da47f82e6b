"""read_skill_reference against the real S3 server: caps, tenancy, storage failures."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from skills.models import LoadedSkill
from skills.queries import list_installed_skills
from skills.storage import S3ObjectStore
from tests.integration.support import create_org, publish
from turn.tools.read_skill_reference import read_skill_reference
from worker.processes import free_port
from worker.resources import Resources, s3_client
from worker.settings import Settings

LONG = "ação " * 2000  # 10,000+ bytes, multi-byte characters across the cap


async def _installed(db: asyncpg.Connection, org: uuid.UUID) -> list[LoadedSkill]:
    return await list_installed_skills(db, org)


async def test_reads_listed_reference_and_truncates_over_the_cap(
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
    short = await read_skill_reference(
        resources.store,
        organization_id=org,
        matched=matched,
        skill_name="manual",
        path="references/curto.md",
        max_bytes=1024,
    )
    assert short.error_code is None and short.content == "Prazo: 3 dias."
    long = await read_skill_reference(
        resources.store,
        organization_id=org,
        matched=matched,
        skill_name="manual",
        path="references/longo.md",
        max_bytes=1024,
    )
    assert long.error_code is None
    assert "truncado em 1024 bytes" in long.content
    assert len(long.content.split("\n\n[arquivo truncado")[0].encode()) <= 1024 + 3


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
    result = await read_skill_reference(
        resources.store,
        organization_id=org_b,
        matched=a_skills,
        skill_name="manual",
        path="references/segredo.md",
        max_bytes=1024,
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
        result = await read_skill_reference(
            S3ObjectStore(client, dead.s3_bucket),
            organization_id=org,
            matched=matched,
            skill_name="manual",
            path="references/a.md",
            max_bytes=1024,
        )
    assert result.error_code == "storage_unavailable"


@pytest.mark.parametrize(
    ("skill_name", "path", "code"),
    [
        ("nao-casada", "references/a.md", "skill_not_active"),
        ("manual", "references/outro.md", "reference_not_found"),
        ("manual", "../../outra-org/x.md", "reference_not_found"),
        ("manual", None, "reference_not_found"),
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
    result = await read_skill_reference(
        resources.store,
        organization_id=org,
        matched=await _installed(db, org),
        skill_name=skill_name,
        path=path,
        max_bytes=1024,
    )
    assert result.error_code == code
