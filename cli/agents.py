"""`skillet agents add|list|set`: an org's agents, their persona and which model answers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.args import CliError, uuid_arg
from worker.model_providers import NAMED_PROVIDERS, PROVIDERS
from worker.settings import Settings

if TYPE_CHECKING:
    from turn.agent_queries import Agent

MAX_NAME_CHARS = 100
MAX_PROMPT_CHARS = 50_000
MAX_MODEL_NAME_CHARS = 200  # the agents_model_name_length check
MAX_HANDOFF_TEXT_CHARS = 1000  # the agents' handoff_ack / handoff_wait_notice checks


def _line(agent: Agent) -> str:
    model = (
        f"{agent.model_provider}:{agent.model_name or ''}" if agent.model_provider else "default"
    )
    return f"{agent.id}  {agent.name}  model {model.rstrip(':')}"


def _name(value: str) -> str:
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME_CHARS:
        raise CliError(f"--name must be 1 to {MAX_NAME_CHARS} characters", code="invalid_name")
    return name


def _prompt(args: argparse.Namespace) -> str | None:
    """--prompt or the UTF-8 text of --prompt-file; None when neither was given."""
    if args.prompt_file is not None:
        try:
            text = Path(args.prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(
                f"cannot read --prompt-file {args.prompt_file}: {exc}", code="invalid_prompt"
            ) from exc
    elif args.prompt is not None:
        text = args.prompt
    else:
        return None
    text = text.strip()
    if not 1 <= len(text) <= MAX_PROMPT_CHARS:
        raise CliError(
            f"the system prompt must be 1 to {MAX_PROMPT_CHARS} characters (got {len(text)})",
            code="invalid_prompt",
        )
    return text


def _handoff_text(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not 1 <= len(text) <= MAX_HANDOFF_TEXT_CHARS:
        raise CliError(
            f"{flag} must be 1 to {MAX_HANDOFF_TEXT_CHARS} characters", code="invalid_handoff_text"
        )
    return text


def check_model(provider: str | None, name: str | None) -> tuple[str | None, str | None]:
    """A valid (model_provider, model_name) pair, or a CliError saying what to fix."""
    if provider is None:
        if name is not None:
            raise CliError("--model-name needs --model-provider", code="invalid_model")
        return None, None
    if provider not in PROVIDERS:
        raise CliError(
            f"unknown model provider {provider!r} (known: {', '.join(PROVIDERS)})",
            code="invalid_model",
        )
    if name is not None and not 1 <= len(name.strip()) <= MAX_MODEL_NAME_CHARS:
        raise CliError(
            f"--model-name must be 1 to {MAX_MODEL_NAME_CHARS} characters", code="invalid_model"
        )
    if provider in NAMED_PROVIDERS and not name:
        raise CliError(
            f"provider {provider!r} needs --model-name (the provider's model id)",
            code="invalid_model",
        )
    return provider, name.strip() if name else None


async def cmd_add(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.db import connection
    from turn.agent_queries import create_agent, fetch_org_agent

    name = _name(args.name)
    prompt = _prompt(args)
    assert prompt is not None  # one of --prompt/--prompt-file is required
    provider, model_name = check_model(args.model_provider, args.model_name)
    async with connection(settings.owner_url) as conn:
        if await fetch_org_agent(conn, args.org) is None:
            raise CliError(f"organization {args.org} does not exist", code="organization_not_found")
        agent = await create_agent(
            conn,
            args.org,
            name=name,
            system_prompt=prompt,
            model_provider=provider,
            model_name=model_name,
        )
    return {**agent.as_json(), "message": f"agent created: {_line(agent)}"}


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.db import connection
    from turn.agent_queries import list_agents

    async with connection(settings.owner_url) as conn:
        agents = await list_agents(conn, args.org)
    lines = [f"agents ({len(agents)}; the first answers numbers without an agent):"]
    lines += [f"  {_line(a)}" for a in agents]
    return {"agents": [a.as_json() for a in agents], "message": "\n".join(lines)}


async def cmd_set(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from dataclasses import replace

    from core.db import connection
    from turn.agent_queries import fetch_agent, update_agent

    if args.default_model and args.model_name is not None:
        raise CliError("--default-model takes no --model-name", code="invalid_model")
    name = None if args.name is None else _name(args.name)
    prompt = _prompt(args)
    ack = _handoff_text(args.handoff_ack, "--handoff-ack")
    notice = _handoff_text(args.handoff_wait_notice, "--handoff-wait-notice")
    changes_model = args.default_model or args.model_provider or args.model_name is not None
    vision = None if args.vision is None else args.vision == "on"
    unchanged = (name, prompt, ack, notice, vision)
    if all(value is None for value in unchanged) and not changes_model:
        raise CliError(
            "nothing to change: give --name, --prompt/--prompt-file, --model-provider/"
            "--model-name, --default-model, --handoff-ack, --handoff-wait-notice or --vision",
            code="nothing_to_change",
        )
    async with connection(settings.owner_url) as conn, conn.transaction():
        agent = await fetch_agent(conn, args.agent)
        if agent is None:
            raise CliError(f"agent {args.agent} does not exist", code="agent_not_found")
        provider, model_name = agent.model_provider, agent.model_name
        if args.default_model:
            provider, model_name = None, None
        elif args.model_provider:  # a new provider: the old model id means nothing to it
            provider, model_name = check_model(args.model_provider, args.model_name)
        elif args.model_name is not None:
            provider, model_name = check_model(provider, args.model_name)
        changed = replace(
            agent,
            name=name or agent.name,
            system_prompt=prompt or agent.system_prompt,
            model_provider=provider,
            model_name=model_name,
            handoff_ack=ack or agent.handoff_ack,
            handoff_wait_notice=notice or agent.handoff_wait_notice,
            vision=agent.vision if vision is None else vision,
        )
        agent = await update_agent(conn, changed)
    return {**agent.as_json(), "message": f"agent updated: {_line(agent)}"}


def _prompt_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--prompt", help="the agent's system prompt (its persona)")
    group.add_argument("--prompt-file", help="read the system prompt from this UTF-8 file")


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add `agents` to the `skillet` parser (each command takes `common` for --json)."""
    agents = sub.add_parser("agents", help="an organization's agents").add_subparsers(
        dest="agents_command", required=True
    )
    providers = f"one of {', '.join(PROVIDERS)}; unset: the worker's SKILLET_MODEL"
    add = agents.add_parser("add", parents=[common], help="create an agent")
    add.add_argument("--org", type=uuid_arg, required=True)
    add.add_argument("--name", required=True)
    _prompt_arguments(add, required=True)
    add.add_argument("--model-provider", help=providers)
    add.add_argument("--model-name", help="the provider's model id, e.g. claude-sonnet-4-5")
    add.set_defaults(handler=cmd_add)

    listing = agents.add_parser("list", parents=[common], help="an org's agents")
    listing.add_argument("--org", type=uuid_arg, required=True)
    listing.set_defaults(handler=cmd_list)

    change = agents.add_parser("set", parents=[common], help="change an agent")
    change.add_argument("--agent", type=uuid_arg, required=True)
    change.add_argument("--name")
    _prompt_arguments(change, required=False)
    model = change.add_mutually_exclusive_group()
    model.add_argument("--model-provider", help=providers)
    model.add_argument(
        "--default-model", action="store_true", help="answer with the worker's SKILLET_MODEL"
    )
    change.add_argument("--model-name", help="the provider's model id")
    change.add_argument(
        "--handoff-ack",
        help="what the agent answers a customer who asks for a person (pt-BR default if unset)",
    )
    change.add_argument(
        "--handoff-wait-notice",
        help="the one notice to a customer left waiting SKILLET_HANDOFF_WAIT_S for a person",
    )
    change.add_argument(
        "--vision",
        choices=("on", "off"),
        help="the agent's model takes images: a customer's photo goes to it (docs/media.md)",
    )
    change.set_defaults(handler=cmd_set)
