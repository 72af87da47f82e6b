"""What small shops' customers ask about, as words that stand for one another. Pure data.

Customers ask one thing in many words ("abre sábado?", "qual o horário de funcionamento?",
"até que horas fica aberto?"); the lexical backend (suggestions.similarity) reads each
question's words and, beside them, the concept a word belongs to here, so such questions
meet. Written from the vocabulary of Brazilian small businesses' WhatsApp (payments, hours,
delivery, exchanges, location, stock, orders, scheduling, warranty, tracking, cancellation,
invoices, parking, menu, jobs, wholesale, discounts, dietary needs, pickup, health plans,
pets); a word that names two things (vaga: a job, a parking space, a free slot) is in none.
A word's folded form is looked up, and its stem (suggestions.stemmer), so inflections count.
bench/suggestions.py reports the grouping with and without it.
"""

from __future__ import annotations

from types import MappingProxyType

from suggestions.stemmer import stem

_CONCEPTS = {
    "pix": "pix chave transferencia transferir transfiro comprovante",
    "card": "cartao cartoes credito debito parcela parcelar parcelado parcelamento juros "
    "maquininha maquina bandeira elo visa mastercard",
    "hours": "horario horarios abre abrem abrir aberto aberta abertos fecha fecham fechar "
    "fechado funciona funcionam funcionamento expediente feriado almoco",
    "delivery": "entrega entregar entregam entregas frete delivery motoboy taxa",
    "lead_time": "prazo chega chegar chegue demora demorar despacha despachar despacho postar "
    "postagem uteis",
    "exchange": "troca trocar troco devolver devolucao devolvem etiqueta",
    "location": "endereco localizacao onde fica ficam referencia metro onibus mapa perto",
    "stock": "estoque tamanho tamanhos numeracao disponivel disponibilidade repoe repor "
    "reposicao esgotou esgotado cor cores modelo",
    "cake": "bolo bolos torta doces docinhos salgados recheio recheios sabor sabores kg "
    "aniversario casamento festa",
    "schedule": "agendar agenda agendamento marcar marcacao remarcar desmarcar encaixar encaixe",
    "grooming": "banho tosa tosar unha",
    "warranty": "garantia defeito conserto assistencia",
    "tracking": "rastreio rastrear rastreamento rastreio codigo correio correios transito "
    "enviado recebi chegou",
    "cancel": "cancelar cancelamento cancelei desistir estorno reembolso",
    "invoice": "nota fiscal nf nfe",
    "parking": "estacionamento estacionar estaciono manobrista carro",
    "menu": "cardapio menu prato pratos marmita comida pizza lanche sobremesa sobremesas",
    "job": "emprego curriculo contratando contratar trabalhar trabalho",
    "wholesale": "atacado revenda revender revendedor revendedora lojista quantidade fornecem",
    "discount": "desconto descontos cupom promocao promocional promocoes",
    "diet": "gluten lactose alergia alergico alergica celiaco celiaca vegano vegana "
    "vegetariano vegetariana diabetico acucar ingrediente ingredientes",
    "pickup": "retirar retirada retiro buscar balcao",
    "health_plan": "convenio convenios plano saude unimed amil bradesco sulamerica sus "
    "particular consulta",
    "pet": "pet animal animais estimacao",
}

CONCEPT_OF = MappingProxyType(
    {
        form: concept
        for concept, words in _CONCEPTS.items()
        for w in words.split()
        for form in (w, stem(w))
    }
)


def concept_of(word: str) -> str | None:
    """The concept of a folded word (or of its stem), if any."""
    return CONCEPT_OF.get(word) or CONCEPT_OF.get(stem(word))
