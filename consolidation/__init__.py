"""Consolidation, the curator's sleep cycle beyond decay: associate and distill agent skills.

`similarity` scores pairs of an org's skills (the lexical backend, pure; `embeddings` the
optional OpenAI-compatible one), `grouping` turns links into groups, `distill` builds one
group's umbrella proposal (pure), `gates` decides whether an org runs at all, `run` is one
org's cycle (the tick and `skillet curator consolidate`), `decide` approves or rejects a
proposal; their SQL is in `queries` (the cycle), `link_queries`, `proposal_queries` and
`file_read_queries`. Links and proposals live beside the skills, never in
their versions; a person decides every merge.
"""
