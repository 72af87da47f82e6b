"""structlog set-up: JSON lines in production, console in development, secrets dropped
(at any depth of the event's dicts and lists, up to MAX_REDACT_DEPTH).

Libraries that log through the standard library (arq, aiohttp, asyncio, redis, botocore)
are rendered by the same processors (structlog's ProcessorFormatter on the root logger), so
in JSON mode every line a process writes is one JSON object: theirs carry `logger` (the
library's logger name), the bound context of the task that logged, and a formatted
`exception` when there is one. In JSON mode Python's warnings and an uncaught exception are
logged the same way instead of printed as text.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|authorization|api[_-]?key|credential)", re.I)
# `input_tokens`, `max_tokens`, ...: counts, not tokens (a usage summary stays readable).
_TOKEN_COUNT = re.compile(r"_tokens$", re.I)
_BODY_KEYS = frozenset({"text", "body", "reply", "message_text"})
# Levels of dicts/lists/tuples looked into below the event itself; anything deeper (or a
# cycle) is cut, since what it holds was not checked.
MAX_REDACT_DEPTH = 8
_TRUNCATED = "[truncated]"


def _is_secret_key(key: object) -> bool:
    name = str(key)
    return bool(_SECRET_KEY.search(name)) and not _TOKEN_COUNT.search(name)


def _redacted(key: object, value: Any, log_bodies: bool, depth: int) -> Any:
    """`value` as it may be logged under `key`: copies, never the caller's objects changed."""
    if _is_secret_key(key):
        return "[redacted]"
    if key in _BODY_KEYS and not log_bodies:
        return "[omitted]"
    return _redacted_value(value, log_bodies, depth)


def _redacted_value(value: Any, log_bodies: bool, depth: int) -> Any:
    if isinstance(value, Mapping):
        if depth >= MAX_REDACT_DEPTH:
            return _TRUNCATED
        return {k: _redacted(k, v, log_bodies, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth >= MAX_REDACT_DEPTH:
            return _TRUNCATED
        items = [_redacted_value(v, log_bodies, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _make_redactor(log_bodies: bool) -> Any:
    def redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in list(event.items()):
            event[key] = _redacted(key, value, log_bodies, 0)
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


class _StderrHandler(logging.Handler):
    """The root logger's handler: each record, rendered, to the current sys.stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:
            self.handleError(record)


def _log_uncaught(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    structlog.get_logger("skillet").critical(
        "process.uncaught_exception", exc_info=(kind, value, tb)
    )


def configure_logging(
    *,
    log_format: str = "console",
    level: str = "INFO",
    log_bodies: bool = False,
    own_process: bool = False,
) -> None:
    """Configure structlog and stdlib logging (idempotent: a second call replaces the first).

    `own_process`: the caller owns the process (the CLI, not a test run): in JSON mode,
    Python's warnings and an uncaught exception are logged too, not printed as text.
    """
    as_json = log_format == "json"
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _make_redactor(log_bodies),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=_stderr_logger_factory,
        cache_logger_on_first_use=False,
    )
    handler = _StderrHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    for previous in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(previous)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # arq's per-job INFO lines print the job's arguments, i.e. the customer's message:
    # our own turn.* events carry what operators need without the text.
    arq_level = logging.getLevelName(level.upper())
    logging.getLogger("arq.worker").setLevel(
        arq_level if log_bodies else max(logging.WARNING, arq_level)
    )
    if as_json and own_process:
        logging.captureWarnings(True)
        sys.excepthook = _log_uncaught
