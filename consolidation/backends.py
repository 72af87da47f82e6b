"""The similarity backend a cycle measures with: a narrow protocol and the lexical one.

A backend answers the links of a set of skills, or None when it cannot measure meaning (a
stub, or an embeddings server configured but unreachable): then the cycle writes no links
and proposes nothing, rather than linking noise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from consolidation.similarity import (
    DEFAULT_THRESHOLD,
    GROUP_THRESHOLD,
    LEXICAL,
    Link,
    SkillText,
    lexical_links,
)


class SimilarityBackend(Protocol):
    """`name` is what its links are marked with; each backend has its own score scale, so
    its thresholds are its own: a link's, and the average of links a group needs
    (consolidation.grouping)."""

    name: str
    group_threshold: float

    async def links(self, skills: Sequence[SkillText]) -> list[Link] | None: ...


class LexicalBackend:
    """TF-IDF over word stems and whole keywords (consolidation.similarity)."""

    name = LEXICAL

    def __init__(
        self, threshold: float = DEFAULT_THRESHOLD, group_threshold: float = GROUP_THRESHOLD
    ) -> None:
        self.threshold = threshold
        self.group_threshold = group_threshold

    async def links(self, skills: Sequence[SkillText]) -> list[Link] | None:
        # CPU-bound (0.5 s for 300 skills, up to ~9 s for 1,000 near-identical ones on a busy
        # 2-core machine): in a thread, so the worker's event loop keeps serving turns.
        return await asyncio.to_thread(lexical_links, skills, self.threshold)
