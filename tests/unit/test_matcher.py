"""Unit tests of turn.matcher.match: every matching rule as its own case."""

from __future__ import annotations

import itertools
import uuid

import pytest

from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import (
    ABBREVIATIONS,
    MAX_MATCHED_TEXT_BYTES,
    MAX_PHRASE_WORDS,
    MatchResult,
    compile_matcher,
    match_skills,
    matched_text,
    normalize_text,
    plural_forms,
    singular_forms,
    words_of,
)


def skill(
    name: str, any_keywords: list[str], probe_keywords: list[str] | None = None
) -> LoadedSkill:
    return LoadedSkill(
        name=name,
        description=f"descrição de {name}",
        body=f"corpo de {name}",
        matcher=SkillMatcher(any_keywords=any_keywords, probe_keywords=probe_keywords or []),
        version_id=uuid.uuid4(),
    )


def matched_names(result: MatchResult) -> list[str]:
    return [s.name for s in result.matched]


def hits(keyword: str, text: str) -> bool:
    return matched_names(match_skills([skill("s", [keyword])], text)) == ["s"]


# --- hard matches and probes -------------------------------------------------------------


def test_any_keyword_hit_is_a_hard_match() -> None:
    frete = skill("frete", ["frete"], ["entrega"])
    result = match_skills([frete], "quanto fica o frete?")
    assert result.matched == [frete]
    assert result.probes == []


def test_probe_keyword_without_hard_hit_is_a_probe() -> None:
    result = match_skills([skill("frete", ["frete"], ["entrega"])], "qual o prazo de entrega?")
    assert result.matched == []
    assert result.probes == ["frete"]


def test_probe_and_hard_hit_is_only_a_hard_match() -> None:
    result = match_skills([skill("frete", ["frete"], ["entrega"])], "frete e entrega")
    assert matched_names(result) == ["frete"]
    assert result.probes == []


def test_no_hit_matches_nothing() -> None:
    result = match_skills([skill("frete", ["frete"], ["entrega"])], "bom dia, tudo bem?")
    assert result == MatchResult(matched=[], probes=[], capped=[])


def test_matched_returns_the_input_skill_objects() -> None:
    frete = skill("frete", ["frete"])
    result = match_skills([frete], "frete")
    assert result.matched[0] is frete


# --- case and accent insensitivity -------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("Não", "nao quero"),
        ("nao", "NÃO quero"),
        ("preço", "qual o preco?"),
        ("preco", "qual o PREÇO?"),
        ("orçamento", "manda o ORCAMENTO"),
        ("ORCAMENTO", "manda o orçamento"),
        ("2ª via", "quero a 2a via"),
    ],
)
def test_case_and_accent_insensitive(keyword: str, text: str) -> None:
    assert hits(keyword, text)


def test_decomposed_accents_in_text_match() -> None:
    # "ção" typed as c + combining cedilla, a + combining tilde (NFD, as some keyboards send).
    assert hits("promoção", "tem promoc\u0327a\u0303o hoje?")


# --- whole words and phrases -------------------------------------------------------------


@pytest.mark.parametrize("text", ["é uma exceção", "excecao", "cepa", "precepção"])
def test_keyword_never_matches_inside_a_longer_word(text: str) -> None:
    assert not hits("cep", text)


@pytest.mark.parametrize("text", ["ônibus fretado", "fretamento", "refrete"])
def test_frete_does_not_match_longer_words(text: str) -> None:
    assert not hits("frete", text)


@pytest.mark.parametrize("text", ["meu cep é 01001-000", "CEP: 01001000", "(cep)"])
def test_keyword_matches_a_whole_word_next_to_punctuation(text: str) -> None:
    assert hits("cep", text)


@pytest.mark.parametrize(
    "text",
    [
        "quero a segunda via do boleto",
        "quero a 2a... segunda   via do boleto",
        "Segunda-Via, por favor",
        "segunda\nvia",
        "segunda, via",
    ],
)
def test_phrase_matches_across_any_separators(text: str) -> None:
    assert hits("segunda via", text)


@pytest.mark.parametrize(
    "text", ["segunda viagem", "via segunda", "segunda e via", "segundavia", "segunda"]
)
def test_phrase_needs_its_words_consecutive_and_whole(text: str) -> None:
    assert not hits("segunda via", text)


