"""The lexical similarity backend, pure and deterministic: TF-IDF over word stems and whole
keywords, cosine, pairs at or above a threshold.

Features: each word's stem (consolidation.stemmer: "trocar"/"troca"/"trocas" meet,
"devolução"/"devolver" too), counted once per occurrence; a hyphenated compound as one word
("micro-ondas", in the name too where the skill's own text writes it so); and each keyword
as one phrase feature ("troca geladeira"). Why phrases: a skill's keywords say what it is
for, and a shared keyword is evidence of one topic that its words alone are not ("troca
geladeira" and "entrega geladeira" share the word geladeira, not the keyword). Accents and
case are folded first. Measured on bench/consolidation.py (seeds 1-24, average-linkage
groups): words plus their 4-character prefixes (the previous features) joined skills about
one product (precision 0.93-0.97 for recall 0.93); stems without phrases too (0.95 for
0.93); stems with phrases at weight 3, 0.975 for 0.94; bigrams of stems, 0.96 for 0.95 at a
lower scale; a binary tf lost both. Compounds split into their words weighed a two-word
product double ("caixa", "som") and joined piles about it; whole, the worst seed's
precision went from 0.948 to 0.962.
Fields weigh differently: the name and the keywords say what the skill is for, the body
mostly how; the weights repeat a field's features.

Bounds (hostile or huge skills cost bounded CPU): each field is cut to a fixed number of
characters before it is read, features present in more than half the skills are dropped
(they carry almost no IDF weight and would make the pair accumulation quadratic), and the
caller caps how many skills one cycle compares. Cost: O(characters) to read, O(P) for the P
pairs that share a feature. The same inputs give the same links, in the same order, on
every run.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from consolidation.stemmer import stem

LEXICAL = "lexical"
# A pair at or above this cosine is a link (stored, shown as a close neighbour). Groups are
# stricter: consolidation.grouping joins two groups only when their links average at
# least GROUP_THRESHOLD, a missing link counting 0. bench/consolidation.py: links from 0.45
# let the average see a pile's weaker pairs (from 0.55 recall fell to 0.80). Groups, chosen
# on seeds 1-24 and checked on 25-60 (min / mean): 0.54 precision 0.962 / 0.984 and 0.967 /
# 0.985, recall 0.936 / 0.968 and 0.905 / 0.966; 0.55 precision 0.978 / 0.990, recall
# 0.898 / 0.960 (a seed under the goal); 0.53 precision 0.938 / 0.976 (seeds 1-24).
DEFAULT_THRESHOLD = 0.45
GROUP_THRESHOLD = 0.54
MAX_FIELD_CHARS = 4_000  # of each field read: a body's opening says what it is about
PHRASE_WEIGHT = 3  # a whole keyword, beside its words' stems (see the docstring)
MAX_PHRASE_WORDS = 8  # of a keyword read as a phrase
MIN_WORD_CHARS = 2
MAX_KEYWORDS_READ = 64  # a package allows fewer; a hostile list costs no more than this
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

# A word, hyphenated compounds whole ("micro-ondas", "caixa-de-som"): one idea, one feature.
_WORD_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_COMPOUND_PARTS = 6  # of a name's words joined back into a compound


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


def name_words(name: str, compounds: set[str]) -> list[str]:
    """A name's words: its hyphens separate words, except where the skill's own text writes
    the same run of words as one compound ("troca-micro-ondas" with "micro-ondas" in its
    keywords reads troca, micro-ondas). Longest compound first, at most MAX_COMPOUND_PARTS."""
    # Every part, stopwords too: "caixa-de-som" has one ("de") the compound keeps.
    parts = re.findall(r"[a-z0-9]+", fold(name))
    out: list[str] = []
    i = 0
    while i < len(parts):
        for j in range(min(len(parts), i + MAX_COMPOUND_PARTS), i + 1, -1):
            joined = "-".join(parts[i:j])
            if joined in compounds:
                out.append(joined)
                i = j
                break
        else:
            if len(parts[i]) >= MIN_WORD_CHARS and parts[i] not in STOPWORDS:
                out.append(parts[i])
            i += 1
    return out


def features(skill: SkillText) -> Counter[str]:
    """Weighted feature counts: `s:stem` of every word, `k:phrase` of every keyword."""
    read = {
        "keywords": words(" ; ".join(skill.keywords)),
        "description": words(skill.description),
        "body": words(skill.body),
    }
    compounds = {w for field in read.values() for w in field if "-" in w}
    read["name"] = name_words(skill.name, compounds)
    counts: Counter[str] = Counter()
    for field, found in read.items():
        weight = FIELD_WEIGHTS[field]
        for word in found:
            counts["s:" + stem(word)] += weight
    for keyword in skill.keywords[:MAX_KEYWORDS_READ]:
        phrase = [stem(w) for w in words(keyword)[:MAX_PHRASE_WORDS]]
        if phrase:
            counts["k:" + " ".join(phrase)] += PHRASE_WEIGHT
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
