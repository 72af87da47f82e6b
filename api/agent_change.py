"""A change to an agent from the API, checked before anything is written. Pure.

The same rules as `skillet agents set` (codes invalid_name, invalid_prompt, invalid_model,
invalid_handoff_text, nothing_to_change), with pt-BR messages: a name of 1-100 characters, a
prompt of 1-50,000, handoff texts of 1-1,000, a known provider, and a model name for the
providers that need one; `default_model` hands the agent back to the worker's SKILLET_MODEL.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict

from api.errors import invalid
from turn.agent_queries import Agent
from turn.model_choice import MAX_MODEL_NAME_CHARS, NAMED_PROVIDERS, PROVIDERS

MAX_NAME_CHARS = 100
MAX_PROMPT_CHARS = 50_000
MAX_HANDOFF_TEXT_CHARS = 1000  # the agents' handoff_ack / handoff_wait_notice checks


class AgentChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    system_prompt: str | None = None
    model_provider: str | None = None
    model_name: str | None = None
    default_model: bool = False
    # What the agent tells a customer who asks for a person, and one left waiting.
    handoff_ack: str | None = None
    handoff_wait_notice: str | None = None
    vision: bool | None = None  # the agent's model takes images


def _text(value: str | None, limit: int, code: str, what: str) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not 1 <= len(text) <= limit:
        raise invalid(code, f"{what} deve ter de 1 a {limit} caracteres (tem {len(text)}).")
    return text


def _model(agent: Agent, change: AgentChange) -> tuple[str | None, str | None]:
    if change.default_model:
        if change.model_provider is not None or change.model_name is not None:
            raise invalid(
                "invalid_model", "`default_model` não combina com `model_provider`/`model_name`."
            )
        return None, None
    provider = change.model_provider or agent.model_provider
    # A new provider: the old model id means nothing to it.
    name = change.model_name if change.model_provider else change.model_name or agent.model_name
    if provider is None:
        if name is not None:
            raise invalid("invalid_model", "`model_name` precisa de `model_provider`.")
        return None, None
    if provider not in PROVIDERS:
        raise invalid(
            "invalid_model",
            f"Provedor de modelo desconhecido: {provider!r} (conhecidos: {', '.join(PROVIDERS)}).",
        )
    name = _text(name, MAX_MODEL_NAME_CHARS, "invalid_model", "`model_name`")
    if provider in NAMED_PROVIDERS and not name:
        raise invalid(
            "invalid_model", f"O provedor {provider!r} precisa de `model_name` (o id do modelo)."
        )
    return provider, name


def apply_agent_change(agent: Agent, change: AgentChange) -> Agent:
    """`agent` with the change applied; refusals name what to fix."""
    given = change.model_fields_set - ({"default_model"} if not change.default_model else set())
    if not given:
        raise invalid(
            "nothing_to_change",
            "Nada a mudar: envie `name`, `system_prompt`, `model_provider`/`model_name`, "
            "`default_model`, `handoff_ack`, `handoff_wait_notice` ou `vision`.",
        )
    name = _text(change.name, MAX_NAME_CHARS, "invalid_name", "O nome")
    prompt = _text(change.system_prompt, MAX_PROMPT_CHARS, "invalid_prompt", "O prompt")
    ack = _text(change.handoff_ack, MAX_HANDOFF_TEXT_CHARS, "invalid_handoff_text", "O aviso")
    notice = _text(
        change.handoff_wait_notice, MAX_HANDOFF_TEXT_CHARS, "invalid_handoff_text", "O aviso"
    )
    provider, model_name = _model(agent, change)
    return replace(
        agent,
        name=name or agent.name,
        system_prompt=prompt or agent.system_prompt,
        model_provider=provider,
        model_name=model_name,
        handoff_ack=ack or agent.handoff_ack,
        handoff_wait_notice=notice or agent.handoff_wait_notice,
        vision=agent.vision if change.vision is None else change.vision,
    )
