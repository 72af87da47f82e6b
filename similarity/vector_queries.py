"""SQL of stored skill vectors (skill_vectors): one row per skill version, backend and model.
The caller owns the transaction and has bound the org (row-level security).

The stored model id is the model's and the recipe of the text embedded (similarity.vectors.
TEXT_RECIPE, "enpt@0.3.0/2"): a vector of another recipe is never read, so a change of what
is embedded re-makes every vector at the next cycle, as a change of model does."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from similarity.vectors import TEXT_RECIPE


def stored_model_id(model_id: str) -> str:
    return f"{model_id}/{TEXT_RECIPE}"


LIST_VECTORS = """
select version_id, vector
from skill_vectors
where version_id = any($1::uuid[]) and backend = $2 and model_id = $3
"""


async def list_vectors(
    conn: asyncpg.Connection, version_ids: Sequence[uuid.UUID], backend: str, model_id: str
) -> dict[uuid.UUID, list[float]]:
    """The stored vectors of these versions (the org's and the catalog's), by version id."""
    rows = await conn.fetch(LIST_VECTORS, list(version_ids), backend, stored_model_id(model_id))
    return {row["version_id"]: list(row["vector"]) for row in rows}


LIST_STORED_IDS = """
select version_id from skill_vectors
where version_id = any($1::uuid[]) and backend = $2 and model_id = $3
"""


async def list_stored_ids(
    conn: asyncpg.Connection, version_ids: Sequence[uuid.UUID], backend: str, model_id: str
) -> set[uuid.UUID]:
    """Which of these versions have a stored vector (without reading the vectors)."""
    rows = await conn.fetch(LIST_STORED_IDS, list(version_ids), backend, stored_model_id(model_id))
    return {row["version_id"] for row in rows}


INSERT_VECTORS = """
insert into skill_vectors (organization_id, version_id, backend, model_id, vector)
select $1, v.version_id, $3, $4, v.vector
from unnest($2::uuid[]) with ordinality as i (version_id, n)
join lateral (select i.version_id, ($5::real[])[i.n * $6 - $6 + 1 : i.n * $6] as vector) v
    on true
on conflict on constraint skill_vectors_key do nothing
"""


async def insert_vectors(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID | None,
    vectors: dict[uuid.UUID, list[float]],
    backend: str,
    model_id: str,
) -> None:
    """Store vectors of one dimension (a version already stored keeps its row)."""
    if not vectors:
        return
    ids = list(vectors)
    dimensions = len(vectors[ids[0]])
    flat = [x for version_id in ids for x in vectors[version_id]]
    model = stored_model_id(model_id)
    await conn.execute(INSERT_VECTORS, organization_id, ids, backend, model, flat, dimensions)
