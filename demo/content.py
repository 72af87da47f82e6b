"""The demo org's three pt-BR skills and the WhatsApp messages the demo sends."""

from __future__ import annotations

from skills.models import FileKind, SkillMatcher
from skills.publisher import SkillDraft, SkillFile

DEMO_PERSONA = (
    "Você é a Bia, assistente virtual da Loja Exemplo no WhatsApp. "
    "Responda em português do Brasil, de forma curta e cordial."
)

PRAZOS_MD = """Boletos podem ser reemitidos até 30 dias após o vencimento, sem custo.
Depois disso, a segunda via sai com multa de 2% e juros de 1% ao mês.
O código de barras novo vale por 3 dias úteis.
"""

DEMO_SKILLS: tuple[SkillDraft, ...] = (
    SkillDraft(
        name="segunda-via-boleto",
        description="Como emitir a segunda via de um boleto e quais são os prazos e multas.",
        body=(
            "Claro! Envio a segunda via do boleto pelo link seguro em até 5 minutos.\n"
            "Confirme o CPF do titular antes de enviar.\n"
            "Prazos e multas: consulte references/prazos.md.\n"
        ),
        matcher=SkillMatcher(any_keywords=["segunda via", "boleto"], probe_keywords=["pagamento"]),
        files=(SkillFile("references/prazos.md", PRAZOS_MD.encode(), FileKind.REFERENCE),),
    ),
    SkillDraft(
        name="frete-e-entrega",
        description="Prazos de entrega e valor do frete por CEP.",
        body=(
            "O frete é grátis acima de R$ 199; abaixo disso, calculo pelo CEP.\n"
            "Entregas para capitais levam de 2 a 4 dias úteis.\n"
        ),
        matcher=SkillMatcher(any_keywords=["frete", "entrega", "cep"], probe_keywords=["rastreio"]),
    ),
    SkillDraft(
        name="orcamento",
        description="Como montar um orçamento e as condições de pagamento.",
        body=(
            "Posso montar seu orçamento agora: me diga os produtos e as quantidades.\n"
            "À vista no Pix há 5% de desconto.\n"
        ),
        matcher=SkillMatcher(any_keywords=["orçamento", "preço"], probe_keywords=["desconto"]),
    ),
)

# (message id, customer's wa_id, text, what it shows)
DEMO_MESSAGES: tuple[tuple[str, str, str, str], ...] = (
    (
        "wamid.demo-1",
        "5511987650001",
        "Oi! Preciso da segunda via do boleto de novembro, por favor.",
        "casa a skill com referência",
    ),
    ("wamid.demo-2", "5511987650002", "Vocês dão desconto à vista?", "só uma palavra de sondagem"),
    ("wamid.demo-3", "5511987650003", "Bom dia, tudo bem com vocês?", "não casa nenhuma skill"),
    (
        "wamid.demo-4",
        "5511987650004",
        "Quanto fica o frete para o CEP 01310-100?",
        "casa uma skill sem referência",
    ),
    ("wamid.demo-5", "5511987650005", "Oi, boa tarde!", "rajada: 1ª de duas mensagens seguidas"),
    (
        "wamid.demo-6",
        "5511987650005",
        "Vocês entregam em Campinas? Qual o prazo de entrega?",
        "rajada: 2ª mensagem, uma resposta para as duas",
    ),
    (
        "wamid.demo-1",
        "5511987650001",
        "Oi! Preciso da segunda via do boleto de novembro, por favor.",
        "entrega duplicada da mensagem 1",
    ),
)
