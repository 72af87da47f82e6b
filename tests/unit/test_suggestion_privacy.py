"""suggestions.privacy on tables of realistic messages: what is somebody's data in a
question, what of an answer is the business's own fact (kept) and what is one customer's
(removed), echoed sentences, and hostile inputs bounded."""

from __future__ import annotations

import pytest

from suggestions.privacy import (
    MAX_TEXT_CHARS,
    REMOVED,
    AnswerText,
    Kind,
    drop_echoed_sentences,
    find_values,
    names_in,
    profile_names,
    redact_answers,
    redact_question,
    value_key,
)

PIX_CODE = (
    "00020126580014BR.GOV.BCB.PIX0136123e4567-e12b-12d1-a456-426655440000520400005303986"
    "5802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
)

QUESTIONS = [
    # (customer's message, what redaction leaves, kinds removed)
    ("vocês aceitam pix?", "vocês aceitam pix?", []),
    (
        "meu cpf é 123.456.789-09, cadê meu pedido?",
        f"meu cpf é {REMOVED}, cadê meu pedido?",
        [Kind.CPF_CNPJ],
    ),
    ("o cnpj da empresa é 12.345.678/0001-90", f"o cnpj da empresa é {REMOVED}", [Kind.CPF_CNPJ]),
    ("cpf 12345678909 pfv", f"cpf {REMOVED} pfv", [Kind.CPF_CNPJ]),
    ("me liga no (11) 98765-4321", f"me liga no {REMOVED}", [Kind.PHONE]),
    ("meu zap +55 11 98765 4321 obg", f"meu zap {REMOVED} obg", [Kind.PHONE]),
    ("manda pra joana.silva@gmail.com", f"manda pra {REMOVED}", [Kind.EMAIL]),
    ("o pedido 458812 não chegou", f"o pedido {REMOVED} não chegou", [Kind.NUMBER]),
    ("rastreio BR123456789BR tá parado", f"rastreio BR{REMOVED}BR tá parado", [Kind.NUMBER]),
    ("meu cep é 01310-100", f"meu cep é {REMOVED}", [Kind.NUMBER]),
    ("custa 150 reais?", "custa 150 reais?", []),
    ("entregam às 10h30?", "entregam às 10h30?", []),
    (f"já paguei: {PIX_CODE} confere?", f"já paguei: {REMOVED} confere?", [Kind.PIX_CODE]),
    ("vi aqui https://loja.com/produto?id=55&ref=zap", f"vi aqui {REMOVED}", [Kind.URL]),
    ("o site é https://loja.com/produtos", "o site é https://loja.com/produtos", []),
    ("moro na Rua das Flores, 120 apto 3", f"moro na {REMOVED} apto 3", [Kind.ADDRESS]),
    ("entrega na av. Paulista 1578?", f"entrega na {REMOVED}?", [Kind.ADDRESS]),
    (
        "oi meu nome é Joana, quero saber do pix",
        f"oi meu nome é {REMOVED}, quero saber do pix",
        [Kind.NAME],
    ),
    ("me chamo carlos alberto", f"me chamo {REMOVED} alberto", [Kind.NAME]),
    ("aqui é a Fernanda Lima da padaria", f"aqui é a {REMOVED} da padaria", [Kind.NAME]),
    ("aqui é do centro", "aqui é do centro", []),
]


@pytest.mark.parametrize(("text", "expected", "kinds"), QUESTIONS)
def test_a_question_loses_every_value_of_its_customer(
    text: str, expected: str, kinds: list[Kind]
) -> None:
    redacted, found = redact_question(text)
    assert redacted == expected
    assert [f.kind for f in found] == kinds


def test_the_profile_name_is_removed_wherever_it_stands() -> None:
    redacted, _ = redact_question("Oi, a Mariana aqui de novo. mariana quer pix", ["Mariana"])
    assert redacted == f"Oi, a {REMOVED} aqui de novo. {REMOVED} quer pix"
    assert names_in("meu nome é Beatriz Souza") == ["Beatriz Souza"]