def test_phrase_at_the_end_of_the_text_is_not_read_past_the_end() -> None:
    assert not hits("segunda via rapida", "quero a segunda via")


def test_overlapping_starts_of_a_phrase_still_match() -> None:
    assert hits("segunda via", "segunda segunda via")


@pytest.mark.parametrize("keyword", ["", "   ", "!!!", "—"])
def test_keyword_without_words_never_matches(keyword: str) -> None:
    assert not hits(keyword, "qualquer texto ! — com pontuação")


# --- plurals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("frete", "quanto custam os fretes?"),
        ("boleto", "mandem os boletos"),
        ("preço", "quais os preços?"),
        ("preco", "tabela de PREÇOS"),
        ("cep", "dois ceps diferentes"),
        ("mês", "daqui a três meses"),
        ("valor", "os valores mudaram"),
        ("item", "quantos itens"),
        ("cartão", "aceitam cartões?"),
        ("pão", "quero dois pães"),
        ("mão", "lavar as mãos"),
        ("papel", "os papéis"),
        ("barril", "cinco barris"),
        ("fácil", "são fáceis"),
        ("segunda via", "as segundas vias dos boletos"),
    ],
)
def test_keyword_word_matches_its_simple_plural(keyword: str, text: str) -> None:
    assert hits(keyword, text)


@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("mes", "a mesa está posta"),
        ("mes", "o mesmo pedido"),
        ("mes", "mess"),
        ("mes", "mesas"),
        ("cep", "exceções"),
        ("cep", "cepas"),
        ("frete", "fretados"),
        ("boleto", "boletim"),
        ("preco", "precoce"),
        ("pix", "pixs"),
    ],
)
def test_plural_does_not_over_match(keyword: str, text: str) -> None:
    assert not hits(keyword, text)


def test_plural_is_one_way_a_plural_keyword_does_not_match_the_singular() -> None:
    assert not hits("boletos", "mande o boleto")


@pytest.mark.parametrize(
    ("word", "plurals"),
    [
        ("frete", ("fretes",)),
        ("mes", ("meses",)),
        ("cartao", ("cartoes", "cartaes", "cartaos")),
        ("item", ("itens",)),
        ("papel", ("papeis",)),
        ("facil", ("facis", "faceis")),
        ("luz", ("luzes",)),
        ("pix", ()),
        ("24", ()),
    ],
)
def test_plural_forms_table(word: str, plurals: tuple[str, ...]) -> None:
    assert plural_forms(word) == plurals


@pytest.mark.parametrize(
    ("word", "singulars"),
    [
        ("fretes", ("frete",)),
        ("meses", ("mes", "mese")),
        ("cartoes", ("cartao", "cartoe")),
        ("itens", ("item", "iten")),
        ("papeis", ("papeil", "papel", "papil", "papei")),
        ("frete", ()),
        ("pixs", ()),
    ],
)
def test_singular_forms_table(word: str, singulars: tuple[str, ...]) -> None:
    assert sorted(singular_forms(word)) == sorted(singulars)


# Every word of up to 4 letters over the letters the plural rules look at, plus a digit.
_ALPHABET = "aeilmnorsxz1"
_SAMPLE = [
    "".join(letters)
    for length in range(1, 5)
    for letters in itertools.product(_ALPHABET, repeat=length)
]


def test_singular_forms_is_the_exact_inverse_of_plural_forms() -> None:
    # Matching maps message words to singulars; if the two rules drift apart, a keyword would
    # silently match a non-plural or miss its plural.
    words = set(_SAMPLE) | {p for w in _SAMPLE for p in plural_forms(w)}
    for word in sorted(words):
        for plural in plural_forms(word):
            assert word in singular_forms(plural), (word, plural)
        for singular in singular_forms(word):
            assert word in plural_forms(singular), (word, singular)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [("Não", "nao"), ("ORÇAMENTO", "orcamento"), ("2ª Via", "2a via"), ("Straße", "strasse")],
)
def test_normalize_text(raw: str, normalized: str) -> None:
    assert normalize_text(raw) == normalized


# --- order, counts, cap, duplicates ------------------------------------------------------


