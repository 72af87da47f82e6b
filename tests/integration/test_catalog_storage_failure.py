"""The S3 server dies half-way through an import or install: the previous state stays."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import asyncpg
import pytest

from core.errors import StorageError
from core.object_store import S3ObjectStore, StoredObject
from dev.processes import free_port
from dev.weed import WeedProcess, start_weed
from skills.catalog import (
    import_skill_package,
    install_catalog_skill,
    list_skills,
)
from skills.catalog_seed import DEFAULT_CATALOG_DIR, seed_catalog
from skills.queries import list_installed_skills
from tests.integration.conftest import S3_ACCESS_KEY, S3_SECRET_KEY
from tests.integration.support import create_org
from tests.package_builders import skill_zip
from worker.resources import s3_client
from worker.settings import Settings


class StopServerAfterFirstPut:
    """Delegates to a real store and stops the real S3 server right after the first put."""

    def __init__(self, store: S3ObjectStore, weed: WeedProcess) -> None:
        self._store = store
        self._weed = weed
        self.puts = 0

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        if self.puts == 1:
            self._weed.stop()
        self.puts += 1
        await self._store.put(key, data, content_type)

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        return await self._store.get(key, max_bytes=max_bytes)

    async def copy(self, source_key: str, dest_key: str) -> None:
        await self._store.copy(source_key, dest_key)


@pytest.fixture
def private_weed(tmp_path: Path) -> contextlib.AbstractContextManager[WeedProcess]:
    @contextlib.contextmanager
    def running() -> Generator[WeedProcess]:
        weed = start_weed(tmp_path / "weed", free_port(), S3_ACCESS_KEY, S3_SECRET_KEY)
        try:
            yield weed
        finally:
            weed.stop()

    return running()


@contextlib.asynccontextmanager
async def _store(settings: Settings, weed: WeedProcess) -> AsyncIterator[S3ObjectStore]:
    private = settings.model_copy(update={"s3_endpoint_url": weed.endpoint_url})
    async with s3_client(private) as client:
        store = S3ObjectStore(client, private.s3_bucket)
        await store.ensure_bucket()
        yield store


async def _version_count(db: asyncpg.Connection, org: uuid.UUID) -> int:
    return int(
        await db.fetchval("select count(*) from skill_versions where organization_id = $1", org)
    )


async def test_import_interrupted_by_s3_stopping_keeps_the_previous_version(
    db: asyncpg.Connection,
    settings: Settings,
    private_weed: contextlib.AbstractContextManager[WeedProcess],
) -> None:
    org = await create_org(db)
    refs_v1 = {"a.md": "prazo antigo", "b.md": "tabela antiga"}
    refs_v2 = {"a.md": "prazo novo", "b.md": "tabela nova", "c.md": "extra"}
    with private_weed as weed:
        async with _store(settings, weed) as store:
            v1 = await import_skill_package(
                db, store, organization_id=org, data=skill_zip("frete", references=refs_v1)
            )
            failing = StopServerAfterFirstPut(store, weed)
            with pytest.raises(StorageError) as failed:
                await import_skill_package(
                    db,
                    failing,
                    organization_id=org,
                    data=skill_zip("frete", body="Versão nova.", references=refs_v2),
                )
        assert not weed.alive() and failing.puts == 2
    assert failed.value.code == "storage_unavailable"

    # What the next turn loads is still v1: no half-imported version exists or is pointed at.
    [installed] = await list_installed_skills(db, org)
    assert installed.version_id == v1.version_id and installed.body == "Resposta da skill frete."
    assert await _version_count(db, org) == 1
    [listed] = (await list_skills(db, organization_id=org)).installed
    assert listed.version_id == v1.version_id
    # The catalog lock was released despite the failure: the next import goes through.
    assert await db.fetchval("select count(*) from pg_locks where locktype = 'advisory'") == 0


async def test_install_interrupted_by_s3_stopping_installs_nothing(
    db: asyncpg.Connection,
    settings: Settings,
    private_weed: contextlib.AbstractContextManager[WeedProcess],
) -> None:
    org = await create_org(db)
    with private_weed as weed:
        async with _store(settings, weed) as store:
            await seed_catalog(db, store, DEFAULT_CATALOG_DIR)
            weed.stop()
            with pytest.raises(StorageError):
                await install_catalog_skill(db, store, organization_id=org, name="agendamento")
    assert await list_installed_skills(db, org) == []
    assert await _version_count(db, org) == 0
    listing = await list_skills(db, organization_id=org)
    assert [s.name for s in listing.catalog] == ["agendamento", "objecao-preco"]
