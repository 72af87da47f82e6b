"""The hand-written similarity corpus (tests/data/similarity_corpus.txt): piles and singles,
split into a tuning half and a held-out half (alternate blocks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "similarity_corpus.txt"


@dataclass(frozen=True)
class CorpusSkill:
    name: str
    description: str
    body: str
    pile: int  # skills of one pile share it; each single has its own


@dataclass(frozen=True)
class Corpus:
    tuning: tuple[CorpusSkill, ...]
    held_out: tuple[CorpusSkill, ...]

    def half(self, which: str) -> tuple[CorpusSkill, ...]:
        return {
            "tuning": self.tuning,
            "held-out": self.held_out,
            "all": self.tuning + self.held_out,
        }[which]


def load(path: Path = CORPUS) -> Corpus:
    halves: dict[str, list[CorpusSkill]] = {"tuning": [], "held-out": []}
    seen = {"pile": 0, "single": 0}
    block = 0
    kind = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        if line.startswith("## "):
            kind = line[3:].strip()
            seen[kind] += 1
            block += 1
            continue
        name, description, body = (part.strip() for part in line.split("|", 2))
        half = "tuning" if seen[kind] % 2 == 1 else "held-out"
        halves[half].append(CorpusSkill(name, description, body, block))
    return Corpus(tuple(halves["tuning"]), tuple(halves["held-out"]))


def same_pile_pairs(skills: tuple[CorpusSkill, ...]) -> set[frozenset[str]]:
    return {
        frozenset((a.name, b.name))
        for i, a in enumerate(skills)
        for b in skills[i + 1 :]
        if a.pile == b.pile
    }
