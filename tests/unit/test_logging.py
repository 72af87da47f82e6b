"""Logs never carry secrets, nor message bodies unless asked to."""

from __future__ import annotations

import json
import logging

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
