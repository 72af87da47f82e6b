"""Test-wide fixtures: no env var of ours leaks into a test's Settings."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

_OUR_UNPREFIXED = (
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT_URL",
    "S3_BUCKET",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("SKILLET_") and name != "SKILLET_TEST_DATABASE_URL":
            monkeypatch.delenv(name)
    for name in _OUR_UNPREFIXED:
        monkeypatch.delenv(name, raising=False)
    yield
