"""What a cycle measures with: the backend in use, its stored vectors, and lexical when it fails.

A vector backend (`embedded`, `embeddings`) reads each live skill version's vector from
skill_vectors and embeds only the versions that have none (so a warm cycle embeds nothing),
storing them before it compares. Any failure of the backend (package missing, model
unreadable, server down or slow, a wrong count, dimension or NaN, a stub that does not
measure meaning) never fails the cycle: it is measured with the lexical rules instead, and
the result says `fallback_from`. Embedding happens with no transaction open and, in a cycle,
before the org's catalog lock is taken (consolidation.run), so an author never waits on it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import numpy as np
import numpy.typing as npt
import structlog

from consolidation.backends import LexicalBackend, SimilarityBackend
from consolidation.contrast import contrasting_pairs
from consolidation.lines import LINES, Lines
from consolidation.similarity import (
    DEFAULT_THRESHOLD,
    GROUP_THRESHOLD,
    Link,
    SkillText,
    lexical_scores,
)
from similarity.backend import LEXICAL, Embedder, SimilarityFailed
from similarity.background import background_for
from similarity.scoring import local_scaled, nearest_pairs, score_matrix, set_background
from similarity.vector_queries import insert_vectors, list_vectors
from similarity.vectors import skill_text

log = structlog.get_logger(__name__)

MAX_VECTOR_SKILLS = 1_000  # as many as a cycle reads (consolidation.queries.MAX_CYCLE_SKILLS)


class VectorBackend:
    """A backend of stored vectors: cosine between skill versions' vectors, its own lines."""

    def __init__(self, embedder: Embedder, lines: Lines | None = None) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.lines = lines or LINES[embedder.name]
        self.threshold = self.lines.link
        self.group_threshold = self.lines.group
        # The model's shipped background, if any (similarity.background): scores are cosines
        # after it is taken out, on the scale the lines were measured on.
        self.background = background_for(embedder.model_id)

    async def links(self, skills: Sequence[SkillText]) -> list[Link] | None:
        """Without storage (bench, tests): embed them all now."""
        vectors = await self.embedder.embed([text_of(s) for s in skills])
        return vector_links(skills, vectors, self.lines, self.name, self.background)


@dataclass(frozen=True)
class VersionText:
    version_id: uuid.UUID
    text: SkillText


@dataclass(frozen=True)
class Measured:
    links: tuple[Link, ...]
    backend: str
    group_threshold: float
    fallback_from: str | None = None
    embedded: int = 0  # texts embedded for this measure (0 when every vector was stored)


def text_of(skill: SkillText) -> str:
    return skill_text(skill.name, skill.description, skill.body, skill.keywords)


async def ensure_vectors(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    items: Sequence[VersionText],
    embedder: Embedder,
) -> tuple[dict[uuid.UUID, list[float]], int]:
    """Each version's vector, embedding and storing the missing ones; and how many were.
    Raises SimilarityFailed. Call it with no transaction open: embedding takes seconds."""
    ids = [i.version_id for i in items]
    stored = await list_vectors(conn, ids, embedder.name, embedder.model_id)
    missing = [i for i in items if i.version_id not in stored]
    if missing:
        fresh = await embedder.embed([text_of(i.text) for i in missing])
        new = {i.version_id: v for i, v in zip(missing, fresh, strict=True)}
        if stored and len(next(iter(stored.values()))) != len(fresh[0]):
            raise SimilarityFailed(embedder.name, "stored vectors of another dimension")
        await insert_vectors(conn, organization_id, new, embedder.name, embedder.model_id)
        stored.update(new)
    return stored, len(missing)


