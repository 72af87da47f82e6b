"""Logs never carry secrets, nor message bodies unless asked to."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import structlog

from worker.logging import configure_logging


def _last_event(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    parsed: dict[str, object] = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    return parsed


def test_secrets_and_bodies_are_dropped_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(log_format="json")
    structlog.get_logger("t").info(
        "turn.finished", text="meu CPF é 123", api_key="sk-1", db_password="p", status="ok"
    )
    event = _last_event(capsys)
    assert event["event"] == "turn.finished" and event["status"] == "ok"
    assert event["text"] == "[omitted]"
    assert event["api_key"] == "[redacted]" and event["db_password"] == "[redacted]"
    assert "123" not in json.dumps(event)


def test_bodies_are_logged_when_the_debug_flag_asks(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(log_format="json", log_bodies=True)
    structlog.get_logger("t").info("turn.finished", text="olá", token="t")
    event = _last_event(capsys)
    assert event["text"] == "olá" and event["token"] == "[redacted]"


def test_arq_job_lines_with_arguments_are_silenced_by_default() -> None:
    configure_logging(log_format="json")
    assert not logging.getLogger("arq.worker").isEnabledFor(logging.INFO)
    configure_logging(log_format="json", log_bodies=True)
    assert logging.getLogger("arq.worker").isEnabledFor(logging.INFO)


SECRET = "sk-live-n40-1mpr1m1r"


def test_secrets_inside_nested_dicts_and_lists_are_redacted_at_any_depth(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(log_format="json")
    headers = {"Authorization": f"Bearer {SECRET}", "accept": "application/json"}
    structlog.get_logger("t").warning(
        "model.request",
        request={"headers": headers, "attempts": [{"x-api-key": SECRET, "status": 429}]},
        batch=[{"id": "m1", "text": "meu CPF é 123"}, ("ok", {"client_secret": SECRET})],
        usage={"input_tokens": 12, "cache_read_tokens": 3},  # counts, not secrets
    )
    event = _last_event(capsys)
    assert SECRET not in json.dumps(event) and "123" not in json.dumps(event)
    assert event["request"] == {
        "headers": {"Authorization": "[redacted]", "accept": "application/json"},
        "attempts": [{"x-api-key": "[redacted]", "status": 429}],
    }
    assert event["batch"] == [
        {"id": "m1", "text": "[omitted]"},
        ["ok", {"client_secret": "[redacted]"}],
    ]
    assert event["usage"] == {"input_tokens": 12, "cache_read_tokens": 3}
    # The caller's own objects are left as they were.
    assert headers["Authorization"] == f"Bearer {SECRET}"


def test_nesting_past_the_bound_and_cycles_are_cut_not_followed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(log_format="json")
    deep: dict[str, object] = {"token": SECRET}
    for _ in range(50):
        deep = {"inner": deep}
    cyclic: dict[str, object] = {"name": "loop"}
    cyclic["self"] = cyclic
    structlog.get_logger("t").info("debug.dump", deep=deep, cyclic=cyclic)
    event = _last_event(capsys)
    assert SECRET not in json.dumps(event)
    assert "[truncated]" in json.dumps(event["deep"]) and "[truncated]" in json.dumps(
        event["cyclic"]
    )


PROGRAM = """
import logging, warnings
import structlog
from worker.logging import configure_logging

configure_logging(log_format="json", own_process=True)
structlog.get_logger("t").info("ours.event", n=1)
logging.getLogger("arq.worker").warning("job %s expired", "abc")
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("aiohttp.server").exception("Error handling request")
with structlog.contextvars.bound_contextvars(job_id="j-1"):
    logging.getLogger("asyncio").warning("two\\nlines")
warnings.simplefilter("always")
warnings.warn("old api", DeprecationWarning)
raise RuntimeError("boom")
"""


def test_in_json_mode_every_line_a_process_writes_is_json() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1  # the uncaught exception still ends the process
    assert done.stdout == ""
    events = [json.loads(line) for line in done.stderr.splitlines()]
    by_event = {e["event"]: e for e in events}
    assert by_event["ours.event"]["n"] == 1
    arq = by_event["job abc expired"]
    assert (arq["logger"], arq["level"]) == ("arq.worker", "warning")
    aiohttp = by_event["Error handling request"]
    assert aiohttp["logger"] == "aiohttp.server" and "ZeroDivisionError" in aiohttp["exception"]
    assert by_event["two\nlines"]["job_id"] == "j-1"  # the task's bound context
    [warning] = [e for e in events if e.get("logger") == "py.warnings"]
    assert "old api" in warning["event"]
    crash = by_event["process.uncaught_exception"]
    assert crash["level"] == "critical" and "RuntimeError: boom" in crash["exception"]
    assert all("timestamp" in e and "level" in e for e in events)
