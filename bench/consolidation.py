"""Consolidation on a messy org: grouping precision and recall, index bytes, matcher recall.

Run: .venv/bin/python bench/consolidation.py [--seed 7 | --seeds 1-24] [--threshold 0.45]
     [--group-threshold 0.55] [--corpus standard|paraphrased-keywords] [--no-database]

One org with 300 agent-authored skills: 60 piles of near-duplicates (2 to 6 skills each, 240
skills) written with paraphrase noise (synonyms, word order, dropped words, filler shared by
every skill) and 60 singletons. Topics are (product, service aspect) pairs drawn from 60
products x 10 aspects, so many unrelated skills share a product or an aspect: "troca de
geladeira" and "entrega de geladeira" must stay apart. Everything runs in memory on the
same code a cycle runs (similarity, groups, the umbrella plan), uncapped (a real cycle
proposes at most 10 merges, so this is several cycles' worth). Prints:
- precision: of every pair of skills some proposal joins, the share from one pile (goal
  >= 0.95), and how many proposals join skills of different piles;
- recall: of every pair of skills in one pile, the share some proposal joins (goal >= 0.9);
- index bytes after approving every proposal over before (goal <= 0.5);
- matcher recall on messages naming an absorbed skill's keyword, before (the absorbed
  skill) and after (its umbrella) (goal: no lower after);
- the time of one cycle's computation with the lexical backend (goal under 2 s); and,
  beside it, the same computation on a tenth of the skills, for a ratio;
- with --seeds, one line per seed and the min / mean / max of each number (no database);
- with --corpus paraphrased-keywords, a harder org for information (no goal): each skill's
  keywords are its own words (its synonym of the aspect, 2 to 4 of them) instead of always
  the pile's word, and the pile's word is the skill's word half the time instead of 70%;
  two members may then share only the product, as an unrelated skill does, and a lexical
  backend cannot tell them apart (an embeddings backend can);
- with Postgres at DATABASE_URL's server (a database of its own, dropped at the end; skip it
  with --no-database): the time of one real cycle, `consolidate_org` on those 300 skills
  (reads, links, 10 proposals and their versions written), its objects in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from consolidation.distill import TooLarge, plan_umbrella
from consolidation.grouping import Candidate, Group, average_groups
from consolidation.run import ConsolidationConfig, consolidate_org
from consolidation.similarity import (
    DEFAULT_THRESHOLD,
    GROUP_THRESHOLD,
    Link,
    SkillText,
    lexical_links,
)
from core.db import connect, with_database
from core.organizations import insert_organization
from skills.catalog_queries import PointedVersion
from skills.models import LoadedSkill, SkillMatcher
from skills.queries import insert_skill_version, upsert_skill_pointer
from turn.matcher.intent_model import NO_INTENT_MODELS
from turn.matcher.match import compile_matcher
from turn.skill_index import render_skill_index
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

_PRODUCT_TEXT = (
    "geladeira fogão sofá colchão notebook celular tênis camisa vestido bicicleta cafeteira "
    "liquidificador televisão impressora mochila relógio perfume óculos cadeira mesa tapete "
    "cortina ventilador aspirador furadeira panela travesseiro jaqueta bolsa monitor teclado "
    "mouse fone caixa-de-som tablet câmera secador chapinha batom shampoo sandália bota boné "
    "berço carrinho brinquedo livro violão guitarra piano patinete skate barraca churrasqueira "
    "forno micro-ondas lava-louças armário estante luminária"
)
PRODUCTS = _PRODUCT_TEXT.split()
ASPECTS: dict[str, tuple[str, ...]] = {
    "troca": ("troca", "trocar", "substituição", "substituir", "troca do produto"),
    "entrega": ("entrega", "entregar", "frete", "envio", "transportadora"),
    "garantia": ("garantia", "defeito", "conserto", "assistência técnica", "reparo"),
    "pix": ("pix", "chave pix", "pagamento por pix", "qr code do pix", "comprovante do pix"),
    "parcelamento": ("parcelamento", "parcelar", "parcelas", "cartão de crédito", "juros"),
    "horario": ("horário", "funcionamento", "expediente", "loja aberta", "que horas abre"),
    "montagem": ("montagem", "montar", "instalação", "instalar", "técnico montador"),
    "cancelamento": ("cancelamento", "cancelar", "estorno", "reembolso", "desistência"),
    "tamanho": ("tamanho", "medidas", "tabela de medidas", "dimensões", "numeração"),
    "estoque": ("estoque", "disponibilidade", "reposição", "esgotado", "pronta entrega"),
}
DESCRIPTIONS = (
    "Explica {a} de {p} e responde as dúvidas mais comuns",
    "Como funciona {a} para {p}, passo a passo",
    "Responde perguntas sobre {a} do {p} comprado na loja",
    "Orienta sobre {a} e {b} de {p}",
    "Dúvidas de {a} ({b}) de {p}",
)
BODY_LINES = (
    "Quando perguntarem sobre {a} de {p}, explique as regras com calma.",
    "Informe que {b} de {p} segue a política da loja.",
    "Se o pedido de {p} tiver problema de {a}, peça o número do pedido.",
    "Explique {b} e {a} em frases curtas.",
    "Para {p}, confirme o modelo antes de falar de {b}.",
)
FILLER = (
    "Cumprimente pelo nome.",
    "Seja cordial e objetivo.",
    "Se não souber, chame um atendente.",
    "Confirme o número do pedido.",
    "Não prometa prazos que a loja não garante.",
    "Agradeça o contato no fim.",
)
NAME_TAILS = ("", "duvidas", "pedido", "loja", "info", "ajuda", "regras")
PILES, SINGLETONS = 60, 60
PILE_SIZES = (2, 3, 4, 5, 6)  # cycled: 60 piles of these sizes hold 240 skills


@dataclass(frozen=True)
class Skill:
    name: str
    topic: int
    version: PointedVersion


def _slug(text: str) -> str:
    table = str.maketrans("áàâãéêíóôõúç", "aaaaeeiooouc")
    return "-".join(text.lower().translate(table).split())


def _noisy(text: str, rng: random.Random) -> str:
    words = text.split()
    if len(words) > 4 and rng.random() < 0.4:
        del words[rng.randrange(1, len(words))]  # a dropped word
    if rng.random() < 0.3:
        words.append(rng.choice(("por favor", "sempre", "com atenção", "rapidinho")))
    return " ".join(words)


def _skill(
    topic: int,
    product: str,
    aspect: str,
    rng: random.Random,
    taken: set[str],
    paraphrased_keywords: bool = False,
) -> Skill:
    synonyms = ASPECTS[aspect]
    # The pile's own word most of the time (an agent re-writing "troca" keeps saying troca),
    # a synonym otherwise: paraphrase noise a lexical backend cannot always see through.
    own_word = 0.5 if paraphrased_keywords else 0.7
    a = synonyms[0] if rng.random() < own_word else rng.choice(synonyms[1:])
    b = rng.choice([x for x in synonyms if x != a])
    head = [_slug(a), _slug(product)]
    if rng.random() < 0.5:
        head.reverse()
    name = "-".join([*head, rng.choice(NAME_TAILS)]).strip("-")
    base, n = name, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    description = _noisy(rng.choice(DESCRIPTIONS).format(a=a, b=b, p=product), rng)
    lines = [_noisy(line.format(a=a, b=b, p=product), rng) for line in rng.sample(BODY_LINES, 3)]
    lines += rng.sample(FILLER, 2)
    rng.shuffle(lines)
    # The keywords keep the pile's word: what the matcher triggers on is the topic itself.
    keywords = list(dict.fromkeys([f"{a} {product}", product, synonyms[0]]))
    if paraphrased_keywords:  # the harder corpus: the skill's own words, a few of them
        own = [f"{a} {product}", product, a, b, f"{b} {product}"]
        keywords = list(dict.fromkeys(rng.sample(own, rng.randint(2, 4))))
    version = PointedVersion(
        version_id=uuid.UUID(int=rng.getrandbits(128)),
        name=name,
        description=description,
        body="\n".join(lines),
        matcher=SkillMatcher(any_keywords=keywords),
        manifest=(),
        content_sha256=None,
        created_by="agent",
        forked_from_version_id=None,
    )
    return Skill(name, topic, version)


def build_org(seed: int, corpus: str = "standard") -> list[Skill]:
    rng = random.Random(seed)
    paraphrased = corpus == "paraphrased-keywords"
    topics = rng.sample([(p, a) for p in PRODUCTS for a in ASPECTS], PILES + SINGLETONS)
    taken: set[str] = set()
    skills: list[Skill] = []
    for topic, (product, aspect) in enumerate(topics):
        size = PILE_SIZES[topic % len(PILE_SIZES)] if topic < PILES else 1
        skills += [_skill(topic, product, aspect, rng, taken, paraphrased) for _ in range(size)]
    return skills


def _texts(skills: Sequence[Skill]) -> list[SkillText]:
    return [
        SkillText(s.name, s.version.description, s.version.body, s.version.matcher.any_keywords)
        for s in skills
    ]


def cycle(
    skills: Sequence[Skill],
    threshold: float,
    group_threshold: float = GROUP_THRESHOLD,
    links: Sequence[Link] | None = None,
) -> tuple[list[Group], dict[str, PointedVersion]]:
    """What a cycle computes: links (lexical unless given), groups, each umbrella's plan
    (too-large ones out)."""
    if links is None:
        links = lexical_links(_texts(skills), threshold)
    rng = random.Random(1)
    candidates = [Candidate(s.name, rng.randrange(50)) for s in skills]
    by_name = {s.name: s.version for s in skills}
    groups, umbrellas = [], {}
    for group in average_groups(candidates, links, group_threshold):
        try:
            plan = plan_umbrella(by_name[group.umbrella], [by_name[n] for n in group.absorbs])
        except TooLarge:
            continue
        groups.append(group)
        umbrellas[group.umbrella] = _replace(by_name[group.umbrella], plan.skill.matcher)
    return groups, umbrellas


def _replace(version: PointedVersion, matcher: SkillMatcher) -> PointedVersion:
    return dataclasses.replace(version, matcher=matcher)


def _pairs(names: Sequence[str]) -> set[frozenset[str]]:
    return {frozenset((x, y)) for i, x in enumerate(names) for y in names[i + 1 :]}


def _loaded(version: PointedVersion) -> LoadedSkill:
    return LoadedSkill(
        version.version_id, version.name, version.description, matcher=version.matcher
    )


def measure(
    seed: int,
    threshold: float,
    group_threshold: float = GROUP_THRESHOLD,
    corpus: str = "standard",
) -> dict[str, object]:
    skills = build_org(seed, corpus)
    started = time.perf_counter()
    groups, umbrellas = cycle(skills, threshold, group_threshold)
    cycle_s = time.perf_counter() - started
    tenth = skills[: len(skills) // 10]
    started = time.perf_counter()
    cycle(tenth, threshold, group_threshold)
    tenth_s = time.perf_counter() - started
    return {
        "seed": seed,
        "corpus": corpus,
        "threshold": threshold,
        "group_threshold": group_threshold,
        **metrics(skills, groups, umbrellas),
        "cycle_s": round(cycle_s, 3),
        "cycle_s_tenth_of_skills": round(tenth_s, 3),
    }


def metrics(
    skills: Sequence[Skill], groups: Sequence[Group], umbrellas: dict[str, PointedVersion]
) -> dict[str, Any]:
    """Pairwise precision and recall of the groups against the piles, index bytes, matcher."""
    topic = {s.name: s.topic for s in skills}

    joined = set().union(*(_pairs([g.umbrella, *g.absorbs]) for g in groups))
    right = {p for p in joined if len({topic[n] for n in p}) == 1}
    piles: dict[int, list[str]] = {}
    for s in skills:
        piles.setdefault(s.topic, []).append(s.name)
    truth = set().union(*(_pairs(names) for names in piles.values()))
    mixed = sum(1 for g in groups if len({topic[n] for n in (g.umbrella, *g.absorbs)}) > 1)

    absorbed_into = {n: g.umbrella for g in groups for n in g.absorbs}
    before = [_loaded(s.version) for s in skills]
    after = [
        _loaded(umbrellas.get(s.name, s.version)) for s in skills if s.name not in absorbed_into
    ]
    index_before = len(render_skill_index(before).encode())
    index_after = len(render_skill_index(after).encode())

    hits_before = hits_after = messages = 0
    match_before = compile_matcher(before, intent_models=NO_INTENT_MODELS)
    match_after = compile_matcher(after, intent_models=NO_INTENT_MODELS)
    by_name = {s.name: s for s in skills}
    for name, umbrella in sorted(absorbed_into.items()):
        for keyword in by_name[name].version.matcher.any_keywords:
            text = f"oi, queria saber sobre {keyword} por favor"
            if name not in {m.name for m in match_before.match(text).matched}:
                continue  # the matcher's own misses are not consolidation's to keep
            messages += 1
            hits_before += 1
            hits_after += umbrella in {m.name for m in match_after.match(text).matched}
    return {
        "skills": len(skills),
        "proposals": len(groups),
        "absorbed": len(absorbed_into),
        "precision": round(len(right) / len(joined), 4) if joined else 1.0,
        "proposals_joining_unrelated": mixed,
        "recall": round(len(right & truth) / len(truth), 4),
        "index_bytes_before": index_before,
        "index_bytes_after": index_after,
        "index_ratio": round(index_after / index_before, 4),
        "matcher_messages": messages,
        "matcher_recall_before": round(hits_before / messages, 4) if messages else None,
        "matcher_recall_after": round(hits_after / messages, 4) if messages else None,
    }


class _MemoryStore:
    """Objects in a dict: the bench times the database side of a cycle, not S3."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        self.objects[key] = data

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> Any:
        raise NotImplementedError

    async def copy(self, source_key: str, dest_key: str) -> None:
        self.objects[dest_key] = self.objects.get(source_key, b"")


