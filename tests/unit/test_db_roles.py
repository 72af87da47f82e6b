"""Which database URLs count as a development setup's (the privileged-login log level)."""

from __future__ import annotations

import pytest

from core.db_roles import is_local_database


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("postgresql://postgres@127.0.0.1:5432/skillet", True),
        ("postgresql://postgres@localhost/skillet", True),
        ("postgresql://postgres@[::1]:5432/skillet", True),
        ("postgresql:///skillet?host=/var/run/postgresql", True),
        ("postgresql://skillet@postgres:5432/skillet", False),
        ("postgresql://admin:x@db.example.com/skillet", False),
        ("postgresql://admin@127.0.0.2/skillet", False),
    ],
)
def test_local_database(url: str, local: bool) -> None:
    assert is_local_database(url) is local
