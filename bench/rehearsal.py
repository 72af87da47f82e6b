"""Benchmark: a rehearsal (rehearsal.run) against a naive replay, end to end on Postgres.

Run: .venv/bin/python bench/rehearsal.py
One org with 500 installed skills (among them the catalog's objecao-preco as shipped, so its
intent model applies) and 50,000 customer messages of the last 30 days, each its own burst,
on the Postgres server of DATABASE_URL (default local); creates and drops a database of its
own. Timed end to end, the read included, on one core (the replay runs in one thread): a new
version of one skill with other keywords, an uninstall, a new skill, and the uninstall of the
catalog skill (its intent model must then be asked about every burst). The naive replay reads
the same bursts and calls `match_skills` once per burst per set; both must agree. Prints the
ratio last; exits 1 when the rehearsal of the edit takes more than FLOOR_S or they disagree.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path, where this file would shadow rehearsal)
import asyncpg

from core.db import connect, create_pool, with_database
from rehearsal.bursts import group_bursts
from rehearsal.changes import Change, changed_set
from rehearsal.queries import list_customer_messages
from rehearsal.replay import Outcome
from rehearsal.run import MAX_MESSAGE_CHARS, MAX_MESSAGES, run_rehearsal
from skillet_data import CATALOG_DIR
from skills.catalog_seed import load_catalog_package
from skills.models import LoadedSkill, SkillMatcher
from skills.queries import list_installed_skills
from turn.matcher import match_skills
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

SKILLS = 500
MESSAGES = 50_000
CAP = 3  # SKILLSET_MAX_INJECTED_SKILLS' default
FLOOR_S = 3.0
REPEATS = 3
SEED = 20_261_203
NOW = datetime.now(UTC)

# fmt: off
SYLLABLES = ["ba", "be", "ca", "co", "da", "de", "fe", "fi", "ga", "gu", "la", "li", "ma",
             "mo", "nu", "pa", "pe", "ra", "ri", "sa", "te", "to", "vi", "zo", "ção", "ões"]
OPENERS = ["oi", "olá", "bom dia", "boa tarde", "boa noite", "opa", "oii", "e aí", ""]
ASKS = ["vocês têm", "queria saber do", "quanto custa o", "tem como ver o", "preciso do",
        "vcs trabalham com", "me manda o", "qual o prazo do", "dá pra trocar o", "tem"]
TAILS = ["?", " hoje?", " pra amanhã?", " por favor", ", obrigada!", " aí na loja?",
         " no pix?", " pelo cartão?", " 😊", "!!", " kkkk", "... aguardo"]
SMALL = ["ok", "obrigado", "blz", "valeu", "👍", "certo, vou ver", "pode ser", "sim", "não"]
# fmt: on


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def _skills(rng: random.Random) -> list[LoadedSkill]:
    price = load_catalog_package(CATALOG_DIR / "objecao-preco")
    skills = [
        LoadedSkill(
            version_id=uuid.uuid4(),
            name=price.name,
            description=price.description,
            body=price.body,
            matcher=price.matcher,
        )
    ]
    for i in range(SKILLS - 1):
        keywords = [_word(rng) for _ in range(4)]
        keywords.append(f"{_word(rng)} {_word(rng)}")
        keywords.append(_word(rng)[:4] + "*")
        skills.append(
            LoadedSkill(
                version_id=uuid.uuid4(),
                name=f"skill-{i:03d}",
                description=f"Skill sintética {i}",
                body="Resposta da skill.",
                matcher=SkillMatcher(keywords, [_word(rng)]),
            )
        )
    return skills


def _message(rng: random.Random, skills: list[LoadedSkill]) -> str:
    if rng.random() < 0.15:
        return rng.choice(SMALL)
    opener = rng.choice(OPENERS)
    if rng.random() < 0.5:  # about half name something a skill knows
        thing = rng.choice(rng.choice(skills).matcher.any_keywords).rstrip("*")
    else:
        thing = _word(rng)
    text = f"{opener}{', ' if opener else ''}{rng.choice(ASKS)} {thing}{rng.choice(TAILS)}"
    return text if rng.random() < 0.9 else text + " " + text  # some longer ones


async def _load(conn: asyncpg.Connection, org: uuid.UUID, rng: random.Random) -> list[LoadedSkill]:
    skills = _skills(rng)
    await conn.execute("insert into organizations (id, name) values ($1, 'Bench')", org)
    await conn.executemany(
        "insert into skill_versions (id, organization_id, name, description, body, matcher, "
        "created_by) values ($1, $2, $3, $4, $5, $6, 'user')",
        [(s.version_id, org, s.name, s.description, s.body, s.matcher.to_json()) for s in skills],
    )
    await conn.copy_records_to_table(
        "skill_pointers",
        records=[(org, s.name, s.version_id) for s in skills],
        columns=["organization_id", "name", "version_id"],
    )
    conversations = [uuid.uuid4() for _ in range(MESSAGES)]
    await conn.copy_records_to_table(
        "conversations",
        records=[(c, org, "whatsapp", f"c{i}") for i, c in enumerate(conversations)],
        columns=["id", "organization_id", "channel", "contact_id"],
    )
    step = timedelta(days=29) / MESSAGES
    await conn.copy_records_to_table(
        "messages",
        records=[
            (
                uuid.uuid4(),
                org,
                c,
                "inbound",
                "whatsapp",
                f"m{i}",
                _message(rng, skills),
                NOW - i * step,
                NOW - i * step,
            )
            for i, c in enumerate(conversations)
        ],
        columns=[
            "id",
            "organization_id",
            "conversation_id",
            "direction",
            "channel",
            "external_id",
            "body",
            "created_at",
            "received_at",
        ],
    )
    await conn.execute("vacuum analyze messages")
    return skills


def _changes(skills: list[LoadedSkill], rng: random.Random) -> dict[str, Change]:
    edited = skills[7]
    new_keywords = [*edited.matcher.any_keywords[:2], _word(rng), "tem + hoje"]
    return {
        "new version of one skill": Change(
            installs=(dataclasses.replace(edited, matcher=SkillMatcher(new_keywords)),)
        ),
        "uninstall one skill": Change(removes=(skills[11].name,)),
        "a new skill": Change(
            installs=(
                LoadedSkill(
                    version_id=uuid.uuid4(),
                    name="nova-skill",
                    matcher=SkillMatcher(["prazo", "trocar"]),
                ),
            )
        ),
        "uninstall a catalog skill (intent model)": Change(removes=("objecao-preco",)),
    }


def _fixed(change: Change) -> Any:
    async def read(conn: asyncpg.Connection, installed: object) -> Change:
        return change

    return read


async def _naive(pool: Any, org: uuid.UUID, change: Change) -> tuple[int, int, int, int, int]:
    """Read the same bursts, then match_skills once per burst per set."""
    async with pool.acquire() as conn:
        before = await list_installed_skills(conn, org)
        rows = await list_customer_messages(
            conn, org, NOW - timedelta(days=30), MAX_MESSAGES, MAX_MESSAGE_CHARS
        )
    after = changed_set(before, change)
    gained = lost = moved = served = 0
    bursts = group_bursts(rows)
    for burst in bursts:
        old = match_skills(before, burst.text, max_matched=CAP)
        new = match_skills(after, burst.text, max_matched=CAP)
        old_names = {s.name for s in old.matched}
        new_names = {s.name for s in new.matched}
        if not old_names and new_names:
            gained += 1
            served += bool(old.probes)
        elif old_names and not new_names:
            lost += 1
        elif old_names and old_names != new_names:
            moved += 1
    return len(bursts), gained, lost, moved, served


def _counts(outcome: Outcome) -> tuple[int, int, int, int, int]:
    o = outcome
    return o.messages, o.gained, o.lost, o.moved, o.probes_served


async def _timed(pool: Any, org: uuid.UUID, change: Change) -> tuple[float, list[float], Outcome]:
    runs: list[float] = []
    outcome = None
    for _ in range(REPEATS):
        started = time.perf_counter()
        rehearsal = await run_rehearsal(
            pool, org, _fixed(change), days=30, now=NOW, max_matched=CAP
        )
        runs.append(time.perf_counter() - started)
        outcome = rehearsal.outcome
    assert outcome is not None
    return statistics.median(runs), runs, outcome


async def _bench(url: str) -> int:
    rng = random.Random(SEED)
    org = uuid.uuid4()
    conn = await connect(url)
    try:
        started = time.perf_counter()
        skills = await _load(conn, org, rng)
        print(f"loaded {len(skills)} skills, {MESSAGES} messages in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    finally:
        await conn.close()
    pool = await create_pool(url, min_size=1, max_size=2)
    ok = True
    try:
        for label, change in _changes(skills, rng).items():
            median_s, runs, outcome = await _timed(pool, org, change)
            print(f"{label}: rehearsal {median_s:.2f} s (runs "
                  f"{' / '.join(f'{s:.2f}' for s in runs)}), {outcome.replayed} of "
                  f"{outcome.messages} bursts matched; gained {outcome.gained}, lost "
                  f"{outcome.lost}, moved {outcome.moved}, probes served "
                  f"{outcome.probes_served}")  # fmt: skip
            if label == "new version of one skill":
                edit_s, edit_outcome, edit_change = median_s, outcome, change
            if label.startswith("uninstall a catalog"):
                intent_outcome, intent_change = outcome, change
        started = time.perf_counter()
        naive = await _naive(pool, org, edit_change)
        naive_s = time.perf_counter() - started
        naive_intent = await _naive(pool, org, intent_change)
    finally:
        await pool.close()
    same = naive == _counts(edit_outcome) and naive_intent == _counts(intent_outcome)
    ok = same and edit_s <= FLOOR_S
    print(f"naive replay of the edit: {naive_s:.2f} s; same counts (edit and catalog "
          f"uninstall): {same} {naive} {naive_intent}")  # fmt: skip
    print(f"rehearsal of the edit: {edit_s:.2f} s (floor {FLOOR_S:.1f} s); "
          f"speedup {naive_s / edit_s:.1f}x")  # fmt: skip
    return 0 if ok else 1


async def main() -> int:
    configure_logging(log_format="console", level="WARNING", log_bodies=False)
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    admin = await asyncpg.connect(with_database(server, "postgres"))
    name = f"skillet_bench_{uuid.uuid4().hex[:10]}"
    await admin.execute(f'create database "{name}"')
    try:
        conn = await connect(with_database(server, name))
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        finally:
            await conn.close()
        return await _bench(with_database(server, name))
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
