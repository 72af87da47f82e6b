"""Calling the turn's tools as a turn does: through the registry, with a ToolContext."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from core.object_store import ObjectStore
from skills.models import LoadedSkill
from turn.model import ToolCall
from turn.tools.base import ToolContext, ToolResult, TurnLedger
from turn.tools.page_cache import StoredPageCache
from turn.tools.registry import default_registry


def reference_context(
    store: ObjectStore,
    organization_id: uuid.UUID,
    matched: Sequence[LoadedSkill],
    *,
    max_bytes: int = 4096,
    pool: Any = None,
    page_cache: StoredPageCache | None = None,
) -> ToolContext:
    """A turn's view for tools that only read files (no pool unless given); a fresh page
    cache unless one (a worker's, shared by turns) is given."""
    return ToolContext(
        organization_id=organization_id,
        pool=pool,
        store=store,
        usage=None,  # type: ignore[arg-type]
        matched=matched,
        installed=matched,
        max_read_bytes=max_bytes,
        ledger=TurnLedger(max_writes=5),
        page_cache=page_cache or StoredPageCache(),
    )


async def read_reference(
    context: ToolContext, skill_name: object, path: object, offset: int | None = None
) -> ToolResult:
    arguments: dict[str, object] = {"skill_name": skill_name, "path": path}
    if offset is not None:
        arguments["offset"] = offset
    return await default_registry().execute(
        context, ToolCall("c1", "read_skill_reference", arguments)
    )
