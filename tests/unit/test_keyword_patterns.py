"""Unit tests of the keyword word patterns (stems, the number, alternatives) and of stretched
letters and misspellings, each rule as its own case (rules in turn.matcher.match's docstring)."""

from __future__ import annotations

import uuid

import pytest

from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import (
    ABBREVIATIONS,
    MAX_STEM_CHARS,
    MIN_STEM_CHARS,
    compile_matcher,
    keyword_form_error,
    keyword_phrase,
    keyword_sides,
    match_skills,
    words_of,
)


def hits(keyword: str, text: str) -> bool:
    skill = LoadedSkill(
        name="s",
        description="d",
        body="b",
        matcher=SkillMatcher(any_keywords=[keyword]),
        version_id=uuid.uuid4(),
    )
    return [s.name for s in match_skills([skill], text).matched] == ["s"]


# --- stems ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["quero agendar", "AGENDAMENTO", "agendei ontem", "tá agendado?", "agend"]
)
def test_a_stem_matches_every_word_it_begins(text: str) -> None:
    assert hits("agend*", text)


@pytest.mark.parametrize("text", ["reagendar", "a agen da", "agen", "ag end"])
def test_a_stem_matches_only_at_the_start_of_a_whole_word(text: str) -> None:
    assert not hits("agend*", text)


def test_a_stem_inside_a_phrase_and_with_a_filler() -> None:
    assert hits("quero remarc* consulta", "quero remarcar a consulta")
    assert hits("tem vag*", "tem vagas amanhã?")
    assert not hits("tem vag*", "tem uma vaga")  # two words take no filler


def test_a_stem_is_normalized_but_not_read_as_an_abbreviation() -> None:
    assert keyword_phrase("Orçam*") == ("orcam*",)
    assert keyword_phrase("muitooo*") == ("muito*",)
    assert keyword_phrase("mto*") == ("mto*",)  # "mto" alone is read as "muito"
    assert hits("mto*", "mtos") and not hits("mto*", "muitos")


def test_stems_shorter_or_longer_than_the_limits_are_plain_words() -> None:
    assert (MIN_STEM_CHARS, MAX_STEM_CHARS) == (3, 16)
    assert keyword_phrase("ab*") == ("ab",)
    assert not hits("ab*", "abacaxi") and hits("ab*", "ab")
    assert keyword_phrase("abc*") == ("abc*",)
    longest = "a" + "bc" * 8  # 17 letters
    assert keyword_phrase(longest[:16] + "*") == (longest[:16] + "*",)
    assert keyword_phrase(longest + "*") == (longest,)


# --- the number ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["às 8", "as 10h", "às 9h30 pode?", "as 2ª", "as 1.899"])
def test_the_number_matches_a_word_that_begins_with_a_digit(text: str) -> None:
    assert hits("às #", text)


@pytest.mark.parametrize("text", ["às oito", "as h10", "as", "as x 10"])
def test_the_number_matches_no_other_word(text: str) -> None:
    assert not hits("às #", text)


# --- alternatives ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["tem vaga?", "tem horário", "tem HORARIOS", "tem encaixe", "tem encaixes"]
)
def test_alternatives_match_any_of_their_words_with_plurals(text: str) -> None:
    assert hits("tem vaga|horário|encaix*", text)


def test_alternatives_hold_one_position_of_the_phrase() -> None:
    assert hits("sexta|sabado|# às #", "pode ser sábado às 10h?")
    assert hits("sexta|sabado|# às #", "dia 12 às 9")
    assert hits("sexta|sabado às #", "sexta sabado às 9")  # "sabado às 9"
    assert not hits("sexta|sabado às #", "domingo às 10")


def test_alternatives_read_abbreviations_and_are_sorted_and_deduplicated() -> None:
    assert keyword_phrase("vc|você|Tb") == ("tambem|voce",)
    assert hits("vc|tb faz", "você faz")


@pytest.mark.parametrize(
    ("keyword", "phrase"),
    [
        ("c#", ("c",)),
        ("a*b", ("a", "b")),
        ("a||b", ("a", "b")),
        ("|frete|", ("frete",)),
        ("*", ()),
        ("#5", ("5",)),
    ],
)
def test_marks_that_make_no_pattern_leave_plain_words(keyword: str, phrase: tuple[str]) -> None:
    assert keyword_phrase(keyword) == phrase