def test_matched_ordered_by_distinct_hits_desc_then_name_asc() -> None:
    skills = [
        skill("c-one", ["boleto"]),
        skill("b-two", ["boleto", "pix"]),
        skill("a-one", ["pix"]),
        skill("d-three", ["boleto", "pix", "cartão"]),
    ]
    result = match_skills(skills, "boleto, pix ou cartão?")
    assert matched_names(result) == ["d-three", "b-two", "a-one", "c-one"]


def test_repeated_occurrences_of_one_keyword_count_once() -> None:
    skills = [skill("a", ["frete"]), skill("b", ["frete", "prazo"])]
    result = match_skills(skills, "frete frete frete frete, e o prazo?")
    assert matched_names(result) == ["b", "a"]


def test_keywords_equal_after_normalization_count_once() -> None:
    skills = [skill("a", ["preço", "PRECO", "preco"]), skill("b", ["preço", "frete"])]
    assert matched_names(match_skills(skills, "preço do frete")) == ["b", "a"]


def test_order_does_not_depend_on_input_order() -> None:
    skills = [skill(n, ["pix"]) for n in ["zeta", "alfa", "mu"]]
    forward = matched_names(match_skills(skills, "pix"))
    backward = matched_names(match_skills(list(reversed(skills)), "pix"))
    assert forward == backward == ["alfa", "mu", "zeta"]


def test_probes_sorted_by_name() -> None:
    skills = [skill(n, ["nunca"], ["entrega"]) for n in ["zeta", "alfa", "mu"]]
    assert match_skills(skills, "entrega").probes == ["alfa", "mu", "zeta"]


def test_max_matched_keeps_the_best_and_lists_the_rest_as_capped() -> None:
    skills = [skill("a", ["pix"]), skill("b", ["pix", "boleto"]), skill("c", ["pix"])]
    result = match_skills(skills, "pix ou boleto", max_matched=2)
    assert matched_names(result) == ["b", "a"]
    assert result.capped == ["c"]
    assert result.probes == []


def test_max_matched_none_keeps_all() -> None:
    skills = [skill(n, ["pix"]) for n in "abcde"]
    result = match_skills(skills, "pix", max_matched=None)
    assert matched_names(result) == list("abcde")
    assert result.capped == []


def test_max_matched_zero_injects_nothing() -> None:
    skills = [skill("a", ["pix"]), skill("b", ["pix"])]
    result = match_skills(skills, "pix", max_matched=0)
    assert result.matched == []
    assert result.capped == ["a", "b"]


def test_capped_skill_with_a_probe_hit_is_not_a_probe() -> None:
    skills = [skill("a", ["pix"], ["boleto"]), skill("b", ["pix"], ["boleto"])]
    result = match_skills(skills, "pix boleto", max_matched=1)
    assert result.capped == ["b"]
    assert result.probes == []


def test_negative_max_matched_is_refused() -> None:
    with pytest.raises(ValueError, match="max_matched"):
        match_skills([skill("a", ["pix"])], "pix", max_matched=-1)


def test_duplicate_names_use_the_first_occurrence() -> None:
    first = skill("frete", ["frete"])
    second = skill("frete", ["entrega"])
    assert match_skills([first, second], "entrega").matched == []
    assert match_skills([first, second], "frete").matched == [first]
    assert match_skills([second, first], "frete").matched == []


def test_duplicate_name_is_matched_once() -> None:
    first = skill("frete", ["frete"])
    result = match_skills([first, skill("frete", ["frete"])], "frete")
    assert result.matched == [first]


# --- caching never returns stale results -------------------------------------------------


def test_same_names_different_keywords_are_not_served_from_cache() -> None:
    assert matched_names(match_skills([skill("a", ["pix"])], "pix")) == ["a"]
    assert matched_names(match_skills([skill("a", ["boleto"])], "pix")) == []


def test_same_keywords_new_version_returns_the_new_skill_object() -> None:
    old = skill("a", ["pix"])
    new = skill("a", ["pix"])
    assert match_skills([old], "pix").matched[0] is old
    assert match_skills([new], "pix").matched[0] is new


def test_same_keywords_different_names_are_not_served_from_cache() -> None:
    assert matched_names(match_skills([skill("a", ["pix"])], "pix")) == ["a"]
    assert matched_names(match_skills([skill("b", ["pix"])], "pix")) == ["b"]


