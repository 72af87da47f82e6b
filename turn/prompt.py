"""Prompt assembly: the byte-stable prefix and the per-turn matched-skill context."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from turn.model import InjectedSkill, ToolDefinition


def build_prefix(persona: str, tools: Sequence[ToolDefinition], skill_index: str) -> str:
    """Persona + tools (sorted by name, canonical JSON) + skill index.

    Depends only on its inputs, never on the message, the match or the clock, so it stays
    byte-identical while the installed set is unchanged and the provider's cache hits.
    """
    return _assemble(persona, _tools_json(tools), skill_index)


def _tools_json(tools: Sequence[ToolDefinition]) -> str:
    return json.dumps(
        [t.to_json() for t in sorted(tools, key=lambda t: t.name)],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


def _assemble(persona: str, tools_json: str, skill_index: str) -> str:
    return f"{persona.strip()}\n\n# Ferramentas\n{tools_json}\n\n{skill_index.rstrip()}\n"


def prefix_sha256(prefix: str) -> str:
    return hashlib.sha256(prefix.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Prefix:
    text: str
    sha256: str


class PrefixCache:
    """`build_prefix` for one fixed tool set, remembered by persona and skill index.

    An org's turns rebuild the same bytes until its agent or installed set changes: the
    tool JSON, the copy of an index of hundreds of skills and its hash would otherwise cost
    every turn. Least recently used entries go first past `max_entries`.
    """

    def __init__(self, tools: Sequence[ToolDefinition], max_entries: int = 128) -> None:
        self._tools_json = _tools_json(tools)
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], Prefix] = OrderedDict()

    def get(self, persona: str, skill_index: str) -> Prefix:
        key = (persona, skill_index)
        cached = self._entries.get(key)
        if cached is not None:
            self._entries.move_to_end(key)
            return cached
        text = _assemble(persona, self._tools_json, skill_index)
        prefix = Prefix(text, prefix_sha256(text))
        self._entries[key] = prefix
        if len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return prefix


def prompt_cache_key(organization_id: uuid.UUID, agent_id: uuid.UUID | None) -> str:
    """A stable key per org and agent (whose prefix it is), hashed: no ids leave for a
    provider, and the key never changes while the agent exists."""
    agent = str(agent_id) if agent_id is not None else "default"
    digest = hashlib.sha256(f"{organization_id}:{agent}".encode()).hexdigest()
    return f"skillet-{digest[:32]}"


def render_skill_context(skills: Sequence[InjectedSkill]) -> str:
    """Matched skill bodies, each labelled with its name and its reference paths (not bodies)."""
    if not skills:
        return ""
    parts = ["# Skills ativadas nesta mensagem"]
    for skill in skills:
        refs = ", ".join(skill.reference_paths) if skill.reference_paths else "nenhuma"
        files = (
            f"Arquivos para o cliente (use send_skill_file): {', '.join(skill.file_paths)}\n"
            if skill.file_paths
            else ""
        )
        parts.append(
            f'<skill name="{skill.name}">\n{skill.body.strip()}\n'
            f"Referências (use read_skill_reference): {refs}\n{files}</skill>"
        )
    return "\n\n".join(parts) + "\n"