def test_keys_compare_values_however_they_are_written() -> None:
    assert value_key(Kind.PHONE, "+55 (11) 98765-4321") == value_key(Kind.PHONE, "11987654321")
    assert value_key(Kind.CPF_CNPJ, "12.345.678/0001-90") == value_key(
        Kind.CPF_CNPJ, "12345678000190"
    )
    assert value_key(Kind.EMAIL, "Loja@Exemplo.com") == value_key(Kind.EMAIL, "loja@exemplo.com")


KEY = "a chave pix é loja@exemplo.com"


def _answers(*pairs: tuple[str, str]) -> list[AnswerText]:
    return [AnswerText(customer, text) for customer, text in pairs]


def test_a_value_in_answers_to_two_customers_is_the_business_and_stays() -> None:
    result = redact_answers(
        _answers(("c1", f"Aceitamos, {KEY}"), ("c2", f"Pode sim, {KEY}!")),
        ["aceita pix?", "tem pix?"],
    )
    assert result.texts == [f"Aceitamos, {KEY}", f"Pode sim, {KEY}!"]
    assert [k.value for k in result.kept] == ["loja@exemplo.com"] and result.removed == []


def test_a_value_one_customer_got_is_removed_even_twice() -> None:
    result = redact_answers(
        _answers(("c1", "Seu pedido 889123 saiu."), ("c1", "O 889123 chega amanhã.")),
        ["cadê meu pedido?"],
    )
    assert result.texts == [f"Seu pedido {REMOVED} saiu.", f"O {REMOVED} chega amanhã."]
    assert [r.kind for r in result.removed] == [Kind.NUMBER]


def test_a_value_a_customer_wrote_never_stays_whoever_it_was_sent_to() -> None:
    # The person repeats to two customers the phone one of them sent: still the customer's.
    result = redact_answers(
        _answers(("c1", "Te ligo no 11 98765-4321"), ("c2", "Liguei pro 11 98765-4321")),
        ["meu número é (11) 98765-4321"],
    )
    assert all(REMOVED in t for t in result.texts) and result.kept == []


def test_a_customers_name_in_a_greeting_is_removed_and_the_owners_own_kept() -> None:
    result = redact_answers(
        _answers(
            ("c1", "Oi Joana, aqui é a Ana, dona da loja. Aceitamos pix."),
            ("c2", "Olá! Aqui é a Ana, dona da loja. Pode pagar no pix."),
        ),
        ["meu nome é Joana, aceita pix?", "aceita pix?"],
        names=["Joana"],
    )
    assert result.texts[0] == f"Oi {REMOVED}, aqui é a Ana, dona da loja. Aceitamos pix."
    assert [k.value for k in result.kept] == ["Ana"]


def test_a_reviewer_restores_a_removed_value() -> None:
    answers = _answers(("c1", "Nosso telefone fixo é 11 3333-4444."))
    removed = redact_answers(answers, ["tem telefone?"])
    assert removed.texts == [f"Nosso telefone fixo é {REMOVED}."]
    [value] = removed.removed
    restored = redact_answers(answers, ["tem telefone?"], allowed=[value.key])
    assert restored.texts == ["Nosso telefone fixo é 11 3333-4444."]


def test_a_sentence_echoing_five_words_of_a_customer_is_left_out() -> None:
    customer = "quero trocar o tênis azul tamanho 40 que comprei semana passada"
    answer = (
        "Claro! Você quer trocar o tênis azul tamanho 40, certo? "
        "A troca é grátis em até 30 dias. Traga a nota."
    )
    assert drop_echoed_sentences(answer, [customer]) == (
        "Claro! A troca é grátis em até 30 dias. Traga a nota."
    )
    assert drop_echoed_sentences("Pode trocar o tênis sim.", [customer]) == (
        "Pode trocar o tênis sim."
    )


HOSTILE = [
    "000201" * 20_000,
    "rua " * 30_000,
    "a@" * 50_000,
    "https://x.com/?" + "a" * 100_000,
    "1." * 60_000,
    "(11) " * 30_000,
    "meu nome é " * 12_000,
    "Oi " * 40_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:12]))
