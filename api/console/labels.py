"""The words the console shows for the API's stored values (pure): an audit row's action and
details, the curator's triggers and reasons, a template's status and category, a refusal's
code. Every value gets pt-BR words; one the console does not know yet reads as a neutral
phrase, never as the raw value (a test holds the known sets complete).

A detail's value is said in words (`sim`, `não`, `nenhum`, a list joined by commas); a name a
person may need to recognise (a field, a skill, an id) is marked as code, where the console's
pages show names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

AUDIT_ACTIONS: Final = {
    "agent.update": "mudou o agente",
    "api_key.create": "criou uma chave",
    "api_key.revoke": "revogou uma chave",
    "channel.add": "conectou um número",
    "channel.update": "mudou um número",
    "channel.move": "moveu um número",
    "conversation.release": "devolveu a conversa ao agente",
    "conversation.reply": "respondeu ao cliente",
    "conversation.takeover": "assumiu a conversa",
    "conversation.transfer": "passou a conversa",
    "conversation.note": "escreveu uma nota interna",
    "dead_letter.requeue": "reenfileirou um trabalho",
    "draft.approve": "aprovou um rascunho",
    "draft.merge": "juntou um rascunho a uma skill",
    "draft.reject": "recusou um rascunho",
    "followup.cancel": "cancelou uma mensagem agendada",
    "person.accept_invitation": "aceitou o convite",
    "person.deactivate": "desativou uma pessoa",
    "person.invite": "convidou uma pessoa",
    "person.update": "mudou uma pessoa",
    "proposal.approve": "aprovou uma fusão",
    "proposal.reject": "recusou uma fusão",
    "quick_reply.create": "criou uma resposta rápida",
    "quick_reply.delete": "apagou uma resposta rápida",
    "quick_reply.update": "mudou uma resposta rápida",
    "settings.agent_authoring": "mudou a escrita de skills pelo agente",
    "settings.consolidation": "mudou a consolidação",
    "settings.events": "mudou o webhook de eventos",
    "settings.events_secret": "trocou o segredo do webhook de eventos",
    "settings.events_url": "mudou o endereço do webhook de eventos",
    "settings.hours": "mudou o horário de atendimento",
    "settings.name": "mudou o nome da empresa",
    "skill.absorb": "juntou skills",
    "skill.edit": "editou uma skill",
    "skill.file_delete": "removeu um arquivo de skill",
    "skill.file_put": "salvou um arquivo de skill",
    "skill.import": "enviou um pacote de skill",
    "skill.install": "instalou uma skill",
    "skill.pin": "fixou uma skill",
    "skill.restore": "restaurou uma skill",
    "skill.rollback": "voltou uma skill de versão",
    "skill.uninstall": "desinstalou uma skill",
    "skill.unpin": "desafixou uma skill",
    "suggestion.dismiss": "descartou uma sugestão",
    "suggestion.draft": "fez um rascunho de uma sugestão",
    "suggestion.restore": "devolveu um valor ao rascunho",
}
UNKNOWN_ACTION: Final = "outra ação"

# The keys audit rows carry, as a person reads them.
DETAIL_KEYS: Final = {
    "after_mode": "depois",
    "before_mode": "antes",
    "before_held_by": "estava com",
    "answer_pending": "o agente responde o que ficou sem resposta",
    "agent_id": "agente",
    "code": "motivo",
    "conversation_id": "conversa",
    "fields": "campos",
    "force": "à força",
    "from": "de",
    "to": "para",
    "prefix": "chave",
    "role": "papel",
    "name": "nome",
    "email": "e-mail",
    "person_id": "pessoa",
    "version_id": "versão",
    "base_version_id": "versão de partida",
    "set": "definido",
    "url": "endereço",
    "chars": "caracteres",
    "kind": "tipo",
    "address": "endereço",
    "template": "template",
    "reason": "motivo",
    "skill": "skill",
    "status": "situação",
    "note_id": "nota",
    "quick_reply_id": "resposta rápida",
    "title": "título",
}
# Detail values that are one of the console's enumerations.
MODES: Final = {"agent": "com o agente", "waiting": "esperando", "human": "com uma pessoa"}
ROLES: Final = {"viewer": "leitura", "editor": "edição", "admin": "administração"}
# Keys whose value is a name or an id: shown as code.
NAME_KEYS: Final = frozenset(
    {
        "agent_id",
        "conversation_id",
        "prefix",
        "person_id",
        "version_id",
        "base_version_id",
        "note_id",
        "quick_reply_id",
    }
)


@dataclass(frozen=True)
class DetailPart:
    label: str
    text: str
    code: bool = False  # a name or id, shown as code


def _words(value: Any) -> str:
    if value is None:
        return "nenhum"
    if isinstance(value, bool):
        return "sim" if value else "não"
    if isinstance(value, list | tuple):
        return ", ".join(_words(v) for v in value) or "nenhum"
    if isinstance(value, dict):
        return "; ".join(f"{DETAIL_KEYS.get(k, k)}: {_words(v)}" for k, v in value.items())
    return str(value)


def _value(key: str, value: Any) -> DetailPart:
    label = DETAIL_KEYS.get(key, key.replace("_", " "))
    if key in ("after_mode", "before_mode") and isinstance(value, str):
        return DetailPart(label, MODES.get(value, value))
    if key == "role" and isinstance(value, str):
        return DetailPart(label, ROLES.get(value, value))
    if key == "code" and isinstance(value, str):
        return DetailPart(label, REFUSALS.get(value, "recusado"))
    if key == "before_held_by" and value == "phone":
        return DetailPart(label, "celular da empresa")
    if key == "fields" and isinstance(value, list | tuple):
        return DetailPart(label, ", ".join(str(v) for v in value), code=True)
    return DetailPart(label, _words(value), code=key in NAME_KEYS)


def audit_detail(detail: dict[str, Any] | None) -> list[DetailPart]:
    """An audit row's details, each key and value in words."""
    return [_value(k, v) for k, v in (detail or {}).items()]