def test_one_phrase_under_many_first_alternatives_is_one_hit() -> None:
    skill = LoadedSkill(
        name="s",
        description="d",
        body="b",
        matcher=SkillMatcher(any_keywords=["segunda|terca|quarta as #"]),
        version_id=uuid.uuid4(),
    )
    work = compile_matcher([skill]).scan_work("segunda as 9, terça as 10, quarta as 11")
    assert work.hits == 1


# --- stretched letters and misspellings ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("muitooo caroooo", ["muito", "caro"]),
        ("siiiim", ["sim"]),
        ("kkkkkk", ["k"]),
        ("carro", ["carro"]),  # doubled letters are spelling
        ("1000", ["1000"]),  # digits are never cut
        ("naummm", ["nao"]),  # unstretched, then read as an abbreviation
    ],
)
def test_a_letter_written_three_times_or_more_is_written_once(text: str, words: list[str]) -> None:
    assert words_of(text) == words


@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("caro", "ta mto kro"),
        ("quero marcar", "kero marcar"),
        ("quero marcar", "qro marcar"),
        ("queria agendar", "qria agendar"),
        ("tem horário", "tem orario"),
        ("deixa por", "dexa por"),
        ("caro demais", "carooo demaisss"),
    ],
)
def test_misspellings_and_stretched_words_read_as_the_word(keyword: str, text: str) -> None:
    assert hits(keyword, text)


def test_every_abbreviation_is_a_fixed_point_of_its_own_reading() -> None:
    for full in ABBREVIATIONS.values():
        assert words_of(full) == [full]


# --- co-occurrence -------------------------------------------------------------------------

SCHEDULE = "consulta|horario|agend* + amanha|sexta|#"


@pytest.mark.parametrize(
    "text",
    [
        "dá pra agendar pra sexta?",
        "sexta tem horário?",  # either order
        "amanhã às 10h, consulta",
        "queria agendar... 9h30 pode ser?",
        "AGENDAMENTO amanha",
    ],
)
def test_co_occurrence_matches_when_both_sides_occur(text: str) -> None:
    assert hits(SCHEDULE, text)


@pytest.mark.parametrize(
    "text", ["chega sexta?", "quero agendar", "custa 150", "consultar o pedido amanha"]
)
def test_co_occurrence_needs_both_sides(text: str) -> None:
    # "consultar" is not "consulta": a side is a phrase with the usual whole-word rules.
    assert not hits(SCHEDULE, text)


def test_each_side_is_a_phrase_with_its_own_filler_word() -> None:
    keyword = "quero marcar uma + amanha"
    assert hits(keyword, "amanhã quero marcar mais uma")  # the side's one filler word
    assert not hits(keyword, "quero uma marcar amanhã")
    assert hits("segunda via + boleto", "boleto: manda a segunda-via")
    assert not hits("segunda via + boleto", "segunda e via do boleto")


def test_sides_are_normalized_sorted_and_one_side_twice_is_that_side() -> None:
    assert keyword_sides("Agend* + AMANHÃ") == (("agend*",), ("amanha",))
    assert keyword_sides("a + a") == (("a",), ("a",))
    skill = LoadedSkill(
        name="s",
        description="d",
        body="b",
        matcher=SkillMatcher(any_keywords=["a + b", "b + a", "b+a"]),
        version_id=uuid.uuid4(),
    )
    # "b + a" is "a + b"; "b+a" is the plain phrase "b a" (no lone "+"): two distinct hits.
    assert compile_matcher([skill]).scan_work("b a").hits == 2
    assert hits("a + a", "a")


@pytest.mark.parametrize("keyword", ["a +", "+ b", "+", "a + b + c", " + ", "!! + b", "a + ..."])
def test_a_malformed_co_occurrence_never_matches(keyword: str) -> None:
    assert keyword_sides(keyword) == ()
    assert not hits(keyword, "a b c !! ...")


@pytest.mark.parametrize(
    ("keyword", "refused"),
    [("a +", True), ("+ b", True), ("+", True), ("a + b + c", True), ("a + b", False)],
)
def test_the_form_error_names_the_mark(keyword: str, refused: bool) -> None:
    error = keyword_form_error(keyword)
    assert (error is not None) == refused
    assert error is None or "+" in error


@pytest.mark.parametrize(("keyword", "phrase"), [("c++", ("c",)), ("1+1", ("1", "1"))])
def test_a_plus_inside_a_word_run_is_a_separator_as_before(
    keyword: str, phrase: tuple[str, ...]
) -> None:
    assert keyword_sides(keyword) == (phrase,)
