"""How alike two customers' questions are: the interface grouping reads, and its lexical
backend. Pure and deterministic.

`QuestionSimilarity.scores(texts)` answers, for the pairs of texts that share anything, a
score in [0, 1] (a missing pair is 0). The lexical backend: each question's content words
(folded, stop words of WhatsApp pt-BR questions dropped, stemmed by suggestions.stemmer so
"pagar"/"pagamento"/"paga" meet), weighed by a smoothed IDF over the texts compared
(PRIOR_TEXTS pretend texts that hold no word, so in an org with three questions a word all
three share still counts), cosine. An embedding backend (the similarity package's) fits the
same interface: BlendedSimilarity, its vectors' cosine beside these rules.

Bounds: each text is cut to MAX_QUESTION_CHARS; the pair updates are at most
MAX_PAIR_UPDATES (the most widespread features dropped first past that).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from suggestions.concepts import concept_of
from suggestions.privacy import REMOVED, fold
from suggestions.stemmer import stem

MAX_QUESTION_CHARS = 1_000
PRIOR_TEXTS = 20
# The pairs the scores add up are bounded: features are dropped, most widespread first,
# until the pairs their holders make are at most MAX_PAIR_UPDATES (a feature held by d
# texts makes d(d-1)/2). 1,000 lessons of one topic (every one holding "pix") make 500,000:
# they still group; only a set past that loses its most common words first.
MAX_PAIR_UPDATES = 1_000_000

_WORD = re.compile(r"[^\W\d_]{2,}")

# Words that say nothing of what a question is about: greetings, courtesy, pronouns, the
# verbs every question wears ("queria saber se vocês têm").
STOP_WORDS = frozenset(
    """
    a o as os um uma uns umas de do da dos das no na nos nas em num numa ao aos pelo pela
    pelos pelas por para pra pro com sem sobre ate entre e ou mas nem que se como quando
    qual quais quanto quantos quanta quantas onde porque pq por que quem cujo este esta
    esse essa isso isto aquele aquela aquilo ele ela eles elas eu tu voce voces vc vcs nos
    me te lhe mim meu minha meus minhas seu sua seus suas teu tua nosso nossa dele dela
    oi ola ole bom boa dia tarde noite tudo bem obrigado obrigada obg brigado valeu
    favor pf pfv por gentileza moca moco amigo amiga senhor senhora gente pessoal
    ai ja agora hoje ainda tambem tbm tb so mesmo muito mt mais menos bem entao
    queria quero gostaria gostava saber sabe saberia pergunta duvida
    tem tenho temos ter tinha teria ha existe
    e eh sao ser sou era foi fosse estou esta estao estava
    pode podem poderia posso podia da dar consigo consegue
    vai vou vao fazer faz fazem faco
    nao sim ok okay blz beleza certo ne ta ne hein kk kkk rs
    alguma algum algo alguem coisa aqui ali la hj nome chamo
    manda mandar mandam passa passar preciso precisa precisava cada leva levar
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