def audit_action(action: str) -> str:
    return AUDIT_ACTIONS.get(action, UNKNOWN_ACTION)


# A refusal's code in a few words (an audit row's `code`): the page's own refusal box shows
# the whole sentence (api.console.refusals).
REFUSALS: Final = {
    "forbidden": "sem permissão",
    "unauthorized": "sem acesso",
    "not_found": "não encontrado",
    "invalid_input": "dados inválidos",
    "held_by_other": "outra pessoa está com a conversa",
    "outside_service_window": "fora da janela de 24 horas",
    "template_params_mismatch": "variáveis do template não conferem",
    "business_hours_invalid": "horário inválido",
    "timezone_unknown": "fuso horário desconhecido",
    "closed_dates_invalid": "dias fechados inválidos",
    "channel_not_verified": "número não confirmado",
    "last_admin": "última pessoa administradora",
    "too_many_requests": "pedidos demais",
}

CURATOR_TRIGGERS: Final = {
    "manual": "rodado à mão",
    "schedule": "agendado",
    "idle": "no descanso do agente",
    "ceiling": "pelo intervalo máximo entre relatórios",
}
CURATOR_SKIPS: Final = {
    "not-agent-created": "não foi escrita pelo agente",
    "pinned": "está fixada",
    "no-change": "nada a mudar",
}
TEMPLATE_STATUSES: Final = {
    "APPROVED": "aprovado",
    "PENDING": "em análise na Meta",
    "REJECTED": "recusado pela Meta",
    "PAUSED": "pausado pela Meta",
    "DISABLED": "desativado pela Meta",
    "IN_APPEAL": "em recurso na Meta",
    "PENDING_DELETION": "sendo apagado na Meta",
    "DELETED": "apagado na Meta",
    "LIMIT_EXCEEDED": "acima do limite da Meta",
}
TEMPLATE_CATEGORIES: Final = {
    "UTILITY": "utilidade",
    "MARKETING": "marketing",
    "AUTHENTICATION": "autenticação",
}
# Why consolidation kept its own body over the model's rewrite (consolidation.rewrite), by
# the reason's first word; what follows it (a keyword, a path) is shown as code.
REWRITE_REJECTIONS: Final = {
    "timeout": "o modelo demorou demais",
    "model_error": "o modelo respondeu com erro",
    "truncated": "a resposta do modelo veio cortada",
    "empty": "a resposta veio vazia",
    "too_long": "a resposta passou do tamanho",
    "frontmatter": "a resposta mexeu no cabeçalho da skill",
    "dropped_keyword": "a resposta deixou de citar uma palavra-chave",
    "unknown_file": "a resposta citou um arquivo que não existe",
    "too_large": "a skill passaria de um limite do pacote",
    "new_fact": "a resposta trouxe um fato que nenhuma skill tinha",
}
# Every enumeration a template may name through the `label` filter.
KINDS: Final[dict[str, tuple[dict[str, str], str]]] = {
    "curator_trigger": (CURATOR_TRIGGERS, "agendado"),
    "curator_skip": (CURATOR_SKIPS, "outro motivo"),
    "template_status": (TEMPLATE_STATUSES, "situação desconhecida na Meta"),
    "template_category": (TEMPLATE_CATEGORIES, "outra categoria"),
    "audit_action": (AUDIT_ACTIONS, UNKNOWN_ACTION),
    "role": (ROLES, "outro papel"),
    "rewrite_rejected": (REWRITE_REJECTIONS, "outro motivo"),
}


def label(value: object, kind: str) -> str:
    """`value` of the enumeration `kind` in pt-BR; a neutral phrase for one it does not know."""
    known, otherwise = KINDS[kind]
    return known.get(str(value), otherwise)


# Meta's language codes a Brazilian business meets, as a person reads them.
LANGUAGES = {
    "pt_BR": "português",
    "pt_PT": "português de Portugal",
    "en": "inglês",
    "en_US": "inglês",
    "es": "espanhol",
    "es_AR": "espanhol",
    "es_MX": "espanhol",
}


def language(code: str) -> str:
    return LANGUAGES.get(code, "outro idioma")
