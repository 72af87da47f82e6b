"""One page of a skill's stored text file, for the tools that show files to the model.

The page is recorded in the turn's ledger: a file read whole in this turn may then be
replaced by `skill_manage write_file` (the model never overwrites what it has not seen).
"""

from __future__ import annotations

from core.errors import StorageError
from core.object_store import ObjectNotFound
from turn.tools.base import ToolContext, ToolResult
from turn.tools.paging import page_of


async def read_stored_text(
    context: ToolContext,
    key: str,
    *,
    sha256: str,
    path: str,
    size: int,
    offset: int,
    missing_code: str,
) -> ToolResult:
    """`sha256`, `size`: the file's, per its version's manifest (`size` is the page's total)."""
    cache_key = (key, sha256, offset, context.max_read_bytes)
    stored = context.page_cache.get(cache_key)
    if stored is None:
        try:
            stored = await context.store.get(key, max_bytes=context.max_read_bytes, offset=offset)
        except ObjectNotFound:
            return ToolResult.error(missing_code, f"O arquivo {path} não está disponível.")
        except StorageError:
            return ToolResult.error(
                "storage_unavailable",
                "O armazenamento de arquivos não respondeu; siga sem esse arquivo.",
            )
        context.page_cache.put(cache_key, stored)
    page = page_of(stored.data, offset=offset, max_bytes=context.max_read_bytes, total=size)
    context.ledger.record_read(sha256, page.start, page.end)
    return ToolResult(content=page.render())
