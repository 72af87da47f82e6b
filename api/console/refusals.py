"""A refusal as the console says it: one pt-BR sentence per code, never the code itself.

The API's messages are written for whoever sends JSON (they name body fields, CLI commands,
a role's value); where one would read so on a page, the console has its own sentence below,
which names the page's form or button instead. Any other message is shown as the API wrote
it, with code spans (`x`) turned into quotes. The code stays in the page's markup
(`data-codigo`) for tests and support, not in its text.
"""

from __future__ import annotations

import re
from typing import Final

from api.errors import public_message
from core.errors import SkilletError

CONSOLE_MESSAGES: Final = {
    "held_by_other": "Outra pessoa está com esta conversa (veja quem, acima). Peça que ela "
    "devolva ao agente; uma chave de administração pode usar “Assumir mesmo assim”.",
    "forbidden": "Seu papel não permite esta ação. Peça a quem administra a equipe.",
    "outside_service_window": "O cliente escreveu pela última vez há mais de 24 horas: o "
    "WhatsApp só deixa responder com texto livre dentro dessa janela. Envie um template "
    "aprovado (no formulário abaixo) ou espere o cliente escrever de novo.",
    "template_not_found": "O número desta conversa não tem mais esse template (a Meta pode "
    "tê-lo apagado). A lista é lida de novo uma vez por dia; escolha outro.",
    "template_not_approved": "Este template não está aprovado na Meta agora: só um template "
    "aprovado pode ser enviado. Escolha outro.",
    "invalid_model": "Escreva o id do modelo para esse provedor (ex.: claude-...), ou escolha "
    "“padrão do serviço”.",
    "invalid_cursor": "Este link de página não vale mais: volte à primeira página da lista.",
    "invalid_limit": "Este link de página não vale: volte à primeira página da lista.",
    "invalid_status": "Este filtro não existe: escolha um dos filtros da página.",
}
_CODE_SPAN = re.compile(r"`([^`]*)`")


def refusal_sentence(error: SkilletError) -> str:
    """What the page says of `error`: the console's sentence for its code, else the API's
    message (5xx: a fixed text) without code spans."""
    sentence = CONSOLE_MESSAGES.get(error.code) or public_message(error)
    return _CODE_SPAN.sub(r"“\1”", sentence).replace("`", "")
