"""The lexical similarity backend, pure and deterministic: TF-IDF over words and their
4-character stems, cosine, pairs at or above a threshold.

Why both features: words carry the topic ("pix", "troca"), stems tie the inflections and
paraphrases models write ("trocar"/"troca"/"trocas", "devolução"/"devolver") without a
stemmer of our own. Accents and case are folded first. Measured on bench/consolidation.py
against all character 4-grams of each word: 4-grams let long product names dominate (many
grams, each rare) and joined unrelated skills about one product; stems did not.
Fields weigh differently: the name and the keywords say what the skill is for, the body
mostly how; the weights repeat a field's features.

Bounds (hostile or huge skills cost bounded CPU): each field is cut to a fixed number of
characters before it is read, features present in more than half the skills are dropped
(they carry almost no IDF weight and would make the pair accumulation quadratic), and the
caller caps how many skills one cycle compares. The same inputs give the same links, in the
same order, on every run.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

LEXICAL = "lexical"
# A pair at or above this cosine is a link. bench/consolidation.py on 60 piles of paraphrased
# near-duplicates (seeds 7 and 11): 0.55 reached recall 0.89-0.91 but joined unrelated skills
# in 15-18 proposals (precision 0.88-0.90); 0.62 gives precision 0.96-0.98 and recall 0.78.
DEFAULT_THRESHOLD = 0.62
MAX_FIELD_CHARS = 4_000  # of each field read: a body's opening says what it is about
STEM_CHARS = 4  # a word's first characters, for words longer than that
BIGRAM_WEIGHT = 8  # adjacent word pairs ("troca geladeira"): what a topic is, not its words
MIN_WORD_CHARS = 2
COMMON_DF_FRACTION = 0.5  # features in more skills than this fraction are dropped...
MIN_COMMON_DF = 20  # ... when that is more than 20 skills (a feature in 20 costs 190 pairs)
# How many times a field's features count (name and keywords say what a skill is for).
FIELD_WEIGHTS = {"name": 3, "keywords": 3, "description": 2, "body": 1}

# Portuguese function words: frequent in every skill, meaningless for topic.
_STOPWORD_TEXT = """
a o as os um uma uns umas de do da dos das em no na nos nas por pelo pela pelos pelas para
pra com sem e ou que se ao aos the and of to is como mais muito ja nao sim ser esta este isso
isto essa esse seu sua seus suas quando onde qual quais tem ter foi sao cliente clientes skill
skills
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class SkillText:
    """What the backend reads of one skill."""

    name: str
    description: str
    body: str
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class Link:
    """A similar pair, `a` < `b` in code-point order; `score` in (0, 1]."""

    a: str
    b: str
    score: float
    backend: str = LEXICAL

    def to_json(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "score": round(self.score, 4), "backend": self.backend}


def fold(text: str) -> str:
    """Lower case, accents dropped (NFKD, combining marks removed)."""
    decomposed = unicodedata.normalize("NFKD", text[:MAX_FIELD_CHARS].lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    return [
        w for w in _WORD_RE.findall(fold(text)) if len(w) >= MIN_WORD_CHARS and w not in STOPWORDS
    ]


def features(skill: SkillText) -> Counter[str]:
    """Weighted feature counts: `w:word` and `s:stem` (its first STEM_CHARS characters)."""
    fields = {
        "name": skill.name.replace("-", " "),
        "keywords": " ".join(skill.keywords),
        "description": skill.description,
        "body": skill.body,
    }
    counts: Counter[str] = Counter()
    for field, text in fields.items():
        weight = FIELD_WEIGHTS[field]
        for word in words(text):
            counts["w:" + word] += weight
            if len(word) > STEM_CHARS:
                counts["s:" + word[:STEM_CHARS]] += weight
    return counts


def _vectors(skills: Sequence[SkillText]) -> list[dict[str, float]]:
    counted = [features(s) for s in skills]
    df: Counter[str] = Counter()
    for counts in counted:
        df.update(counts.keys())
    n = len(skills)
    common = max(COMMON_DF_FRACTION * n, MIN_COMMON_DF)  # a small org's topic words stay
    vectors: list[dict[str, float]] = []
    for counts in counted:
        vec = {
            f: (1.0 + math.log(c)) * (math.log((n + 1) / (df[f] + 1)) + 1.0)
            for f, c in counts.items()
            if df[f] <= common
        }
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors.append({f: v / norm for f, v in vec.items()})
    return vectors


def lexical_scores(skills: Sequence[SkillText]) -> dict[tuple[int, int], float]:
    """Cosine of every pair sharing a feature, by (i, j) index with i < j."""
    vectors = _vectors(skills)
    postings: defaultdict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, vec in enumerate(vectors):
        for f, v in vec.items():
            postings[f].append((i, v))
    dots: defaultdict[tuple[int, int], float] = defaultdict(float)
    for posting in postings.values():
        for x in range(len(posting)):
            i, vi = posting[x]
            for j, vj in posting[x + 1 :]:
                dots[(i, j)] += vi * vj
    return dots


def lexical_links(skills: Sequence[SkillText], threshold: float = DEFAULT_THRESHOLD) -> list[Link]:
    """Pairs at or above `threshold`, sorted by (a, b). The skills are read in name order, so
    the floating-point sums, and the scores to their last bit, do not depend on input order."""
    ordered = sorted(skills, key=lambda s: s.name)
    links = []
    for (i, j), score in lexical_scores(ordered).items():
        if score >= threshold:
            a, b = sorted((ordered[i].name, ordered[j].name))
            links.append(Link(a, b, min(score, 1.0)))
    return sorted(links, key=lambda link: (link.a, link.b))
