"""A reply's delivery in pt-BR: enviada / entregue / lida / falhou and, when it failed, why,
in a sentence a shop owner reads (pure).

Meta's common error codes each have a sentence; an unknown code, or a failure that carries
none (a WAHA ack, a send we refused ourselves), gets a generic one. The raw English reason is
never shown: the code goes in parentheses beside its sentence, never alone.
"""

from __future__ import annotations

from typing import Any

DELIVERY = {
    "pending": "pendente",
    "sent": "enviada",
    "delivered": "entregue",
    "read": "lida",
    "failed": "falhou",
}

# Meta's Cloud API error codes (developers.facebook.com, "Error codes"), the common ones.
META_ERRORS: dict[int, str] = {
    190: "o token de acesso do número expirou ou foi revogado; conecte o número de novo",
    368: "a conta do WhatsApp Business está bloqueada por um tempo por violar as políticas",
    130429: "o número atingiu o limite de mensagens por segundo; tente de novo em instantes",
    130472: "o cliente faz parte de um experimento do WhatsApp e não recebeu a mensagem",
    131000: "o WhatsApp teve um erro desconhecido; tente de novo",
    131005: "o número não tem permissão para enviar esta mensagem",
    131008: "faltou uma informação obrigatória na mensagem",
    131009: "a mensagem tem uma informação inválida",
    131016: "o WhatsApp está fora do ar no momento; tente de novo mais tarde",
    131021: "a mensagem foi enviada para o próprio número da empresa",
    131026: (
        "o WhatsApp não conseguiu entregar: o número pode não ter WhatsApp, o cliente pode "
        "não ter aceitado os termos mais recentes ou usar uma versão antiga do aplicativo"
    ),
    131031: "a conta do WhatsApp Business foi bloqueada pelo WhatsApp",
    131037: "o número da empresa ainda não tem um nome de exibição aprovado",
    131042: "há um problema de pagamento na conta do WhatsApp Business",
    131045: "o número da empresa não está registrado corretamente no WhatsApp",
    131047: (
        "já passaram mais de 24 horas desde a última mensagem do cliente; agora só um "
        "template aprovado pode ser enviado"
    ),
    131048: "o número foi limitado por spam: muitas mensagens foram bloqueadas ou denunciadas",
    131049: (
        "o WhatsApp não entregou para preservar o engajamento do cliente com mensagens de marketing"
    ),
    131050: "o cliente optou por não receber mensagens de marketing desta empresa",
    131051: "o WhatsApp não aceita este tipo de mensagem",
    131052: "não foi possível baixar a mídia enviada",
    131053: "não foi possível enviar a mídia: o arquivo é grande demais ou de um tipo recusado",
    131056: "muitas mensagens para o mesmo cliente em pouco tempo; espere antes de enviar",
    131057: "a conta do WhatsApp Business está em manutenção",
    132000: "o número de variáveis não confere com o do template",
    132001: "o template não existe ou não está aprovado neste idioma",
    132005: "o texto do template ficou longo demais depois de preenchido",
    132007: "o conteúdo do template viola as políticas do WhatsApp",
    132012: "as variáveis do template estão num formato que o WhatsApp não aceita",
    132015: "o template está pausado pela baixa qualidade",
    132016: "o template foi desativado",
    133010: "o número da empresa não está registrado na Cloud API",
}
UNKNOWN_META_ERROR = "o WhatsApp recusou a mensagem por um motivo que não conhecemos"

# Our own refusals of a send (channels.errors.SendFailure), when no Meta code came with it.
SEND_FAILURES: dict[str, str] = {
    "send_rejected": "o WhatsApp recusou a mensagem",
    "channel_unauthorized": "o WhatsApp recusou o token ou a chave do número",
    "channel_not_configured": "o número ainda não está configurado para enviar",
    "no_channel": "a organização não tem um número conectado para enviar",
    "outside_service_window": META_ERRORS[131047],
    "channel_needs_token": META_ERRORS[190],
    "send_retries_exhausted": "o WhatsApp não respondeu depois de várias tentativas",
    "delivery_unknown": "a resposta do WhatsApp se perdeu; a mensagem não foi reenviada",
}
NO_REASON = "o WhatsApp não entregou a mensagem e não disse o motivo"


def failure_reason(error: str | None, code: int | None) -> str:
    """Why a reply failed, in pt-BR; Meta's code beside its sentence when there is one."""
    if code is not None:
        return f"{META_ERRORS.get(code, UNKNOWN_META_ERROR)} (código {code})"
    ours = (error or "").split(":", 1)[0].strip()
    return SEND_FAILURES.get(ours, NO_REASON)


def delivery_label(delivery: dict[str, Any] | None) -> str | None:
    """ "entregue", or "falhou — <why>"; None for a message that has no delivery."""
    if delivery is None:
        return None
    status = str(delivery.get("status") or "")
    label = DELIVERY.get(status, "situação desconhecida")
    if status != "failed":
        return label
    return f"{label} — {failure_reason(delivery.get('error'), delivery.get('error_code'))}"
