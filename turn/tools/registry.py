"""The tools a turn offers: found once in `turn.tools`, offered sorted, dispatched by name.

Adding a tool touches one file: a module in this package that defines `TOOL = Tool(...)`.
Arguments are validated against the tool's `Args` before it runs; invalid ones come back to
the model as a readable refusal, never an exception.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from turn.model import ToolCall, ToolDefinition
from turn.tools.base import Tool, ToolContext, ToolResult
from turn.tools.schema import flat_schema

# Errors listed back to the model per refused call; the rest are counted, not shown.
MAX_ARGUMENT_ERRORS_SHOWN = 5
MAX_ERROR_INPUT_CHARS = 60


class ToolRegistry:
    """Tools by name; `definitions` is what every turn sends (sorted, byte-stable)."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        by_name: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in by_name:
                raise ValueError(f"two tools are named {tool.name!r}")
            by_name[tool.name] = tool
        self._tools: Mapping[str, Tool[Any]] = dict(sorted(by_name.items()))
        self._definitions = tuple(
            ToolDefinition(t.name, t.description, flat_schema(t.args)) for t in self._tools.values()
        )

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def definitions(self) -> tuple[ToolDefinition, ...]:
        return self._definitions

    async def execute(self, context: ToolContext, call: ToolCall) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolResult.error(
                "unknown_tool", f"A ferramenta {call.name!r} não existe. Disponíveis: {known}."
            )
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError as exc:
            return ToolResult.error("tool_arguments_invalid", _explain(tool.name, exc))
        return await tool.run(context, args)


def _explain(tool: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    parts = [
        f"{'.'.join(map(str, e['loc'])) or '(argumentos)'}: {_reason(e['type'], e['msg'])}"
        for e in errors[:MAX_ARGUMENT_ERRORS_SHOWN]
    ]
    more = len(errors) - MAX_ARGUMENT_ERRORS_SHOWN
    if more > 0:
        parts.append(f"e mais {more}")
    return f"Argumentos inválidos para {tool}: " + "; ".join(parts) + "."


_REASONS = {
    "missing": "campo obrigatório ausente",
    "extra_forbidden": "campo não existe nesta ferramenta",
    "string_type": "precisa ser texto",
    "list_type": "precisa ser uma lista",
    "literal_error": "valor não permitido",
    "string_too_long": "texto longo demais",
    "too_long": "lista longa demais",
    "int_parsing": "precisa ser um número inteiro",
    "greater_than_equal": "número pequeno demais",
    "model_type": "precisa ser um objeto JSON",
}


def _reason(error_type: str, message: str) -> str:
    return _REASONS.get(error_type, message[:MAX_ERROR_INPUT_CHARS])


@functools.cache
def default_registry() -> ToolRegistry:
    """Every module of `turn.tools` that defines `TOOL`, imported once per process."""
    import turn.tools as package

    tools: list[Tool[Any]] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        tool = getattr(module, "TOOL", None)
        if isinstance(tool, Tool):
            tools.append(tool)
    return ToolRegistry(tools)


def turn_tools() -> tuple[ToolDefinition, ...]:
    """Every tool of a turn, sorted by name so their rendering never changes order."""
    return default_registry().definitions()
