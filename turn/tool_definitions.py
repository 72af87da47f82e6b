"""Static definitions of the tools offered in every turn (part of the byte-stable prefix)."""

from __future__ import annotations

from turn.model import ToolDefinition
from turn.skill_tools import SKILL_MANAGE, SKILL_VIEW

READ_SKILL_REFERENCE = ToolDefinition(
    name="read_skill_reference",
    description=(
        "Lê um arquivo de referência (references/...) de uma skill ativada nesta conversa. "
        "Use apenas caminhos listados junto da skill."
    ),
    parameters={
        "type": "object",
        "properties": {
            "skill_name": {"type": "string", "description": "Nome da skill ativada."},
            "path": {
                "type": "string",
                "description": "Caminho do arquivo, ex.: references/tabela.md",
            },
        },
        "required": ["skill_name", "path"],
        "additionalProperties": False,
    },
)


def turn_tools() -> tuple[ToolDefinition, ...]:
    """Every tool of a turn, sorted by name so their rendering never changes order."""
    return tuple(sorted([READ_SKILL_REFERENCE, SKILL_VIEW, SKILL_MANAGE], key=lambda t: t.name))