async def measure(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    items: Sequence[VersionText],
    backend: SimilarityBackend,
) -> Measured:
    """The links of these skills by `backend`, or by lexical when it fails (see above)."""
    texts = [i.text for i in items]
    if isinstance(backend, VectorBackend):
        try:
            if len(items) > MAX_VECTOR_SKILLS:
                raise SimilarityFailed(backend.name, f"{len(items)} skills, more than allowed")
            vectors, embedded = await ensure_vectors(conn, organization_id, items, backend.embedder)
            found = await asyncio.to_thread(
                vector_links,
                texts,
                [vectors[i.version_id] for i in items],
                backend.lines,
                backend.name,
                backend.background,
            )
            return Measured(tuple(found), backend.name, backend.group_threshold, None, embedded)
        except SimilarityFailed as exc:
            log.warning("similarity.fallback", backend=backend.name, error=str(exc)[:300])
    else:
        measured = await backend.links(texts)
        if measured is not None:
            return Measured(tuple(measured), backend.name, backend.group_threshold)
        if backend.name == LEXICAL:
            return Measured((), LEXICAL, backend.group_threshold)
        log.warning("similarity.fallback", backend=backend.name, error="no links")
    lexical = LexicalBackend()
    found_lexical = await lexical.links(texts)
    return Measured(tuple(found_lexical or ()), LEXICAL, lexical.group_threshold, backend.name)


def lexical_matrix(skills: Sequence[SkillText]) -> npt.NDArray[np.float64]:
    """Every pair's lexical score (consolidation.similarity), at most 1; 0 on the diagonal."""
    matrix = np.zeros((len(skills), len(skills)))
    for (i, j), score in lexical_scores(skills).items():
        matrix[i, j] = matrix[j, i] = min(score, 1.0)
    return matrix


def grouping_scores(
    skills: Sequence[SkillText],
    vectors: Sequence[Sequence[float]],
    lines: Lines,
    background: Sequence[float] | None = None,
    lexical: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Every pair's grouping score (Lines): the cosine after the background is taken out,
    and with `lines.local_k` the lexical score added, local scaling, contrasting pairs and
    pairs under the cosine floor at -1, and with `lines.with_lexical_links` each pair the lexical
    rules link raised to its lexical score on this scale. `lexical`: lexical_matrix(skills),
    when the caller has it. Pure; CPU-bound (a cycle calls it in a thread)."""
    cosine = score_matrix(vectors, vectors, set_background(vectors, background))
    if lines.local_k is None:
        return cosine
    if lexical is None:
        lexical = lexical_matrix(skills)
    scores = local_scaled(cosine + lines.lexical_weight * lexical, lines.local_k)
    for i, j in contrasting_pairs(skills):
        scores[i, j] = scores[j, i] = -1.0
    if lines.cosine_floor is not None:
        scores[cosine < lines.cosine_floor] = -1.0
    if lines.with_lexical_links:
        # Vetoed pairs (contrast, floor) stay vetoed: the lexical rules cannot tell "troca de
        # geladeira" from "troca de fogão" better than the contrast does.
        raised = np.maximum(scores, lexical - GROUP_THRESHOLD + lines.group)
        scores = np.where((lexical >= DEFAULT_THRESHOLD) & (scores > -1.0), raised, scores)
    return scores


def link_pairs(
    scores: npt.NDArray[np.float64], lexical: npt.NDArray[np.float64], lines: Lines
) -> list[tuple[int, int]]:
    """(i, j), i < j, sorted: the pairs at or above `lines.link` among each skill's nearest
    (similarity.scoring.nearest_pairs), and with `lines.with_lexical_links` every pair the
    lexical rules link whose score is at or above `lines.link` too."""
    pairs = set(nearest_pairs(scores, lines.link))
    if lines.with_lexical_links:
        both = (lexical >= DEFAULT_THRESHOLD) & (scores >= lines.link)
        rows, cols = np.nonzero(np.triu(both, k=1))
        pairs.update(zip(rows.tolist(), cols.tolist(), strict=True))
    return sorted(pairs)


def vector_links(
    skills: Sequence[SkillText],
    vectors: Sequence[Sequence[float]],
    lines: Lines,
    backend: str,
    background: Sequence[float] | None = None,
) -> list[Link]:
    """Pairs whose grouping score is at or above `lines.link` (link_pairs), sorted by (a, b).
    `lines.link` > 0: a link's score is positive."""
    if len(vectors) < 2:
        return []
    n = len(vectors)
    lexical = lexical_matrix(skills) if lines.local_k is not None else np.zeros((n, n))
    scores = grouping_scores(skills, vectors, lines, background, lexical)
    links = []
    for i, j in link_pairs(scores, lexical, lines):
        a, b = sorted((skills[i].name, skills[j].name))
        links.append(Link(a, b, min(float(scores[i, j]), 1.0), backend))
    return sorted(links, key=lambda link: (link.a, link.b))
