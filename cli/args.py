"""Shared pieces of the CLI's command modules: argument types, the command type, CliError."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any

from core.errors import SkilletError
from worker.settings import Settings

# A command: parsed args + settings in, a JSON-able dict out (its "message" is the human line).
Command = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, dict[str, Any]]]


class CliError(SkilletError):
    code = "cli_error"


def uuid_arg(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a UUID: {value!r}") from exc


def aware_datetime_arg(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 datetime: {value!r}") from exc
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError("the datetime needs a timezone, e.g. 2026-11-30T10:00:00Z")
    return parsed


def org_command(
    group: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    name: str,
    help_text: str,
) -> argparse.ArgumentParser:
    """A subcommand that acts on one organization (`--org`, always given by the operator)."""
    parser = group.add_parser(name, parents=[common], help=help_text)
    parser.add_argument("--org", type=uuid_arg, required=True, help="organization id")
    return parser
