"""The object store a CLI command opens (and closes): the bucket made sure of first."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from worker.settings import Settings

if TYPE_CHECKING:
    from core.object_store import S3ObjectStore


@contextlib.asynccontextmanager
async def command_store(settings: Settings) -> AsyncIterator[S3ObjectStore]:
    # Imported here, like the other commands' heavy modules: `skillet --help` stays fast.
    from core.object_store import S3ObjectStore
    from worker.resources import s3_client

    async with s3_client(settings) as client:
        store = S3ObjectStore(client, settings.s3_bucket)
        await store.ensure_bucket()
        yield store
