"""What a model turn writes besides its reply (pure): its activation rows, its token usage row,
and the skill files the model may send."""

from __future__ import annotations

import uuid
from typing import Any

from conversation.context import Conversation
from skills.models import LoadedSkill
from turn.activation_queries import ActivationRow
from turn.agent_loop import LoopOutcome
from turn.matcher import MatchResult


def sendable_files(skill: LoadedSkill) -> tuple[str, ...]:
    """The skill's files under assets/: what the model is told it may send."""
    return tuple(e.path for e in skill.manifest if e.path.startswith("assets/"))


def usage_row(conversation: Conversation, loop: LoopOutcome) -> dict[str, Any]:
    usage = loop.usage.to_json()
    usage.pop("latency_ms", None)
    agent = conversation.agent_id
    return {**usage, "agent_id": None if agent is None else str(agent)}


def activation_rows(
    organization_id: uuid.UUID, match: MatchResult, job_id: str
) -> list[ActivationRow]:
    # Injected either way: `intent` when only the skill's catalog intent model matched.
    by_intent = set(match.by_intent)
    injected = [
        ActivationRow(
            organization_id,
            s.name,
            s.version_id,
            "intent" if s.name in by_intent else "hard",
            job_id,
        )
        for s in match.matched
    ]
    probes = [ActivationRow(organization_id, name, None, "probe", job_id) for name in match.probes]
    capped = [ActivationRow(organization_id, n, None, "capped", job_id) for n in match.capped]
    return injected + probes + capped
