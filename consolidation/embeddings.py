"""The embeddings backend for consolidation: the OpenAI-compatible client (similarity.remote)
behind a meaning probe, its links marked `embeddings`.

Never trusted to mean something just because it answers: before it embeds skills, the
backend embeds a fixed probe set of paraphrase triplets, and a server whose vectors do not
put each paraphrase closer than the unrelated text (random or hashed vectors, a
misconfigured model) is a stub: SimilarityFailed, and the cycle measures with lexical
(consolidation.measure). The client's own bounds (batches, timeout, answer size, finite
vectors of one dimension) are similarity.remote's.
"""

from __future__ import annotations

from collections.abc import Sequence

from consolidation.lines import LINES, Lines
from consolidation.measure import VectorBackend
from similarity.backend import EMBEDDINGS, Embedder, SimilarityFailed
from similarity.remote import RemoteEmbedder, parse_vectors
from similarity.vectors import cosine

__all__ = ["EMBEDDINGS", "EmbeddingsBackend", "ProbedEmbedder", "measures_meaning", "parse_vectors"]

# (anchor, paraphrase, unrelated): a model that measures meaning ranks each paraphrase first.
PROBES = (
    (
        "troca de produto com defeito",
        "quero trocar um produto que veio quebrado",
        "horário de funcionamento da loja",
    ),
    ("pagamento por pix", "como pago com a chave pix", "prazo de entrega do pedido"),
    ("prazo de entrega", "quando chega o meu pedido", "tabela de tamanhos de roupa"),
    # A paraphrase that shares no word ("desistir ... dinheiro de volta") was too far for a
    # small real model (e5-small: 0.86 against 0.89 for the unrelated text): a probe checks
    # that the vectors mean something, not how well.
    ("cancelar o pedido", "quero cancelar minha compra", "montagem do móvel"),
)
PROBE_MARGIN = 0.02  # cosine: e5-like models score unrelated pt-BR texts 0.8+, paraphrases 0.9+


def measures_meaning(vectors: Sequence[Sequence[float]], margin: float = PROBE_MARGIN) -> bool:
    """Each probe's paraphrase closer to its anchor than the unrelated text, by a margin."""
    for i in range(0, len(vectors), 3):
        anchor, paraphrase, unrelated = vectors[i : i + 3]
        if cosine(anchor, paraphrase) <= cosine(anchor, unrelated) + margin:
            return False
    return True


class ProbedEmbedder:
    """An embedder whose every call first checks the probes (12 short texts)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        probes = await self.inner.embed([t for triplet in PROBES for t in triplet])
        if not measures_meaning(probes):
            raise SimilarityFailed(self.name, "the server's vectors do not measure meaning")
        return await self.inner.embed(texts)


class EmbeddingsBackend(VectorBackend):
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 20.0,
        lines: Lines | None = None,
    ) -> None:
        remote = RemoteEmbedder(base_url, model, api_key=api_key, timeout_s=timeout_s)
        super().__init__(ProbedEmbedder(remote), lines or LINES[EMBEDDINGS])
        self.url = remote.url