def test_hostile_texts_are_read_only_to_their_cut(text: str) -> None:
    redacted, found = redact_question(text)
    assert len(redacted) <= MAX_TEXT_CHARS + len(REMOVED) * len(found)
    assert all(f.end <= MAX_TEXT_CHARS for f in found)
    result = redact_answers(_answers(("c1", text), ("c2", text)), [text])
    assert all(len(t) <= MAX_TEXT_CHARS + len(REMOVED) * MAX_TEXT_CHARS for t in result.texts)
    assert len(drop_echoed_sentences(text, [text])) <= MAX_TEXT_CHARS


def test_a_value_past_the_cut_is_not_read() -> None:
    text = "x" * MAX_TEXT_CHARS + " 123.456.789-09"
    assert find_values(text) == []


BUSINESS_FACTS = [
    # (a fact of the business the team writes to two customers, its kind)
    ("Estamos na Rua Augusta, 1500, perto do metrô.", Kind.ADDRESS),
    ("Nosso WhatsApp de vendas é (11) 3222-4444.", Kind.PHONE),
    ("Manda o comprovante pra vendas@loja.com.br", Kind.EMAIL),
    (f"O pix copia e cola da loja é {PIX_CODE}", Kind.PIX_CODE),
    ("Catálogo: https://loja.com.br/catalogo?utm=zap", Kind.URL),
    ("O CNPJ da loja é 12.345.678/0001-90.", Kind.CPF_CNPJ),
]


@pytest.mark.parametrize(("fact", "kind"), BUSINESS_FACTS)
def test_a_business_fact_written_to_two_customers_stays_and_to_one_goes(
    fact: str, kind: Kind
) -> None:
    two = redact_answers(_answers(("c1", fact), ("c2", fact)), ["oi?", "tem?"])
    assert two.texts == [fact, fact] and [k.kind for k in two.kept] == [kind]
    one = redact_answers(_answers(("c1", fact), ("c1", fact)), ["oi?"])
    assert all(REMOVED in t for t in one.texts) and [r.kind for r in one.removed] == [kind]
    # ...and goes whenever a customer wrote that same value.
    theirs = redact_answers(_answers(("c1", fact), ("c2", fact)), [fact])
    assert theirs.kept == [] and all(REMOVED in t for t in theirs.texts)


def test_a_profile_name_stands_for_its_whole_and_its_first_name() -> None:
    assert profile_names("Ana Souza") == ["Ana Souza", "Ana"]
    assert profile_names("👩\u200d💻 Carla Dias 🌸") == ["Carla Dias", "Carla"]
    assert profile_names("Zé") == ["Zé"]
    assert profile_names("12345 ***") == [] and profile_names(None) == []
    assert profile_names("x" * 10_000) == []  # no word of 2 to 40 letters: nothing
    redacted, found = redact_question(
        "oi, aqui é a ana, a Ana Souza do pedido. Ana quer pagar no pix",
        profile_names("Ana Souza"),
    )
    assert redacted == f"oi, aqui é a {REMOVED}, a {REMOVED} do pedido. {REMOVED} quer pagar no pix"
    assert {f.kind for f in found} == {Kind.NAME}


def test_a_profile_name_in_answers_to_two_customers_is_still_removed() -> None:
    # Both customers are answered with Carla's name (one of them is Carla): the rule that keeps
    # a value two customers got never keeps a customer's profile name.
    result = redact_answers(
        _answers(
            ("c1", "Carla Dias, o pix é loja@exemplo.com"),
            ("c2", "Como falei pra Carla Dias: o pix é loja@exemplo.com"),
        ),
        ["aceita pix?", "tem pix?"],
        names=profile_names("Carla Dias"),
    )
    assert all("Carla" not in t for t in result.texts)
    assert [r.kind for r in result.removed] == [Kind.NAME]
    assert [k.value for k in result.kept] == ["loja@exemplo.com"]
