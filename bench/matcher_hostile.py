"""Benchmark: hostile keywords and a 64 KiB message against a plain message of the same size.

The installed set is the platform catalog plus one hostile skill of 100 keywords
"a a ... a bN" (30 shared words, then a distinct one). Each message is 64 KiB; the matcher
reads its first 8 KiB. Prints each case's time per call and automaton steps, and the hostile
cases' time as a ratio of the plain one's, measured side by side in this process (the catalog's
intent models are asked when no keyword of theirs hits: the last case). Exits 1 when
a hostile case costs more than CEILING_RATIO times the plain message (before the token
automaton, the first case took 8.6 s here: 700 times the plain message).

Run: .venv/bin/python bench/matcher_hostile.py
"""

from __future__ import annotations

import random
import sys
import timeit
import uuid
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.units import BYTES_PER_KIB
from skills.labelled_corpus import catalog_skills
from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import CompiledMatcher, compile_matcher

TEXT_BYTES = 64 * BYTES_PER_KIB
CEILING_RATIO = 10.0
REPEATS = 5
CALLS = 20

PLAIN_PARAGRAPH = (
    "Oi, boa tarde! Queria saber se vocês ainda têm aquele modelo azul em estoque, porque vi "
    "no Instagram e achei lindo. Achei um pouco caro, vocês fazem desconto no Pix? Também "
    "preciso marcar um horário para a instalação na semana que vem, de preferência de manhã. "
    "Moro no centro, perto da padaria. Obrigada pela atenção e fico no aguardo! "
)


def hostile_skill(keywords: list[str]) -> LoadedSkill:
    return LoadedSkill(
        name="hostil",
        description="Skill hostil",
        body="Corpo.",
        matcher=SkillMatcher(any_keywords=keywords[:50], probe_keywords=keywords[50:]),
        version_id=uuid.UUID(int=1),
    )


def fill(unit: str) -> str:
    return (
        (unit * (TEXT_BYTES // len(unit.encode()) + 1))
        .encode()[:TEXT_BYTES]
        .decode(errors="ignore")
    )


def made_up_words() -> str:
    rng = random.Random(11)
    words = (
        "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=rng.randint(3, 9))) for _ in range(20000)
    )
    return fill(" ".join(words))


def per_call_ms(matcher: CompiledMatcher, text: str) -> float:
    best_s = min(timeit.repeat(lambda: matcher.match(text), number=CALLS, repeat=REPEATS))
    return best_s / CALLS * 1e3


def main() -> int:
    shared = [("a " * 30) + f"b{n}" for n in range(100)]
    plural_mix = [" ".join("as" if (n >> i) & 1 else "a" for i in range(20)) for n in range(100)]
    # Co-occurrence: every side shares the first words "a a ...", every side occurs.
    sides = [("a " * 13) + f"b{n} + " + ("a " * 13) + f"c{n}" for n in range(100)]
    sides_text = fill("".join(("a " * 13) + f"b{n} " + ("a " * 13) + f"c{n} " for n in range(100)))
    cases = {
        "plain pt-BR message": (shared, fill(PLAIN_PARAGRAPH)),
        "'a a ... a bN' x100 vs 'a a a ...'": (shared, fill("a ")),
        "'a'/'as' mixes x100 vs 'as as ...'": (plural_mix, fill("as ")),
        "'a.. bN + a.. cN' x100, every side": (sides, sides_text),
        # No keyword hit: both catalog intent models read the text, every gram a new one.
        "made-up words (intent models asked)": (shared, made_up_words()),
    }
    print(f"catalog + 1 hostile skill (100 keywords); each message {TEXT_BYTES} B")
    plain_ms = 0.0
    worst = 0.0
    for label, (keywords, text) in cases.items():
        matcher = compile_matcher([*catalog_skills(), hostile_skill(keywords)])
        work = matcher.scan_work(text)
        ms = per_call_ms(matcher, text)
        plain_ms = plain_ms or ms
        ratio = ms / plain_ms
        worst = max(worst, ratio)
        print(
            f"{label:38s} {ms:8.3f} ms/call  {work.words:5d} words read  "
            f"{work.steps:6d} steps  {work.intent_lookups:6d} model look-ups  "
            f"({ratio:.1f}x plain)"
        )
    print(f"hostile/plain: {worst:.1f}x (ceiling {CEILING_RATIO:.0f}x)")
    return 0 if worst <= CEILING_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
