"""The opt-out words: only the word itself, accents, case and punctuation ignored, bounded."""

from __future__ import annotations

import pytest

from conversation.opt_out import DEFAULT_OPT_WORDS, MAX_CHOICE_CHARS, OptWords, normalized


@pytest.mark.parametrize(
    "text",
    [
        "PARAR",
        "parar",
        "Parar!!",
        " STOP ",
        "stop.",
        "Parar mensagens",
        "PARAR  MENSAGENS!",
        "sair da lista",
        "Sair da lista.",
        "párar 🙏",
        "*PARAR*",
    ],
)
def test_the_opt_out_words_opt_out(text: str) -> None:
    assert DEFAULT_OPT_WORDS.choice_of(text) == "out"


@pytest.mark.parametrize("text", ["VOLTAR", "voltar!", " Voltar. "])
def test_voltar_opts_back_in(text: str) -> None:
    assert DEFAULT_OPT_WORDS.choice_of(text) == "in"


@pytest.mark.parametrize(
    "text",
    [
        "SAIR",
        "sair",
        "CANCELAR",
        "cancelar o pedido?",
        "parar de receber o quê?",
        "quero parar o pedido",
        "pararam de responder",
        "stop motion",
        "voltar amanhã",
        "",
        "   ",
        "PARAR" + " " * MAX_CHOICE_CHARS,
    ],
)
def test_anything_else_is_an_ordinary_message(text: str) -> None:
    assert DEFAULT_OPT_WORDS.choice_of(text) is None


def test_a_huge_message_is_not_read() -> None:
    assert DEFAULT_OPT_WORDS.choice_of("PARAR" + "!" * 10_000_000) is None


def test_the_words_are_a_setting_and_may_not_overlap() -> None:
    words = OptWords.of(["Descadastrar", "NÃO QUERO MAIS"], ["Quero de volta"])
    assert words.choice_of("nao quero mais!") == "out"
    assert words.choice_of("PARAR") is None
    assert words.choice_of("quero de volta") == "in"
    with pytest.raises(ValueError, match="both"):
        OptWords.of(["parar"], ["PARAR!"])


def test_normalized() -> None:
    assert normalized("  Ação, já!! ") == "acao ja"
