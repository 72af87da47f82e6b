"""Recall and false hits of the platform catalog on the labelled corpus: keywords alone, and
keywords with the shipped intent models (what a turn matches), side by side.

Reads tests/data/matcher_corpus.jsonl and prints, per catalog skill, recall (share of the
messages labelled for it that it matches) and false hits (share of every other message,
labelled for another skill or for none, that it matches), on the held-out `measure` part by
default, and whether each skill meets the targets (recall >= 0.9, false hits <= 3%) as a turn
matches. Exits 1 when a skill falls below what was measured when the keywords and models were
shipped (tests/matcher_corpus.py). `--split tune` scores the part keywords and models were
tuned and trained on; `--show` lists a turn's misses and false hits (use it on the tune part
only, or the measured part stops being held out).

Run: .venv/bin/python bench/catalog_recall.py [--split tune|measure] [--show]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.matcher_corpus import (
    KEYWORDS_MEASURED_FALSE_HIT_RATE,
    KEYWORDS_MEASURED_RECALL,
    MAX_FALSE_HIT_RATE,
    MEASURED_FALSE_HIT_RATE,
    MEASURED_RECALL,
    MIN_RECALL,
    SPLITS,
    catalog_skills,
    load_corpus,
    score,
)
from turn.matcher.intent_model import NO_INTENT_MODELS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=SPLITS, default="measure")
    parser.add_argument("--show", action="store_true", help="list misses and false hits")
    args = parser.parse_args(argv)
    messages = load_corpus(args.split)
    print(f"{len(messages)} messages ({args.split} part)")
    kept = True
    skills = catalog_skills()
    alone = score(skills, messages, intent_models=NO_INTENT_MODELS)
    for k, s in zip(alone, score(skills, messages), strict=True):
        if args.split == "measure":
            kept = kept and s.keeps(MEASURED_RECALL, MEASURED_FALSE_HIT_RATE)
            kept = kept and k.keeps(KEYWORDS_MEASURED_RECALL, KEYWORDS_MEASURED_FALSE_HIT_RATE)
        print(
            f"{s.name} recall={s.recall:.2f} false_hits={s.false_hit_rate:.1%} "
            f"({s.labelled - len(s.misses)}/{s.labelled} hit, "
            f"{len(s.false_hits)}/{s.others} false) "
            f"targets {'met' if s.meets_targets else 'NOT met'}; "
            f"keywords alone recall={k.recall:.2f} false_hits={k.false_hit_rate:.1%} "
            f"({k.labelled - len(k.misses)}/{k.labelled}, {len(k.false_hits)}/{k.others})"
        )
        if args.show:
            for text in s.misses:
                print(f"  miss:  {text}")
            for text in s.false_hits:
                print(f"  false: {text}")
    print(f"targets: recall >= {MIN_RECALL} and false hits <= {MAX_FALSE_HIT_RATE:.0%} per skill")
    return 0 if kept else 1


if __name__ == "__main__":
    sys.exit(main())
