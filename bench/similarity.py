"""The embedded similarity model's cost, one thread: one skill as stored, a consolidation
cycle over 300 skills cold (no stored vectors) and warm, and the process's memory.

Run: .venv/bin/python bench/similarity.py [--skills 300] [--no-database]

Prints, beside each floor (docs/skills.md):
- embed_skill_ms: the median of 50 embeddings of one skill as stored, its SKILL.md at the
  package's size limit (what is embedded is bounded: similarity.vectors.skill_text), floor
  200 ms;
- cold_cycle_s / warm_cycle_s: `consolidate_org` over 300 agent skills with the embedded
  backend on a fresh database (Postgres at DATABASE_URL's server), first with no stored
  vectors, then again (force); floors 60 s and 1 s; and the lexical cycle's time beside them;
- rss_mb_before_load / rss_mb_after_load: the process's resident memory before the model
  loads and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.consolidation import _MemoryStore, build_org
from consolidation.backends import LexicalBackend
from consolidation.gates import Pressure
from consolidation.measure import VectorBackend, text_of
from consolidation.run import ConsolidationConfig, consolidate_org
from consolidation.similarity import SkillText
from core.db import connect, with_database
from core.organizations import insert_organization
from similarity.embedded import EmbeddedEmbedder, load
from skills.package.limits import MAX_BODY_LINES
from skills.queries import insert_skill_version, upsert_skill_pointer
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

FLOORS = {
    "embed_skill_ms": 200.0,
    "embed_skill_cpu_ms": 200.0,
    "cold_cycle_s": 60.0,
    "cold_cycle_cpu_s": 60.0,
    "warm_cycle_s": 1.0,
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def largest_skill() -> SkillText:
    line = "Quando o cliente pedir a troca de um produto com defeito, peça o número do pedido."
    return SkillText(
        "troca-de-produto-com-defeito",
        "Troca de produto com defeito dentro da garantia, passo a passo para o atendente",
        "\n".join(f"{i}. {line}" for i in range(MAX_BODY_LINES)),
    )


def embed_one(embedder: EmbeddedEmbedder) -> tuple[float, float]:
    """Median wall and CPU milliseconds (the CPU time of this thread, which runs the engine
    with one OpenMP thread: what the skill costs on a shared, busy machine too)."""
    text = text_of(largest_skill())
    wall, cpu = [], []
    for _ in range(50):
        started, started_cpu = time.perf_counter(), time.thread_time()
        embedder.embed_blocking([text])
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


async def cycles(count: int) -> dict[str, float]:
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    admin = await asyncpg.connect(with_database(server, "postgres"))
    name = f"skillet_bench_{uuid.uuid4().hex[:10]}"
    await admin.execute(f'create database "{name}"')
    try:
        conn = await connect(with_database(server, name))
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            org = uuid.uuid4()
            await insert_organization(conn, org, "Bench")
            await conn.execute(
                "update organizations set consolidation = 'review' where id = $1", org
            )
            for skill in build_org(7)[:count]:
                v = skill.version
                await insert_skill_version(
                    conn, version_id=v.version_id, organization_id=org, name=v.name,
                    description=v.description, body=v.body, matcher=v.matcher,
                    created_by="agent",
                )  # fmt: skip
                await upsert_skill_pointer(conn, org, v.name, v.version_id)
            out = {}
            for label, backend in (
                ("lexical_cycle_s", LexicalBackend()),
                ("cold_cycle_s", VectorBackend(EmbeddedEmbedder(threads=1))),
                ("warm_cycle_s", VectorBackend(EmbeddedEmbedder(threads=1))),
            ):
                config = ConsolidationConfig(
                    pressure=Pressure(min_skills=0), backend=backend, max_proposals=0
                )
                started, started_cpu = time.perf_counter(), time.process_time()
                report = await consolidate_org(
                    conn, _MemoryStore(), org, config, now=datetime.now(UTC), force=True,
                    dry_run=True,
                )  # fmt: skip
                out[label] = round(time.perf_counter() - started, 3)
                # This process's CPU (every thread: the model runs in one), not the server's.
                out[label.replace("_s", "_cpu_s")] = round(time.process_time() - started_cpu, 3)
                assert report.fallback_from is None, report.fallback_from
            return out
        finally:
            await conn.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=300)
    parser.add_argument("--no-database", action="store_true", help="skip the cycles")
    args = parser.parse_args()
    configure_logging(log_format="console", level="WARNING", log_bodies=False)
    found: dict[str, float] = {"rss_mb_before_load": round(rss_mb(), 1)}
    load(threads=1)
    found["rss_mb_after_load"] = round(rss_mb(), 1)
    wall_ms, cpu_ms = embed_one(EmbeddedEmbedder(threads=1))
    found["embed_skill_ms"], found["embed_skill_cpu_ms"] = round(wall_ms, 1), round(cpu_ms, 1)
    found["load_average_1m"] = round(os.getloadavg()[0], 2)
    found["embedded_chars"] = len(text_of(largest_skill()))
    if not args.no_database:
        found.update(asyncio.run(cycles(args.skills)))
    found["rss_mb_after_cycles"] = round(rss_mb(), 1)
    print(json.dumps(found, indent=2))
    for key, floor in FLOORS.items():
        if key in found:
            verdict = "ok" if found[key] <= floor else "OVER"
            print(f"{key}: {found[key]} (floor {floor}, ratio {found[key] / floor:.3f}) {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
