"""Which installed skills a message matches: keywords first, a catalog skill's intent model
beside them; pure, bounded, linear in the message's words.

`match` holds the rules and the contract (match_skills, MatchResult, compile_matcher);
`words` reads a text's words, `keyword_patterns` a keyword's forms, `phrase_automaton`
scans all phrases at once, `intent_features` / `intent_model` are the catalog's classifiers.
"""

from turn.matcher.match import (
    ABBREVIATIONS,
    MAX_MATCHED_TEXT_BYTES,
    MAX_PHRASE_WORDS,
    MAX_STEM_CHARS,
    MIN_GAPPED_PHRASE_WORDS,
    MIN_STEM_CHARS,
    CompiledMatcher,
    MatchResult,
    ScanWork,
    compile_matcher,
    keyword_form_error,
    keyword_phrase,
    keyword_sides,
    match_skills,
    matched_text,
    normalize_text,
    plural_forms,
    singular_forms,
    words_of,
)

__all__ = [
    "ABBREVIATIONS",
    "MAX_MATCHED_TEXT_BYTES",
    "MAX_PHRASE_WORDS",
    "MAX_STEM_CHARS",
    "MIN_GAPPED_PHRASE_WORDS",
    "MIN_STEM_CHARS",
    "CompiledMatcher",
    "MatchResult",
    "ScanWork",
    "compile_matcher",
    "keyword_form_error",
    "keyword_phrase",
    "keyword_sides",
    "match_skills",
    "matched_text",
    "normalize_text",
    "plural_forms",
    "singular_forms",
    "words_of",
]