def test_match_accepts_a_tuple_of_skills() -> None:
    skills = (skill("a", ["pix"]), skill("b", ["boleto"]))
    assert matched_names(match_skills(skills, "boleto")) == ["b"]


# --- compiled matcher --------------------------------------------------------------------


def test_compiled_matcher_agrees_with_match_skills() -> None:
    skills = [
        skill("frete", ["frete", "entrega rápida"], ["prazo"]),
        skill("boleto", ["segunda via", "boleto"]),
        skill("pix", ["pix"], ["transferência"]),
    ]
    compiled = compile_matcher(skills)
    for text in ["frete", "segunda via do boleto", "transferencia e prazo", "nada", "pix"]:
        for cap in (None, 0, 1):
            assert compiled.match(text, max_matched=cap) == match_skills(
                skills, text, max_matched=cap
            )


def test_compiled_matcher_is_not_affected_by_later_changes_to_the_input_list() -> None:
    original = skill("a", ["pix"])
    skills = [original]
    compiled = compile_matcher(skills)
    skills[0] = skill("z", ["boleto"])
    skills.append(skill("b", ["pix"]))
    assert compiled.match("pix").matched == [original]


# --- one filler word inside phrases of 3+ words ------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "fora do meu orçamento",  # filler between the 2nd and 3rd word
        "fora mesmo do orçamento",  # between the 1st and 2nd
        "tá fora, do... meu orçamento!",  # separators around the filler do not matter
        "fora do 2o orçamento",  # a number is a word too
        "fora dos meus orçamentos",  # plurals and the filler together
    ],
)
def test_phrase_of_three_words_takes_one_filler_word(text: str) -> None:
    assert hits("fora do orçamento", text)


@pytest.mark.parametrize(
    "text",
    [
        "fora do meu próprio orçamento",  # two fillers in one place
        "fora meu do seu orçamento",  # one filler in each of two places
        "do fora orçamento",  # order
        "fora do",
        "orçamento fora do",
    ],
)
def test_phrase_of_three_words_takes_no_more_than_one_filler(text: str) -> None:
    assert not hits("fora do orçamento", text)


def test_the_filler_may_sit_in_any_gap_of_a_long_phrase() -> None:
    keyword = "um dois tres quatro cinco"
    words = keyword.split()
    for gap in range(1, len(words)):
        text = " ".join([*words[:gap], "extra", *words[gap:]])
        assert hits(keyword, text), text
    assert not hits(keyword, "um extra dois tres extra quatro cinco")


@pytest.mark.parametrize(
    ("keyword", "text"), [("segunda via", "segunda e via"), ("caro demais", "caro mesmo demais")]
)
def test_phrases_of_one_or_two_words_take_no_filler(keyword: str, text: str) -> None:
    assert not hits(keyword, text)


def test_filler_and_exact_occurrences_of_one_phrase_count_once() -> None:
    skills = [skill("a", ["fora do orçamento"]), skill("b", ["fora do orçamento", "pix"])]
    result = match_skills(skills, "fora do orçamento e fora do meu orçamento, no pix")
    assert matched_names(result) == ["b", "a"]


# --- long phrases and long texts ---------------------------------------------------------


def test_a_phrase_of_32_words_matches_and_one_of_33_never_does() -> None:
    assert MAX_PHRASE_WORDS == 32
    assert hits(" ".join(["a"] * 31 + ["b"]), "a " * 40 + "b")
    assert not hits(" ".join(["a"] * 32 + ["b"]), "a " * 40 + "b")


def test_only_the_first_8_kib_of_the_text_is_matched() -> None:
    assert MAX_MATCHED_TEXT_BYTES == 8 * 1024
    filler = "x" * (MAX_MATCHED_TEXT_BYTES - len(" frete"))
    assert hits("frete", filler + " frete")  # ends exactly at the cut
    assert not hits("frete", filler + " x frete")


def test_a_word_cut_at_8_kib_is_dropped_not_matched() -> None:
    head = "x" * (MAX_MATCHED_TEXT_BYTES - len(" preco"))
    assert not hits("preço", head + " precoce")  # "preco|ce": the cut word is dropped
    assert hits("preço", head + " preco!")  # a whole word right at the cut is kept


