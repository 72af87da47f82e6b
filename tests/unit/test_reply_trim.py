"""Trimming a reply cut by the output cap to its last full sentence (pure, on a table)."""

from __future__ import annotations

import pytest

from turn.model import ModelResponse, ToolCall
from turn.reply_trim import trim_to_sentence, trims_reply

CASES = [
    (
        "cut mid-sentence",
        "Claro! O boleto vence amanhã. Para pagar, use o",
        "Claro! O boleto vence amanhã.",
    ),
    ("question mark", "Você já tem cadastro? Se não tiver, pode", "Você já tem cadastro?"),
    ("exclamation with emoji", "Obrigado! 😊 Qualquer dúvida, é só", "Obrigado! 😊"),
    (
        "closing quote and bold",
        'Digite "sim." Depois *confirme.* E en',
        'Digite "sim." Depois *confirme.*',
    ),
    ("ellipsis", "Deixa eu ver… Encontrei duas op", "Deixa eu ver…"),
    ("three dots", "Um momento... O sistema est", "Um momento..."),
    ("Sr. is not an end", "Bom dia, Sr. Silva. O seu pedido Nº. 12 est", "Bom dia, Sr. Silva."),
    ("Dra. is not an end", "A Dra. Ana atende às 14h. Ela pede que", "A Dra. Ana atende às 14h."),
    ("money is not an end", "O total é R$ 1.200,00. O desconto de R$ 1.", "O total é R$ 1.200,00."),
    ("decimal is not an end", "A taxa é 2.5 ao mês e o prazo", "A taxa é 2.5 ao mês e o…"),
    (
        "etc. before lowercase",
        "Aceitamos pix, boleto etc. e também cart",
        "Aceitamos pix, boleto etc. e também…",
    ),
    (
        "etc. before capital",
        "Aceitamos pix, boleto etc. Parcelamos em at",
        "Aceitamos pix, boleto etc.",
    ),
    ("initial is not an end", "Fale com J. Souza. Ele resolve o", "Fale com J. Souza."),
    ("Av. is not an end", "Fica na Av. Paulista, 1000. Abrimos às", "Fica na Av. Paulista, 1000."),
    ("list item line", "Opções:\n1. Boleto\n2. Pix\n3. Car", "Opções:\n1. Boleto\n2. Pix"),
    ("list number is not an end", "1. Boleto com vencimen", "1. Boleto com…"),
    ("paragraph break", "Olá, tudo bem\n\nO seu pedido sai hoje e cheg", "Olá, tudo bem"),
    ("no end: cut at a space", "Para emitir a segunda via do bol", "Para emitir a segunda via do…"),
    (
        "no end: trailing comma dropped",
        "Primeiro, acesse o site, depois",
        "Primeiro, acesse o site…",
    ),
    ("one long word", "Supercalifragilístico", "Supercalifragilístico…"),
    ("already whole", "Pronto, enviei o link.", "Pronto, enviei o link."),
    ("already whole with spaces", "Pronto!  ", "Pronto!"),
    ("ends in abbreviation", "Pode falar com o Sr.", "Pode falar com o…"),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_trim_to_sentence(name: str, text: str, expected: str) -> None:
    assert trim_to_sentence(text) == expected


def test_only_text_answers_cut_by_the_cap_are_trimmed() -> None:
    cut = ModelResponse(text="Olá, o pra", truncated=True)
    assert trims_reply(cut)
    assert not trims_reply(ModelResponse(text="Olá, o pra"))
    assert not trims_reply(ModelResponse(text="  ", truncated=True))
    call = ToolCall("c", "skill_view", {})
    assert not trims_reply(ModelResponse(text="Vou ver", tool_calls=(call,), truncated=True))
