"""Consolidation, the curator's sleep cycle beyond decay: associate and distill agent skills.

`similarity` scores pairs of an org's skills (the lexical backend, pure), `measure` asks the
backend in use (the `similarity` package's vectors, stored per version, or lexical, which
every failure falls back to), `lines` holds each backend's link, group and "same thing"
lines, `embeddings` is the OpenAI-compatible server behind its meaning probe, `neighbours` the
skills a draft is close to, `grouping` turns links into groups, `distill` builds one
group's umbrella proposal (pure), `gates` decides whether an org runs at all, `run` is one
org's cycle (the tick and `skillet curator consolidate`), `decide` approves or rejects a
proposal; their SQL is in `queries` (the cycle), `link_queries`, `proposal_queries` and
`file_read_queries`. Links and proposals live beside the skills, never in
their versions; a person decides every merge.
"""