async def db_cycle(seed: int) -> dict[str, object]:
    """One real cycle (consolidate_org) on a fresh database holding the bench's org."""
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
            for skill in build_org(seed):
                v = skill.version
                await insert_skill_version(
                    conn, version_id=v.version_id, organization_id=org, name=v.name,
                    description=v.description, body=v.body, matcher=v.matcher,
                    created_by="agent",
                )  # fmt: skip
                await upsert_skill_pointer(conn, org, v.name, v.version_id)
            started = time.perf_counter()
            report = await consolidate_org(
                conn, _MemoryStore(), org, ConsolidationConfig(), now=datetime.now(UTC)
            )
            cycle_s = time.perf_counter() - started
        finally:
            await conn.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    return {
        "db_cycle_s": round(cycle_s, 3),
        "db_cycle_links": len(report.links),
        "db_cycle_proposals": len(report.proposals),
        "db_cycle_skipped_reason": report.skipped_reason,
    }


SUMMED = (
    "precision",
    "recall",
    "proposals_joining_unrelated",
    "index_ratio",
    "matcher_recall_before",
    "matcher_recall_after",
    "cycle_s",
)


def _seeds(text: str) -> list[int]:
    """Seeds as "1-24" or "7,11,13"."""
    if "-" in text:
        first, last = text.split("-", 1)
        return list(range(int(first), int(last) + 1))
    return [int(x) for x in text.split(",")]


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, object]:
    """min / mean / max of each number over the seeds."""
    out: dict[str, object] = {"seeds": len(rows)}
    for key in SUMMED:
        values = [float(r[key]) for r in rows if r[key] is not None]
        if values:
            mean = sum(values) / len(values)
            out[key] = [round(min(values), 4), round(mean, 4), round(max(values), 4)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--seeds", help='several seeds, "1-24" or "7,11": min/mean/max')
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="a link")
    parser.add_argument("--group-threshold", type=float, default=GROUP_THRESHOLD)
    parser.add_argument(
        "--corpus",
        action="append",
        choices=("standard", "generated", "paraphrased-keywords", "handwritten"),
        help="generated = standard; handwritten: tests/data/similarity_corpus.txt; with "
        "--backend it may be repeated (both corpora in one table)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=("lexical", "embedded", "embeddings"),
        help="compare backends side by side (repeat it); each with its own lines",
    )
    parser.add_argument("--sweep", action="store_true", help="with --backend: tune the lines")
    parser.add_argument("--no-database", action="store_true", help="skip the real cycle")
    args = parser.parse_args()
    configure_logging(log_format="console", level="WARNING", log_bodies=False)
    corpora = ["standard" if c == "generated" else c for c in args.corpus or ["standard"]]
    if args.backend or "handwritten" in corpora:
        from bench.consolidation_backends import compare

        seeds = _seeds(args.seeds) if args.seeds else [args.seed]
        return compare(args.backend or ["lexical"], corpora, seeds, sweep_lines=args.sweep)
    args.corpus = corpora[0]
    if args.seeds:
        rows = [
            measure(seed, args.threshold, args.group_threshold, args.corpus)
            for seed in _seeds(args.seeds)
        ]
        for row in rows:
            print(json.dumps({k: row[k] for k in ("seed", *SUMMED)}))
        print(json.dumps({"corpus": args.corpus, "min_mean_max": summary(rows)}))
        return 0
    measured = measure(args.seed, args.threshold, args.group_threshold, args.corpus)
    if not args.no_database:
        measured.update(asyncio.run(db_cycle(args.seed)))
    print(json.dumps(measured, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
