"""Prompt assembly: the byte-stable prefix and the per-turn matched-skill context."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence

from turn.model import InjectedSkill, ToolDefinition


def build_prefix(persona: str, tools: Sequence[ToolDefinition], skill_index: str) -> str:
    """Persona + tools (sorted by name, canonical JSON) + skill index.

    Depends only on its inputs, never on the message, the match or the clock, so it stays
    byte-identical while the installed set is unchanged and the provider's cache hits.
    """
    tool_json = json.dumps(
        [t.to_json() for t in sorted(tools, key=lambda t: t.name)],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return f"{persona.strip()}\n\n# Ferramentas\n{tool_json}\n\n{skill_index.rstrip()}\n"


def prefix_sha256(prefix: str) -> str:
    return hashlib.sha256(prefix.encode("utf-8")).hexdigest()


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
        parts.append(
            f'<skill name="{skill.name}">\n{skill.body.strip()}\n'
            f"Referências (use read_skill_reference): {refs}\n</skill>"
        )
    return "\n\n".join(parts) + "\n"
