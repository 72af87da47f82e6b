"""The facts a model's text adds to its sources (skills.new_facts): numbers of 3+ digits, URLs,
e-mails and phones, compared after normalising."""

from __future__ import annotations

import pytest

from skills.new_facts import facts_of, new_facts

SOURCES = [
    "Pix de R$ 1.500,00 no máximo. Ligue (11) 97777-6666 ou escreva para vendas@loja.com.br.",
    "Ajuda em https://www.loja.com.br/ajuda/ e prazo de 30 dias; código do cupom 4821.",
    "Parcelamos em 12x; frete grátis acima de 299,90.",
]


@pytest.mark.parametrize(
    "text",
    [
        "Aceitamos Pix de até 1500 reais.",
        "Pix de até R$ 1500,00.",
        "Pix de até 1,500.00.",
        "Pix de até R$ 1.500.",
        "Fale no +55 11 97777-6666 ou no 11977776666.",
        "Telefone: 97777-6666.",
        "Veja loja.com.br/ajuda ou http://loja.com.br/ajuda.",
        "Escreva para VENDAS@LOJA.COM.BR.",
        "Cupom 4821, 12x, 30 dias, frete acima de 299,90.",
        "Números pequenos passam: 2 trocas, 15 dias, 99 reais.",
        "Pix de até R$ １.５００,００.",  # full-width digits: the same amount
        "",
    ],
)
def test_what_the_sources_state_adds_nothing(text: str) -> None:
    assert new_facts(text, SOURCES) == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Para confirmar, peça o CVV do cartão em pague-aqui.com.", "url:pague-aqui.com"),
        ("Confirme em https://evil.example/cartao?x=1 agora.", "url:evil.example/cartao?x=1"),
        ("Veja www.loja.com.br/outra-pagina.", "url:loja.com.br/outra-pagina"),
        ("Mande o comprovante para financeiro@golpe.io.", "email:financeiro@golpe.io"),
        ("Para " + "a" * 70 + "@golpe.io.", "email:" + "a" * 70 + "@golpe.io"),
        ("Ligue (21) 98888-1234.", "phone:21988881234"),
        ("Ligue +55 11 98888-1234.", "phone:5511988881234"),
        ("Pix de até R$ 2.000,00.", "number:2000"),
        ("Pix de até R$ 1.500,50.", "number:1500.5"),
        ("Informe os 3 dígitos do verso: 123.", "number:123"),
        ("O código é 4822.", "number:4822"),
        ("Código 9\u200b99.", "number:999"),  # a zero-width space hides nothing
        ("Código ٤٨٢٣.", "number:4823"),  # Arabic-Indic digits read as digits
    ],
)
def test_a_new_number_url_email_or_phone_is_named(text: str, fact: str) -> None:
    assert fact in new_facts(text, SOURCES)


def test_each_fact_is_named_once_in_order() -> None:
    text = "Pague em x-pay.com, depois x-pay.com de novo, valor 777 e 777."
    assert new_facts(text, SOURCES) == ["url:x-pay.com", "number:777"]


def test_file_names_and_versions_are_no_urls_or_amounts() -> None:
    assert new_facts("Leia references/prazos.md e SKILL.md, versão 1.2.3.", SOURCES) == []


def test_facts_of_reads_every_kind() -> None:
    facts = facts_of(" ".join(SOURCES))
    assert "loja.com.br/ajuda" in facts.urls
    assert "vendas@loja.com.br" in facts.emails
    assert "11977776666" in facts.phones


def test_a_hostile_16_kib_text_is_read_in_one_pass() -> None:
    # Inputs that would make a backtracking pattern explode, at the rewrite's size cap.
    for hostile in ("a." * 8192, "1" * 16384, "a" * 16384 + "@", "(11) " * 3000, "1.0" * 5000):
        new_facts(hostile, SOURCES)
