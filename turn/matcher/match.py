"""Keyword matching of an inbound message against installed skills (pure: no I/O, no clock).

Rules, the contract the turn and the tests rely on:

- A skill is *matched* (its body is injected) when one of its ``any_keywords`` occurs in the
  text. It is a *probe* (only recorded) when one of its ``probe_keywords`` occurs and none of
  its ``any_keywords`` does.
- Only the first ``MAX_MATCHED_TEXT_BYTES`` (8 KiB of UTF-8) of the text are read: a burst
  longer than that is matched on its start. When the cut falls inside a word, that partial
  word is dropped too (``precoce`` cut to ``preco`` must not hit ``preço``).
- Keywords and text are normalized alike: casefold, Unicode NFKD, combining marks dropped.
  So ``Não``/``nao``, ``preço``/``PRECO`` and ``2ª``/``2a`` compare equal. Then, word by
  word, a letter written three or more times in a row is written once (``muitooo`` ->
  ``muito``, ``siiim`` -> ``sim``, ``kkkk`` -> ``k``); doubled letters (``carro``) and digits
  (``1000``) stay.
- Both are split into words (``\\w+`` after normalization). A keyword matches whole words
  only: ``cep`` never matches inside ``exceção``, ``frete`` never matches ``fretado``. A
  multi-word keyword matches its words in order, with any run of non-word characters between
  them (``segunda via`` matches ``segunda-via`` and ``Segunda   via``). A keyword with no
  word characters (``""``, ``"!!"``) never matches, nor does one of more than
  ``MAX_PHRASE_WORDS`` (32) words (a package keyword has at most 64 characters, so at most 32
  words).
- Abbreviations: after normalization, a word of ``ABBREVIATIONS`` is read as the word it
  stands for, in keywords and messages alike: ``vc``/``vce`` -> ``voce``, ``q`` -> ``que``,
  ``pq`` -> ``porque``, ``tb``/``tbm`` -> ``tambem``, ``mt``/``mto`` -> ``muito``, ``ta``/``tah``
  (tá) -> ``esta`` (está), ``to``/``tou`` (tô) -> ``estou``, ``pra`` -> ``para``, ``n``/``naum``
  -> ``nao``, ``hj`` -> ``hoje``, ``hr`` -> ``hora``, ``vg`` -> ``vaga``, and common
  misspellings (``kero``/``qro`` -> ``quero``, ``kro`` -> ``caro``, ``orario`` -> ``horario``),
  ... So the keyword ``tá salgado`` matches
  ``está salgado`` and ``ta salgado``, and ``muito puxado`` matches ``mto puxado``. Only whole
  words are replaced, one word by one word; ``esta`` (this) and ``está`` already compared
  equal.
- Word patterns, in keywords only. A keyword word may be written as:
  a *stem*, letters followed by ``*`` (``agend*``): any message word that begins with those
  letters (agenda, agendar, agendamento, agendei); the stem has ``MIN_STEM_CHARS`` (3) to
  ``MAX_STEM_CHARS`` (16) characters after normalization and is not read as an abbreviation;
  the *number* ``#``: any message word that begins with a digit (``8``, ``10h``, ``9h30``,
  ``12x``; ``1.899`` is the two words ``1`` and ``899``);
  *alternatives*, words, stems or ``#`` joined by ``|`` with no spaces (``sexta|sabado``,
  ``remarc*|desmarc*``): any message word one of them matches. A plain alternative keeps its
  plurals and abbreviations. So ``tem horario|vaga`` matches ``tem vaga`` and ``tem horários``,
  and ``segunda|terca as #`` matches ``terça às 15h``. A run of word characters and marks that
  is not such a pattern is read as plain words, as before the marks existed: ``c#`` is ``c``,
  ``a*b`` is ``a b``, ``ab*`` (stem too short) is ``ab``, ``a||b`` is ``a b``.
- One filler word: a keyword of ``MIN_GAPPED_PHRASE_WORDS`` (3) or more words also matches
  when exactly one extra word stands between two of its consecutive words, once, anywhere
  inside the phrase: ``fora do orçamento`` matches ``fora do meu orçamento`` and ``fora, do
  meu... orçamento`` and ``fora mesmo do orçamento``, but not ``fora do meu próprio
  orçamento`` (two extra words together), ``fora meu do seu orçamento`` (one in each of two
  places) nor ``do fora orçamento`` (order). A keyword of one or two words never takes a
  filler word: ``segunda via`` does not match ``segunda e via``.
- Co-occurrence: a keyword ``A + B`` (a ``+`` standing alone, spaces around it) matches when
  phrase ``A`` and phrase ``B`` both occur anywhere in the matched text, in either order,
  overlapping or not; each side follows every rule here (patterns, plurals, its own filler
  word). So ``consulta|horario|agend* + amanha|sexta|#`` matches ``dá pra agendar pra sexta?``
  and ``sexta tem horário?`` but not ``chega sexta?`` nor ``quero agendar``: a broad word
  counts only beside an intent word. The window is the whole matched text (a WhatsApp
  burst is short; no distance is kept). ``a + a`` is ``a``; ``b + a`` and ``a + b`` are one
  keyword. A package refuses a blank side (``a +``, ``+ b``) and more than one ``+``; the
  matcher never matches such a keyword. A ``+`` inside a word run stays a separator as
  before (``c++`` is ``c``, ``1+1`` is ``1 1``).
- Plurals: each keyword word also matches its simple Portuguese plural, derived from the
  normalized word: ``-ao`` -> ``-oes``/``-aes``/``-aos`` (cartão -> cartões, pão -> pães,
  mão -> mãos); ``-il`` -> ``-is``/``-eis`` (barril -> barris, fácil -> fáceis); other ``-l``
  -> ``-is`` (papel -> papéis); ``-m`` -> ``-ns`` (item -> itens); ``-r``/``-z``/``-s`` ->
  ``+es`` (valor -> valores, mês -> meses); ``-x`` and words ending in a digit get none (pix,
  tórax, 24); anything else ``+s`` (frete -> fretes, preço -> preços, cep -> ceps). It is one
  way: the keyword ``boletos`` does not match ``boleto``; write the singular. Irregular
  plurals (mal -> males) are not derived; list them as keywords when they matter.
- Intent models (turn.matcher.intent_model): a skill that is exactly a catalog skill as
  shipped (same name, same keyword lists) is also matched when the classifier trained for it
  accepts the text, keywords or not (``faz 3x?``, ``é muito pra mim``). It reads the matched
  part's first ``MAX_SCORED_WORDS`` words (turn.matcher.intent_features). A business that
  edits the skill's keywords has its own keywords decide alone; editing the body keeps the
  model.
- Order: ``matched`` by number of distinct ``any_keywords`` hits (after normalization)
  descending, then name ascending (code point order); skills only their intent model matched
  come after, by name (and, when kept, in ``by_intent`` too); ``max_matched`` keeps the
  first N and lists the rest, in the same order, in ``capped``. ``probes`` sorted by name,
  without any matched skill. A skill name that appears twice in the input is taken from its
  first occurrence only.

Cost: linear in the message's words, whatever the keywords (turn.matcher.phrase_automaton: at most
``words x (longest phrase + 2) x widest`` automaton steps, counted by
``CompiledMatcher.scan_work``; a step looks a message word up by at most 16 keys: itself, one
prefix per stem length in use (at most 14) and the number). Co-occurrence adds no step: both
sides of ``A + B`` are phrases of the automaton like any other, each reported once per text;
then each reported phrase is checked against the keywords it is a side of, so at most two
set look-ups per co-occurrence keyword of the skill set, a number fixed at compile time and
independent of the text (a 64 KiB text of side words costs what one of 8 KiB does). An intent
model adds one weight look-up per feature of the text, at most ``MAX_FEATURES`` (6,662), and
only for a skill its keywords did not match (``ScanWork.intent_lookups``). The
index is built once per skill set: ``compile_matcher`` (cached with the catalog snapshot), or
the LRU of ``match_skills`` keyed by exactly the skills' names and matchers.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from keywords.patterns import (
    MAX_STEM_CHARS,
    MIN_STEM_CHARS,
    Phrase,
    Sides,
    keyword_form_error,
    keyword_phrase,
    keyword_sides,
)
from keywords.words import (
    ABBREVIATIONS,
    MAX_MATCHED_TEXT_BYTES,
    matched_text,
    normalize_text,
    plural_forms,
    singular_forms,
    words_of,
)
from skills.models import LoadedSkill, SkillMatcher
from turn.matcher.intent_features import features_of_words
from turn.matcher.intent_model import (
    IntentModel,
    IntentModels,
    keywords_sha256,
    shipped_intent_models,
)
from turn.matcher.phrase_automaton import (
    MAX_PHRASE_WORDS,
    MIN_GAPPED_PHRASE_WORDS,
    PhraseAutomaton,
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

# What the compiled index depends on: each input skill's (name, matcher), in input order.
_ContentKey = tuple[tuple[str, SkillMatcher], ...]

# Distinct skill-sets (orgs) whose compiled index stays warm in this process.
_INDEX_CACHE_SIZE = 16
# Distinct matchers whose normalized phrases stay cached (platform skills repeat across orgs).
_MATCHER_CACHE_SIZE = 8192


@dataclass(frozen=True)
class MatchResult:
    """Skills whose bodies go into this turn, probes to record, and matches cut by the cap."""

    matched: list[LoadedSkill]
    probes: list[str]
    capped: list[str] = field(default_factory=list)
    # Names in `matched` that only an intent model matched (their keywords did not).
    by_intent: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ScanWork:
    """What matching one text cost, in steps rather than seconds (bench/ measures seconds).

    Invariant: ``steps <= step_bound = words x (longest phrase + 2) x widest start``, and
    ``side_checks <= 4 x keywords`` (each of a keyword's <= 2 sides, found, checks <= 2).
    """

    words: int  # message words read, after the 8 KiB cut
    steps: int  # group updates, each a fixed handful of int operations of <= 2048 bits
    hits: int  # distinct keywords found (each reported once)
    step_bound: int
    # Look-ups of co-occurrence sides: at most 2 per keyword of the index, whatever the text.
    side_checks: int = 0
    # Weight look-ups of intent models: features (<= MAX_FEATURES) x models that apply.
    intent_lookups: int = 0


def _keywords(keywords: Sequence[str]) -> tuple[Sides, ...]:
    """Normalized, deduplicated keywords as their sides, in first-seen order; empty ones
    dropped (``b + a`` and ``a + b`` are one keyword)."""
    found: dict[Sides, None] = {}  # a dict keeps first-seen order, unlike a set
    for keyword in keywords:
        sides = keyword_sides(keyword)
        if sides:
            found[tuple(sorted(set(sides)))] = None
    return tuple(found)


@lru_cache(maxsize=_MATCHER_CACHE_SIZE)
def _matcher_keywords(matcher: SkillMatcher) -> tuple[tuple[Sides, ...], tuple[Sides, ...]]:
    return _keywords(matcher.any_keywords), _keywords(matcher.probe_keywords)


def _keyword_owners(key: _ContentKey) -> tuple[dict[Sides, list[int]], dict[Sides, list[int]]]:
    """Keyword -> positions of the skills listing it in any_keywords, and in probe_keywords."""
    hard: dict[Sides, list[int]] = {}
    probe: dict[Sides, list[int]] = {}
    seen: set[str] = set()
    for position, (name, matcher) in enumerate(key):
        if name in seen:  # first occurrence wins
            continue
        seen.add(name)
        any_keywords, probe_keywords = _matcher_keywords(matcher)
        for sides in any_keywords:
            hard.setdefault(sides, []).append(position)
        for sides in probe_keywords:
            probe.setdefault(sides, []).append(position)
    return hard, probe


def _applying_models(key: _ContentKey, models: IntentModels) -> tuple[tuple[int, IntentModel], ...]:
    """(position, model) for each skill an intent model was trained for, name and keywords."""
    if not models:
        return ()
    trained_names = {name for name, _ in models}
    found: list[tuple[int, IntentModel]] = []
    seen: set[str] = set()
    for position, (name, matcher) in enumerate(key):
        if name in seen or name not in trained_names:
            continue
        seen.add(name)
        model = models.get((name, keywords_sha256(matcher)))
        if model is not None:
            found.append((position, model))
    return tuple(found)


@dataclass(frozen=True)
class _Read:
    """One text read by a `_KeywordIndex`."""

    found: set[Sides]  # keywords (hard and probe) whose every side occurs
    keyword_counts: dict[int, int]  # position -> distinct ``any_keywords`` found
    by_intent: list[int]  # positions only their intent model matched
    work: ScanWork


class _KeywordIndex:
    """Keyword phrases of a list of skills, addressed by each skill's position in that list,
    and the intent models that apply to them.

    It depends only on the (name, matcher) pairs, so one index serves any list with the same
    pairs in the same order, whatever their bodies or version ids.
    """

    __slots__ = ("automaton", "by_side", "hard", "intent_models", "names", "probe")

    def __init__(self, key: _ContentKey, models: IntentModels) -> None:
        self.names = tuple(name for name, _ in key)
        self.intent_models = _applying_models(key, models)
        self.hard, self.probe = _keyword_owners(key)
        # Phrase -> the keywords it is a side of (a plain keyword is its own one side).
        self.by_side: dict[Phrase, list[Sides]] = {}
        for sides in {**self.hard, **self.probe}:
            for phrase in sides:
                self.by_side.setdefault(phrase, []).append(sides)
        self.automaton = PhraseAutomaton(self.by_side)

    def read(self, text: str) -> _Read:
        """What `text` matches and what finding it cost: its matched part's words read once,
        for the keywords and for the intent models of skills the keywords did not match."""
        words = words_of(matched_text(text))
        found, work = self._scan(words)
        counts = self._keyword_counts(found)
        by_intent, lookups = self._intent_hits(words, counts)
        return _Read(found, counts, by_intent, replace(work, intent_lookups=lookups))

    def _scan(self, words: Sequence[str]) -> tuple[set[Sides], ScanWork]:
        """Keywords found in `words` (a text's matched part): every side of each occurs."""
        found, steps = self.automaton.scan(words)
        # Each found phrase is checked once per keyword it is a side of: at most two checks
        # per keyword of the index, whatever the text's length.
        candidates = [sides for phrase in found for sides in self.by_side[phrase]]
        hits = {sides for sides in candidates if all(side in found for side in sides)}
        longest, widest = self.automaton.longest, self.automaton.widest
        bound = len(words) * (longest + 2) * widest
        checks = sum(len(sides) for sides in candidates)
        work = ScanWork(len(words), steps, len(hits), bound, side_checks=checks)
        return hits, work

    def _keyword_counts(self, found: set[Sides]) -> dict[int, int]:
        """Position -> distinct ``any_keywords`` found, for each skill they match."""
        counts: dict[int, int] = {}
        for sides in found:
            for position in self.hard.get(sides, ()):
                counts[position] = counts.get(position, 0) + 1
        return counts

    def _intent_hits(
        self, words: Sequence[str], keyword_matched: Container[int]
    ) -> tuple[list[int], int]:
        """Positions of skills not matched by keywords whose intent model accepts the text of
        `words`, and the weight look-ups that took (features x models asked)."""
        pending = [(p, m) for p, m in self.intent_models if p not in keyword_matched]
        if not pending:
            return [], 0
        features = features_of_words(words)
        hits = [p for p, model in pending if model.accepts(features)]
        return hits, len(features) * len(pending)


def _content_key(skills: Sequence[LoadedSkill]) -> _ContentKey:
    return tuple((s.name, s.matcher) for s in skills)


@lru_cache(maxsize=_INDEX_CACHE_SIZE)
def _cached_index(key: _ContentKey) -> _KeywordIndex:
    # Keyed by value (names and keyword tuples), so different keywords never share an index.
    return _KeywordIndex(key, shipped_intent_models())


def _match(
    index: _KeywordIndex,
    skills: Sequence[LoadedSkill],
    text: str,
    max_matched: int | None,
) -> MatchResult:
    if max_matched is not None and max_matched < 0:
        raise ValueError(f"max_matched must be >= 0 or None, got {max_matched}")
    read = index.read(text)
    hard_counts = read.keyword_counts
    names = index.names
    ranked = sorted(hard_counts, key=lambda p: (-hard_counts[p], names[p]))
    # A skill its intent model alone matched ranks after every keyword match.
    by_intent = sorted(read.by_intent, key=lambda p: names[p])
    ranked += by_intent
    matched = set(ranked)
    probed = {p for sides in read.found for p in index.probe.get(sides, ()) if p not in matched}
    cut = len(ranked) if max_matched is None else max_matched
    kept = ranked[:cut]
    return MatchResult(
        matched=[skills[p] for p in kept],
        by_intent=[names[p] for p in by_intent if p in kept],
        probes=sorted(names[p] for p in probed),
        capped=[names[p] for p in ranked[cut:]],
    )


class CompiledMatcher:
    """A matcher compiled for one fixed list of skills, for a caller that caches it per org."""

    __slots__ = ("_index", "_skills")

    def __init__(self, skills: Sequence[LoadedSkill], intent_models: IntentModels) -> None:
        self._skills = tuple(skills)
        self._index = _KeywordIndex(_content_key(self._skills), intent_models)

    def match(self, text: str, max_matched: int | None = None) -> MatchResult:
        return _match(self._index, self._skills, text, max_matched)

    def starts_keyword(self, word: str) -> bool:
        """Whether a message word (as ``words_of`` reads it) starts a keyword or probe phrase
        of these skills: when no word of a text does, `match` finds no keyword or probe in it
        (only an intent model can still match; see `has_intent_models`)."""
        return self._index.automaton.starts(word)

    def finds_keyword(self, words: Sequence[str]) -> bool:
        """Whether a keyword or probe phrase of these skills occurs in `words` (a text's
        matched part as ``words_of`` reads it): what `match` finds besides intent models."""
        found, _ = self._index._scan(words)  # same module: the index's own scan
        return bool(found)

    def intent_accepts(self, words: Sequence[str]) -> bool:
        """Whether an intent model of these skills accepts a text of `words` (its matched
        part as ``words_of`` reads it), whether or not the skill's keywords also match."""
        features = features_of_words(words)
        return any(model.accepts(features) for _, model in self._index.intent_models)

    @property
    def has_intent_models(self) -> bool:
        """Whether an intent model applies to one of these skills."""
        return bool(self._index.intent_models)

    def scan_work(self, text: str) -> ScanWork:
        """The work `match(text)` does, counted (for tests and benches; not on the turn path)."""
        return self._index.read(text).work


def compile_matcher(
    skills: Sequence[LoadedSkill], *, intent_models: IntentModels | None = None
) -> CompiledMatcher:
    """Compile the keyword index of `skills` once; `.match(text)` then costs per message only.

    `intent_models`: the shipped ones by default; ``NO_INTENT_MODELS`` matches by keywords only.
    """
    models = shipped_intent_models() if intent_models is None else intent_models
    return CompiledMatcher(skills, models)


def match_skills(
    skills: Sequence[LoadedSkill], text: str, *, max_matched: int | None = None
) -> MatchResult:
    """Match `text` against `skills` (rules in the module docstring).

    `max_matched=None` injects every hard match, 0 injects none (all go to `capped`).
    """
    skills = tuple(skills)
    return _match(_cached_index(_content_key(skills)), skills, text, max_matched)
