"""Send decisions (pure): retry timing, Retry-After, Graph/WAHA answers, the 24-hour window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from channels.cloud_api import classify_graph_answer
from channels.dispatch import outside_window
from channels.http import RetryPolicy
from channels.waha import classify_waha_answer
from delivery.errors import SendError

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_backoff_doubles_up_to_its_cap_and_stops_at_the_bound() -> None:
    policy = RetryPolicy(max_attempts=5, backoff_base_s=0.5, backoff_max_s=1.5)
    assert [policy.delay_s(n, None) for n in range(1, 6)] == [0.5, 1.0, 1.5, 1.5, None]


def test_retry_after_is_honoured_up_to_its_cap() -> None:
    policy = RetryPolicy(max_attempts=4, backoff_base_s=0.5, retry_after_max_s=10)
    assert policy.delay_s(1, 3.0) == 3.0
    assert policy.delay_s(1, 0.0) == 0.5  # never faster than the backoff
    assert policy.delay_s(1, 60.0) is None  # asked to wait longer than we may: give up


def _code(verdict: object) -> str:
    assert isinstance(verdict, SendError)
    assert not verdict.retryable
    return verdict.code


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (200, {"messages": [{"id": "wamid.x"}]}, "ok"),
        (429, {}, "retry"),
        (500, "Internal", "retry"),
        (503, {}, "retry"),
        (400, {"error": {"code": 130429, "message": "Rate limit hit"}}, "retry"),
        (400, {"error": {"code": 131056, "message": "pair rate limit"}}, "retry"),
    ],
)
def test_graph_answers_that_are_ok_or_worth_a_retry(
    status: int, body: object, expected: str
) -> None:
    assert classify_graph_answer(status, body) == expected


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (
            400,
            {"error": {"code": 131047, "message": "Re-engagement message"}},
            "outside_service_window",
        ),
        (401, {"error": {"code": 190, "message": "token expired"}}, "channel_needs_token"),
        (403, {"error": {"code": 200, "message": "permission"}}, "channel_unauthorized"),
        (400, {"error": {"code": 100, "message": "Invalid parameter"}}, "send_rejected"),
        (404, "nope", "send_rejected"),
    ],
)
def test_graph_answers_that_fail_for_good(status: int, body: object, code: str) -> None:
    assert _code(classify_graph_answer(status, body)) == code


def test_waha_answers() -> None:
    assert classify_waha_answer(201, {"id": "x"}) == "ok"
    assert classify_waha_answer(429, {}) == "retry"
    assert classify_waha_answer(502, {}) == "retry"
    assert _code(classify_waha_answer(401, {})) == "channel_unauthorized"
    assert _code(classify_waha_answer(422, {"message": "session not working"})) == "send_rejected"


def test_customer_service_window() -> None:
    day = timedelta(hours=24)
    assert not outside_window(NOW - timedelta(hours=23, minutes=59), NOW, day)
    assert outside_window(NOW - day, NOW, day)
    assert outside_window(NOW - timedelta(days=3), NOW, day)
    assert not outside_window(None, NOW, day)
