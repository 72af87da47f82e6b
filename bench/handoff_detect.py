"""Recall and false handoffs of the customer's-request-for-a-person detector
(conversation.handoff.request.asks_for_person) on the labelled corpus, both parts.

Reads tests/data/handoff_corpus.jsonl and prints, for the `tune` part (the rule was written
looking at it) and the held-out `measure` part, recall (share of the messages asking for a
person that hand off) and the false-handoff rate (share of the others that hand off), and
whether the targets (recall >= 0.9, false handoffs <= 1%) are met. Lists the misses and false
handoffs of the tune part only, so the measured part stays held out. Exits 1 when the measured
part falls below what was measured when the rule was shipped (tests/handoff_corpus.py).

Run: .venv/bin/python bench/handoff_detect.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conversation.handoff.request import find_handoff_request
from tests.handoff_corpus import SPLITS, load_corpus, score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="numbers only, no tune-part list")
    args = parser.parse_args(argv)
    kept = True
    for split in SPLITS:
        s = score(load_corpus(split))
        if split == "measure":
            kept = s.keeps_measured
        print(
            f"{split}: recall={s.recall:.3f} ({s.asking - len(s.misses)}/{s.asking}) "
            f"false_handoffs={s.false_handoff_rate:.2%} ({len(s.false_handoffs)}/{s.others}) "
            f"targets {'met' if s.meets_targets else 'NOT met'}"
        )
        if split == "tune" and not args.quiet:
            for text in s.misses:
                print(f"  miss: {text!r}")
            for text in s.false_handoffs:
                print(f"  false handoff: {text!r} <- {find_handoff_request(text)}")
    if not kept:
        print("the measured part fell below its shipped floors (tests/handoff_corpus.py)")
    return 0 if kept else 1


if __name__ == "__main__":
    raise SystemExit(main())
