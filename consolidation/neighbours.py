"""Which installed skills a draft is close to: shown where a person decides, so a duplicate is
seen before it is approved ("parecida com troca-de-produto (0,91)"), and the closest one is
what approving must confirm past the "same thing" line (consolidation.lines).

`close_to` is the lexical rule, pure: one run over the installed skills and the drafts
together (the IDF is the org's); a draft is never compared with its own installed version
(same name) nor with other drafts. `measured_close_to` asks the backend in use: with vectors,
from the stored ones, embedding at most MAX_EMBED_ON_READ missing versions on this read (a
page never waits on a cold org); a draft whose vectors are still missing gets None ("not
measured yet", never a misleading []); a failing backend falls back to lexical.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import structlog

from consolidation.backends import SimilarityBackend
from consolidation.lines import LINES
from consolidation.measure import VectorBackend, VersionText, text_of
from consolidation.similarity import LEXICAL, SkillText, lexical_scores
from similarity.backend import SimilarityFailed
from similarity.scoring import score_matrix, set_background
from similarity.vector_queries import insert_vectors, list_vectors

log = structlog.get_logger(__name__)

# Between a link's threshold (0.45, which also joins skills about one product that a group
# then keeps apart) and a group's (0.55): a hint to a reviewer merges nothing, and a
# near-duplicate that would just miss a group is still worth a look.
HINT_THRESHOLD = 0.5
MAX_HINTS = 3
MAX_EMBED_ON_READ = 16  # versions embedded by one page read (~0.1 s each, one thread)


@dataclass(frozen=True)
class Neighbour:
    name: str
    score: float
    version_id: uuid.UUID | None = None

    def to_json(self) -> dict[str, object]:
        version = None if self.version_id is None else str(self.version_id)
        return {"name": self.name, "version_id": version, "score": round(self.score, 2)}


def close_to(
    drafts: Sequence[SkillText],
    installed: Sequence[SkillText],
    threshold: float = HINT_THRESHOLD,
    limit: int = MAX_HINTS,
) -> list[list[Neighbour]]:
    """For each draft, its closest installed skills (best first), at most `limit`."""
    texts = [*drafts, *installed]
    found: list[list[Neighbour]] = [[] for _ in drafts]
    for (i, j), score in lexical_scores(texts).items():
        if i >= len(drafts) or j < len(drafts) or score < threshold:
            continue  # only (draft, installed) pairs; i < j puts drafts first
        other = texts[j].name
        if other != drafts[i].name:
            found[i].append(Neighbour(other, min(score, 1.0)))
    return [sorted(n, key=lambda x: (-x.score, x.name))[:limit] for n in found]


@dataclass(frozen=True)
class Measured:
    """Per draft, its neighbours (None: not measured yet), and the backend that measured."""

    neighbours: list[list[Neighbour] | None]
    backend: str
    same_line: float
    fallback_from: str | None = None


def _lexical(
    drafts: Sequence[VersionText], installed: Sequence[VersionText], fallback_from: str | None
) -> Measured:
    found = close_to([d.text for d in drafts], [i.text for i in installed])
    versions = {i.text.name: i.version_id for i in installed}
    named: list[list[Neighbour] | None] = [
        [Neighbour(n.name, n.score, versions.get(n.name)) for n in near] for near in found
    ]
    return Measured(named, LEXICAL, LINES[LEXICAL].same, fallback_from)


async def measured_close_to(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    drafts: Sequence[VersionText],
    installed: Sequence[VersionText],
    backend: SimilarityBackend,
    limit: int = MAX_HINTS,
) -> Measured:
    if not isinstance(backend, VectorBackend):
        return _lexical(drafts, installed, None)
    try:
        return await _by_vectors(conn, organization_id, drafts, installed, backend, limit)
    except SimilarityFailed as exc:
        log.warning("similarity.fallback", backend=backend.name, error=str(exc)[:300])
        return _lexical(drafts, installed, backend.name)


async def _by_vectors(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    drafts: Sequence[VersionText],
    installed: Sequence[VersionText],
    backend: VectorBackend,
    limit: int,
) -> Measured:
    embedder = backend.embedder
    everyone = {v.version_id: v for v in [*drafts, *installed]}
    stored = await list_vectors(conn, list(everyone), embedder.name, embedder.model_id)
    # Drafts first: their hints are what this read is for.
    missing = [v for v in everyone.values() if v.version_id not in stored][:MAX_EMBED_ON_READ]
    if missing:
        fresh = await embedder.embed([text_of(v.text) for v in missing])
        new = {v.version_id: x for v, x in zip(missing, fresh, strict=True)}
        await insert_vectors(conn, organization_id, new, embedder.name, embedder.model_id)
        stored.update(new)
    ready = [i for i in installed if i.version_id in stored]
    complete = len(ready) == len(installed)
    drafted = [stored[d.version_id] for d in drafts if d.version_id in stored]
    skills = [stored[i.version_id] for i in ready]
    # The org's installed skills set the background, as a cycle's do (similarity.scoring).
    scores = score_matrix(drafted, skills, set_background(skills, backend.background))
    out: list[list[Neighbour] | None] = []
    row = 0
    for draft in drafts:
        if draft.version_id not in stored or not complete:
            out.append(None)
            row += draft.version_id in stored
            continue
        near = [
            Neighbour(other.text.name, float(min(scores[row, k], 1.0)), other.version_id)
            for k, other in enumerate(ready)
            if other.text.name != draft.text.name and scores[row, k] >= backend.lines.hint_line
        ]
        out.append(sorted(near, key=lambda x: (-x.score, x.name))[:limit])
        row += 1
    return Measured(out, backend.name, backend.lines.same)
