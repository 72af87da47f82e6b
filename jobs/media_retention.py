"""arq job `media_retention`: the media customers sent is deleted after its retention.

Every hour, across orgs: the messages whose media bytes were stored more than
SKILLET_MEDIA_RETENTION_DAYS ago (skillet_expired_media, oldest first, a batch at a time);
their objects are deleted first, then the rows forget the keys (skillet_forget_media), so a
failure between the two only deletes again next time. The message keeps its body (the
transcript or the description). Never raises: the next run retries.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Protocol

import structlog

from jobs.context import JobContext

log = structlog.get_logger(__name__)

MEDIA_RETENTION = "media_retention"
BATCH = 1_000  # S3's DeleteObjects takes at most 1,000 keys
MAX_BATCHES_PER_RUN = 20  # the rest waits for the next run (bounded time per run)

EXPIRED_MEDIA = "select id, media_key from skillet_expired_media($1, $2)"
FORGET_MEDIA = "select skillet_forget_media($1)"


class MediaObjects(Protocol):
    async def delete_many(self, keys: Sequence[str]) -> list[str]: ...


async def delete_expired_media(
    pool: Any, objects: MediaObjects, *, retention: timedelta, now: Any
) -> int:
    """Delete what is past `retention` at `now`; how many messages were cleared."""
    cleared = 0
    for _ in range(MAX_BATCHES_PER_RUN):
        rows = await pool.fetch(EXPIRED_MEDIA, now - retention, BATCH)
        if not rows:
            break
        deleted = set(await objects.delete_many([r["media_key"] for r in rows]))
        ids = [r["id"] for r in rows if r["media_key"] in deleted]
        cleared += int(await pool.fetchval(FORGET_MEDIA, ids) or 0)
        if len(rows) < BATCH or not ids:
            break
    return cleared


async def media_retention(ctx: JobContext) -> dict[str, Any]:
    try:
        cleared = await delete_expired_media(
            ctx["pool"],
            ctx["media_objects"],
            retention=timedelta(days=ctx["media_retention_days"]),
            now=ctx["clock"](),
        )
    except Exception as exc:  # the worker must outlive a failing run: the next one retries
        log.error("media.retention_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    if cleared:
        log.info("media.retention_deleted", messages=cleared)
    return {"status": "ok", "deleted": cleared}
