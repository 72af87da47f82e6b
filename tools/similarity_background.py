"""Write the embedded model's background vector (similarity/backgrounds/<variant>.json): the
mean of its vectors of the tuning half of the hand-written corpus.

Run: .venv/bin/python tools/similarity_background.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from similarity.embedded import VARIANT, EmbeddedEmbedder  # noqa: E402
from similarity.vectors import skill_text  # noqa: E402
from tests.similarity_corpus import load  # noqa: E402


def main() -> int:
    embedder = EmbeddedEmbedder(threads=1)
    texts = [skill_text(s.name, s.description, s.body) for s in load().tuning]
    vectors = embedder.embed_blocking(texts)
    mean = [round(sum(column) / len(vectors), 6) for column in zip(*vectors, strict=True)]
    out = ROOT / "similarity" / "backgrounds" / f"{VARIANT}.json"
    body = {"model_id": embedder.model_id, "texts": len(texts), "vector": mean}
    out.write_text(json.dumps(body) + "\n", encoding="utf-8")
    print(f"{out}: {len(mean)} dimensions from {len(texts)} skills")
    return 0


if __name__ == "__main__":
    sys.exit(main())