# Words of every shop's questions that say little of which one it is ("a loja", "meu pedido",
# "quanto custa"): weighed GENERIC_WEIGHT of a content word, so two questions that share only
# one of them are not alike, while each still counts beside the words that matter.
GENERIC_WORDS = frozenset(
    """
    loja lojas pedido pedidos compra compras comprar comprei produto produtos dia dias
    tempo vez vezes casa amanha hoje agora custa custo custar valor preco precos fica sai
    quanto demora possivel consigo encomenda encomendas
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
GENERIC_WEIGHT = 0.3

# bench/suggestions.py, tune part (lexical with concepts), precision / recall: 0.40 0.833 /
# 0.347, 0.45 0.850 / 0.278, 0.50 0.873 / 0.224, 0.55 0.929 / 0.159 (the lowest threshold at
# or above 0.9: the best recall there), 0.60 0.909 / 0.082. The wrong pairs left are mostly
# questions about two things ("pix tem desconto?" beside "tem cupom de desconto?").
LEXICAL_GROUP_THRESHOLD = 0.55
# The blend (BlendedSimilarity): a pair's score is its cosine above COSINE_FLOOR plus
# LEXICAL_WEIGHT times its lexical score; only positive ones are pairs. Chosen on the tune
# part of bench/suggestions.py (the best recall at precision >= 0.93 there): weight 0.3,
# 0.952 / 0.322; 0.5, 0.950 / 0.310; 0.7, 0.964 / 0.110; the floor (0.80-0.90) moves only
# the threshold. The embedded model alone puts every two pt-BR customer questions at a cosine
# of 0.80-0.95, paraphrase or not (best tune recall at precision >= 0.92: 0.06): the words
# say which shop thing a question is about, the vector how it was asked.
COSINE_FLOOR = 0.85
LEXICAL_WEIGHT = 0.5
BLENDED_GROUP_THRESHOLD = 0.28


class QuestionSimilarity(Protocol):
    """Scores of the pairs (i, j), i < j, of `texts` that are alike at all; `name` is the
    backend, `threshold` the average score a group needs on its scale."""

    name: str
    threshold: float

    def scores(self, texts: Sequence[str]) -> dict[tuple[int, int], float]: ...


def content_words(text: str) -> list[str]:
    """The question's words that say what it is about, folded (no stop words, no numbers,
    nothing removed for privacy)."""
    plain = fold(text[:MAX_QUESTION_CHARS].replace(REMOVED, " "))
    return [w for w in _WORD.findall(plain) if w not in STOP_WORDS]


def _feature(word: str) -> str:
    """A word's stem; a generic word's is marked ("~") to be weighed down."""
    return f"~{stem(word)}" if word in GENERIC_WORDS else stem(word)


def _too_common(df: Counter[str]) -> set[str]:
    """The most widespread features to drop so the pair updates stay bounded."""
    dropped: set[str] = set()
    total = sum(d * (d - 1) // 2 for d in df.values())
    for feature, d in sorted(df.items(), key=lambda kv: (-kv[1], kv[0])):
        if total <= MAX_PAIR_UPDATES:
            break
        dropped.add(feature)
        total -= d * (d - 1) // 2
    return dropped


def _features(text: str, concepts: bool) -> Counter[str]:
    found: Counter[str] = Counter()
    for word in content_words(text):
        found[_feature(word)] += 1
        concept = concept_of(word) if concepts else None
        if concept is not None:
            found[f"={concept}"] += 1
    return found


class LexicalSimilarity:
    """TF-IDF over stems and concepts, cosine (module docstring)."""

    name = "lexical"
    threshold = LEXICAL_GROUP_THRESHOLD

    def __init__(self, *, concepts: bool = True) -> None:
        self.concepts = concepts

    def scores(self, texts: Sequence[str]) -> dict[tuple[int, int], float]:
        stems = [_features(t, self.concepts) for t in texts]
        df: Counter[str] = Counter()
        for counts in stems:
            df.update(counts.keys())
        n = len(texts)
        common = _too_common(df)
        idf = {s: math.log((n + PRIOR_TEXTS) / (d + 1)) for s, d in df.items()}
        vectors: list[dict[str, float]] = []
        for counts in stems:
            vector = {
                s: (1 + math.log(c)) * idf[s] * (GENERIC_WEIGHT if s[0] == "~" else 1.0)
                for s, c in counts.items()
                if s not in common
            }
            norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
            vectors.append({s: v / norm for s, v in vector.items()})
        holders: dict[str, list[int]] = defaultdict(list)
        for i, vector in enumerate(vectors):
            for s in vector:
                holders[s].append(i)
        out: dict[tuple[int, int], float] = defaultdict(float)
        for s, owners in holders.items():
            for a in range(len(owners)):
                for b in range(a + 1, len(owners)):
                    i, j = owners[a], owners[b]
                    out[(i, j)] += vectors[i][s] * vectors[j][s]
        return dict(out)


class BlendedSimilarity:
    """The similarity backend's vectors and the lexical rules together (see LEXICAL_WEIGHT):
    `vectors` holds one unit row per text of the one `scores` call it was made for."""

    threshold = BLENDED_GROUP_THRESHOLD

    def __init__(self, name: str, vectors: npt.NDArray[np.float64]) -> None:
        self.name = name
        self.vectors = vectors

    def scores(self, texts: Sequence[str]) -> dict[tuple[int, int], float]:
        if len(texts) != self.vectors.shape[0]:
            raise ValueError("one vector per text")
        blended = self.vectors @ self.vectors.T - COSINE_FLOOR
        for (i, j), score in LexicalSimilarity().scores(texts).items():
            blended[i, j] += LEXICAL_WEIGHT * score
        rows, cols = np.nonzero(np.triu(blended > 0, k=1))
        return {
            (int(i), int(j)): float(blended[i, j])
            for i, j in zip(rows.tolist(), cols.tolist(), strict=True)
        }