@pytest.mark.parametrize(
    "text",
    [
        "ã" * MAX_MATCHED_TEXT_BYTES,  # 2 bytes each: cut between characters
        "€ " * MAX_MATCHED_TEXT_BYTES,  # 3 bytes each
        "😀" * MAX_MATCHED_TEXT_BYTES,  # 4 bytes each
        "a\ud800b " * MAX_MATCHED_TEXT_BYTES,  # lone surrogates (JSON allows them)
        "e\u0301" * MAX_MATCHED_TEXT_BYTES,  # a combining mark continues the word
    ],
)
def test_matched_text_is_at_most_8_kib_of_whole_characters(text: str) -> None:
    kept = matched_text(text)
    assert text.startswith(kept)
    assert len(kept.encode("utf-8", "surrogatepass")) <= MAX_MATCHED_TEXT_BYTES


def test_matched_text_keeps_short_texts_whole() -> None:
    text = "ação " * 100
    assert matched_text(text) is text
    assert matched_text("x" * MAX_MATCHED_TEXT_BYTES) == "x" * MAX_MATCHED_TEXT_BYTES


# --- work, counted rather than timed -----------------------------------------------------


def test_work_is_bounded_by_the_words_read() -> None:
    skills = [
        skill("frete", ["frete", "frete grátis", "prazo de entrega"], ["entrega"]),
        skill("preco", ["fora do orçamento", "caro", "mais barato"]),
    ]
    compiled = compile_matcher(skills)
    text = "oi! o frete tá caro, fora do meu orçamento; qual o prazo da entrega? " * 50
    work = compiled.scan_work(text)
    assert work.words == 14 * 50  # nothing cut at this size
    assert work.hits == 4  # frete, caro, fora do orcamento (with a filler), entrega
    assert work.steps <= work.step_bound
    # Here at most 3 groups are ever live at once: a few steps per word, not per keyword.
    assert work.steps <= 3 * work.words


def test_steps_do_not_grow_with_keywords_that_never_occur() -> None:
    text = "quero saber o preço do frete para o meu cep " * 20
    few = compile_matcher([skill("a", ["frete"])]).scan_work(text)
    many_keywords = [f"palavra{i} frete" for i in range(5_000)]
    many = compile_matcher([skill("a", ["frete", *many_keywords])]).scan_work(text)
    assert many.steps == few.steps


def test_a_message_word_has_at_most_four_singulars() -> None:
    # The step bound counts on it (a message word starts the groups of at most 5 first words).
    assert max(len(singular_forms(w)) for w in _SAMPLE) == 4


def test_many_phrases_sharing_a_first_word_each_match_their_own_skill() -> None:
    # More than one automaton group (64 phrases each) for the first word "frete".
    skills = [skill(f"s{i:03d}", [f"frete {i}"]) for i in range(200)]
    assert matched_names(match_skills(skills, "o frete 150, por favor")) == ["s150"]
    assert matched_names(match_skills(skills, "fretes 7 e 199")) == ["s007"]


# --- abbreviations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("tá salgado", "ta salgado"),
        ("tá salgado", "está salgado"),
        ("tá salgado", "TAH SALGADO"),
        ("está caro", "tá caro"),
        ("muito puxado", "mto puxado"),
        ("muito puxado", "mt puxado"),
        ("você faz", "vc faz"),
        ("vocês fazem", "vcs fazem"),
        ("que eu fecho", "q eu fecho"),
        ("porque", "pq?"),
        ("também", "tb"),
        ("tô sem grana", "to sem grana"),
        ("para hoje", "pra hj"),
        ("não dá", "n da"),
        ("tem vaga hoje", "tem vg hj?"),
        ("vc faz", "você faz"),  # the keyword side is read the same way
    ],
)
def test_abbreviations_read_as_the_word_they_stand_for(keyword: str, text: str) -> None:
    assert hits(keyword, text)


@pytest.mark.parametrize(
    ("keyword", "text"),
    [("vc", "vca"), ("ta", "tatu"), ("pra", "praia"), ("muito", "mtos"), ("q", "qq")],
)
def test_abbreviations_are_whole_words_only(keyword: str, text: str) -> None:
    assert not hits(keyword, text)


def test_abbreviations_expand_to_one_normalized_word_each() -> None:
    # One word for one word keeps phrase lengths (and the filler rule) unchanged.
    for short, full in ABBREVIATIONS.items():
        assert words_of(short) == [full]
        assert words_of(full) == [full]  # never chained
