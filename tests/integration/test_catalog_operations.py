"""Import, customize, install (fork), uninstall, list and seed on real Postgres and S3."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import asyncpg
import pytest

from core.db import connect
from core.object_store import S3ObjectStore, object_key
from skills.catalog import (
    ImportStatus,
    SkillSource,
    import_skill_package,
    install_catalog_skill,
    list_skills,
    uninstall_skill,
)
from skills.catalog_errors import (
    CatalogFolderInvalid,
    CatalogSkillNotFound,
    OrganizationNotFound,
    SkillAlreadyInstalled,
    SkillNotInstalled,
)
from skills.catalog_seed import DEFAULT_CATALOG_DIR, SeedResult, seed_catalog
from skills.curator.queries import lock_curator_orgs
from skills.package import SkillPackageError
from skills.queries import list_installed_skills
from tests.integration.support import create_org, publish, wait_until_waiting_on_lock
from tests.package_builders import skill_md_text, skill_zip, zip_files
from worker.resources import Resources
from worker.settings import Settings

CATALOG_NAMES = ["agendamento", "objecao-preco"]


async def _versions(db: asyncpg.Connection, org: uuid.UUID | None, name: str) -> int:
    return int(
        await db.fetchval(
            "select count(*) from skill_versions "
            "where organization_id is not distinct from $1 and name = $2",
            org,
            name,
        )
    )


async def _read(store: S3ObjectStore, key: str) -> str:
    return (await store.get(key, max_bytes=1 << 20)).data.decode()


async def _seed(db: asyncpg.Connection, resources: Resources) -> SeedResult:
    return await seed_catalog(db, resources.store, DEFAULT_CATALOG_DIR)


async def test_import_unchanged_and_customize(db: asyncpg.Connection, resources: Resources) -> None:
    org = await create_org(db)
    store = resources.store
    data = skill_zip("frete", keywords=["frete"], references={"tabela.md": "SP: grátis"})

    first = await import_skill_package(db, store, organization_id=org, data=data)
    assert first.status is ImportStatus.IMPORTED
    key = object_key(org, "frete", first.version_id, "references/tabela.md")
    assert await _read(store, key) == "SP: grátis"
    row = await db.fetchrow(
        "select created_by, content_sha256 from skill_versions where id = $1", first.version_id
    )
    assert row["created_by"] == "user" and len(row["content_sha256"]) == 64

    # Same content, even zipped differently (wrapped in a folder): no new version.
    again = await import_skill_package(db, store, organization_id=org, data=data)
    wrapped = zip_files(
        {
            "frete/SKILL.md": skill_md_text("frete", keywords=["frete"]),
            "frete/references/tabela.md": "SP: grátis",
        }
    )
    rewrapped = await import_skill_package(db, store, organization_id=org, data=wrapped)
    for result in (again, rewrapped):
        assert (result.status, result.version_id) == (ImportStatus.UNCHANGED, first.version_id)
    assert await _versions(db, org, "frete") == 1

    custom = skill_zip("frete", keywords=["frete"], references={"tabela.md": "SP: R$ 9,90"})
    second = await import_skill_package(db, store, organization_id=org, data=custom)
    assert second.status is ImportStatus.IMPORTED and second.version_id != first.version_id
    [installed] = await list_installed_skills(db, org)
    assert installed.version_id == second.version_id
    # History is immutable: the first version's objects are still there.
    assert await _read(store, key) == "SP: grátis"
    new_key = object_key(org, "frete", second.version_id, "references/tabela.md")
    assert await _read(store, new_key) == "SP: R$ 9,90"


async def test_refused_package_and_unknown_org_write_nothing(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    bad = zip_files({"SKILL.md": skill_md_text("frete"), "references/run": b"\x7fELF\xff"})
    with pytest.raises(SkillPackageError) as refused:
        await import_skill_package(db, resources.store, organization_id=org, data=bad)
    assert refused.value.code == "skill_extension_not_allowed"
    assert "references/run" in refused.value.message

    stranger = uuid.uuid4()
    with pytest.raises(OrganizationNotFound) as unknown:
        await import_skill_package(
            db, resources.store, organization_id=stranger, data=skill_zip("frete")
        )
    assert unknown.value.code == "organization_not_found"
    assert await db.fetchval("select count(*) from skill_versions") == 0


async def test_install_forks_the_catalog_version(
    db: asyncpg.Connection, resources: Resources
) -> None:
    seeded = await _seed(db, resources)
    platform = {r.name: r.version_id for r in seeded.results}
    org = await create_org(db)

    installed = await install_catalog_skill(
        db, resources.store, organization_id=org, name="agendamento"
    )
    assert installed.forked_from_version_id == platform["agendamento"]
    assert installed.version_id != platform["agendamento"]
    fork = await db.fetchrow("select * from skill_versions where id = $1", installed.version_id)
    source = await db.fetchrow(
        "select * from skill_versions where id = $1", platform["agendamento"]
    )
    assert fork["organization_id"] == org and fork["created_by"] == "user"
    for column in ("name", "description", "body", "matcher", "manifest", "content_sha256"):
        assert fork[column] == source[column]
    path = "references/checklist-e-mensagens.md"
    copied = await _read(
        resources.store, object_key(org, "agendamento", installed.version_id, path)
    )
    original = await _read(resources.store, object_key(None, "agendamento", source["id"], path))
    assert copied == original and "Checklist" in copied

    listing = await list_skills(db, organization_id=org)
    assert [(s.name, s.source) for s in listing.installed] == [("agendamento", SkillSource.CATALOG)]
    assert [s.name for s in listing.catalog] == ["objecao-preco"]
    # The catalog itself is untouched.
    assert await _versions(db, None, "agendamento") == 1


async def test_install_is_refused_when_the_org_has_the_name(
    db: asyncpg.Connection, resources: Resources
) -> None:
    await _seed(db, resources)
    org = await create_org(db)
    await install_catalog_skill(db, resources.store, organization_id=org, name="agendamento")
    with pytest.raises(SkillAlreadyInstalled) as twice:
        await install_catalog_skill(db, resources.store, organization_id=org, name="agendamento")
    assert twice.value.code == "skill_already_installed"
    assert "'agendamento' já está instalada" in twice.value.message

    # A manual skill of the same name blocks the install too: customizing is an import.
    await import_skill_package(
        db, resources.store, organization_id=org, data=skill_zip("objecao-preco")
    )
    with pytest.raises(SkillAlreadyInstalled):
        await install_catalog_skill(db, resources.store, organization_id=org, name="objecao-preco")
    assert await _versions(db, org, "agendamento") == 1
    assert await _versions(db, org, "objecao-preco") == 1

    with pytest.raises(CatalogSkillNotFound) as missing:
        await install_catalog_skill(db, resources.store, organization_id=org, name="nao-existe")
    assert "agendamento, objecao-preco" in missing.value.message


async def test_uninstall_keeps_history_and_reinstall_works(
    db: asyncpg.Connection, resources: Resources
) -> None:
    await _seed(db, resources)
    org = await create_org(db)
    first = await install_catalog_skill(
        db, resources.store, organization_id=org, name="objecao-preco"
    )
    await uninstall_skill(db, organization_id=org, name="objecao-preco")

    assert await list_installed_skills(db, org) == []
    listing = await list_skills(db, organization_id=org)
    assert listing.installed == () and [s.name for s in listing.catalog] == CATALOG_NAMES
    assert await _versions(db, org, "objecao-preco") == 1
    key = object_key(org, "objecao-preco", first.version_id, "references/modelos-de-resposta.md")
    assert "Modelos de resposta" in await _read(resources.store, key)

    with pytest.raises(SkillNotInstalled) as again:
        await uninstall_skill(db, organization_id=org, name="objecao-preco")
    assert again.value.code == "skill_not_installed"

    second = await install_catalog_skill(
        db, resources.store, organization_id=org, name="objecao-preco"
    )
    assert second.version_id != first.version_id
    assert second.forked_from_version_id == first.forked_from_version_id
    [loaded] = await list_installed_skills(db, org)
    assert loaded.version_id == second.version_id


async def test_list_sources_sorting_and_shape(db: asyncpg.Connection, resources: Resources) -> None:
    await _seed(db, resources)
    org = await create_org(db)
    await import_skill_package(db, resources.store, organization_id=org, data=skill_zip("zeta"))
    await install_catalog_skill(db, resources.store, organization_id=org, name="agendamento")
    agent_version = await publish(
        db, resources.store, org, "beta", keywords=["beta"], created_by="agent"
    )

    listing = await list_skills(db, organization_id=org)
    assert [(s.name, s.source) for s in listing.installed] == [
        ("agendamento", SkillSource.CATALOG),
        ("beta", SkillSource.AGENT),
        ("zeta", SkillSource.MANUAL),
    ]
    payload = listing.to_json()
    assert set(payload) == {"installed", "catalog"}
    beta = payload["installed"][1]
    assert set(beta) == {"name", "description", "version_id", "source", "updated_at", "state"}
    assert beta["version_id"] == str(agent_version) and beta["source"] == "agent"
    assert payload["catalog"] == [
        {"name": "objecao-preco", "description": listing.catalog[0].description}
    ]


async def test_an_org_never_sees_or_installs_another_orgs_skills(
    db: asyncpg.Connection, resources: Resources
) -> None:
    await _seed(db, resources)
    org_a = await create_org(db, "A")
    org_b = await create_org(db, "B")
    secret = skill_zip("segredo-a", references={"a.md": "segredo da org A"})
    await import_skill_package(db, resources.store, organization_id=org_a, data=secret)
    a_fork = await install_catalog_skill(
        db, resources.store, organization_id=org_a, name="agendamento"
    )

    listing_b = await list_skills(db, organization_id=org_b)
    assert listing_b.installed == ()
    assert [s.name for s in listing_b.catalog] == CATALOG_NAMES
    with pytest.raises(CatalogSkillNotFound):
        await install_catalog_skill(db, resources.store, organization_id=org_b, name="segredo-a")
    with pytest.raises(SkillNotInstalled):
        await uninstall_skill(db, organization_id=org_b, name="segredo-a")

    b_fork = await install_catalog_skill(
        db, resources.store, organization_id=org_b, name="agendamento"
    )
    assert b_fork.version_id != a_fork.version_id
    assert [s.name for s in (await list_skills(db, organization_id=org_a)).installed] == [
        "agendamento",
        "segredo-a",
    ]
    # B's uninstall never touches A's pointer.
    await uninstall_skill(db, organization_id=org_b, name="agendamento")
    [a_installed, _] = await list_installed_skills(db, org_a)
    assert a_installed.version_id == a_fork.version_id


async def test_seed_is_idempotent_and_publishes_only_changed_folders(
    db: asyncpg.Connection, resources: Resources, tmp_path: Path
) -> None:
    first = await _seed(db, resources)
    assert [(r.name, r.status) for r in first.results] == [
        ("agendamento", ImportStatus.IMPORTED),
        ("objecao-preco", ImportStatus.IMPORTED),
    ]
    again = await _seed(db, resources)
    assert all(r.status is ImportStatus.UNCHANGED for r in again.results)
    assert [r.version_id for r in again.results] == [r.version_id for r in first.results]

    copy = tmp_path / "catalog"
    shutil.copytree(DEFAULT_CATALOG_DIR, copy)
    skill_md = copy / "agendamento" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nRevise a agenda toda segunda-feira.\n")
    changed = await seed_catalog(db, resources.store, copy)
    assert changed.imported == ("agendamento",)
    assert await _versions(db, None, "agendamento") == 2
    assert await _versions(db, None, "objecao-preco") == 1


async def test_seed_refuses_a_bad_folder_before_publishing_anything(
    db: asyncpg.Connection, resources: Resources, tmp_path: Path
) -> None:
    shutil.copytree(DEFAULT_CATALOG_DIR / "agendamento", tmp_path / "agendamento")
    (tmp_path / "outro-nome").mkdir()
    (tmp_path / "outro-nome" / "SKILL.md").write_text(skill_md_text("frete"))
    with pytest.raises(CatalogFolderInvalid) as refused:
        await seed_catalog(db, resources.store, tmp_path)
    assert "outro-nome" in refused.value.message
    (tmp_path / "outro-nome" / "SKILL.md").write_text("sem frontmatter")
    with pytest.raises(CatalogFolderInvalid) as invalid:
        await seed_catalog(db, resources.store, tmp_path)
    assert "skill_frontmatter_invalid" in invalid.value.message
    assert await db.fetchval("select count(*) from skill_versions") == 0


async def test_concurrent_imports_and_installs_write_once(
    db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    await _seed(db, resources)
    org = await create_org(db)
    other = await connect(settings.database_url)
    try:
        data = skill_zip("frete", references={"a.md": "texto"})
        imports = await asyncio.gather(
            import_skill_package(db, resources.store, organization_id=org, data=data),
            import_skill_package(other, resources.store, organization_id=org, data=data),
        )
        assert sorted(r.status for r in imports) == ["imported", "unchanged"]
        assert await _versions(db, org, "frete") == 1

        installs = await asyncio.gather(
            install_catalog_skill(db, resources.store, organization_id=org, name="agendamento"),
            install_catalog_skill(other, resources.store, organization_id=org, name="agendamento"),
            return_exceptions=True,
        )
    finally:
        await other.close()
    assert sorted(type(r).__name__ for r in installs) == ["InstallResult", "SkillAlreadyInstalled"]
    assert await _versions(db, org, "agendamento") == 1


async def test_pointer_changes_wait_for_a_curator_pass_over_the_org(
    db: asyncpg.Connection, resources: Resources, settings: Settings
) -> None:
    org = await create_org(db)
    curator = await connect(settings.database_url)
    try:
        pass_over_org = curator.transaction()
        await pass_over_org.start()
        await lock_curator_orgs(curator, [org])
        importing = asyncio.create_task(
            import_skill_package(db, resources.store, organization_id=org, data=skill_zip("frete"))
        )
        await wait_until_waiting_on_lock(settings.database_url, db.get_server_pid())
        assert not importing.done()
        await pass_over_org.rollback()
        result = await asyncio.wait_for(importing, timeout=10)
    finally:
        await curator.close()
    assert result.status is ImportStatus.IMPORTED


async def test_an_org_keeps_its_installed_catalog_version_when_a_new_one_is_seeded(
    db: asyncpg.Connection, resources: Resources, tmp_path: Path
) -> None:
    # The catalog's agendamento gained send_choices: an org that installed the older version
    # keeps it (docs/skills.md: uninstall and install again to take the new one).
    old = tmp_path / "old"
    shutil.copytree(DEFAULT_CATALOG_DIR, old)
    skill_md = old / "agendamento" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("`send_choices`", "o texto"))
    await seed_catalog(db, resources.store, old)
    org = await create_org(db)
    installed = await install_catalog_skill(
        db, resources.store, organization_id=org, name="agendamento"
    )
    seeded = await _seed(db, resources)
    assert "agendamento" in [r.name for r in seeded.results if r.status is ImportStatus.IMPORTED]
    [skill] = [s for s in await list_installed_skills(db, org) if s.name == "agendamento"]
    assert skill.version_id == installed.version_id
    assert "send_choices" not in skill.body
