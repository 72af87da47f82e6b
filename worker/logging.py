"""structlog set-up: JSON lines in production, console in development, secrets dropped."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|authorization|api_?key|credential)", re.I)
_BODY_KEYS = frozenset({"text", "body", "reply", "message_text"})


def _make_redactor(log_bodies: bool) -> Any:
    def redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key in list(event):
            if _SECRET_KEY.search(key):
                event[key] = "[redacted]"
            elif key in _BODY_KEYS and not log_bodies:
                event[key] = "[omitted]"
        return event

    return redact


class _StderrLogger:
    """Writes each rendered event to the current sys.stderr (looked up per call, not cached,
    so a replaced stream, as under test capture, is honoured)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _stderr_logger_factory(*_: Any) -> _StderrLogger:
    return _StderrLogger()


def configure_logging(
    *, log_format: str = "console", level: str = "INFO", log_bodies: bool = False
) -> None:
    """Configure structlog and stdlib logging once per process."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if log_format == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _make_redactor(log_bodies),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=_stderr_logger_factory,
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(
        level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s %(message)s"
    )
    # arq's per-job INFO lines print the job's arguments, i.e. the customer's message:
    # our own turn.* events carry what operators need without the text.
    arq_level = logging.getLevelName(level.upper())
    logging.getLogger("arq.worker").setLevel(
        arq_level if log_bodies else max(logging.WARNING, arq_level)
    )
