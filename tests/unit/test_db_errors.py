"""Driver failures reach callers as our errors: transient ones retryable, refusals not."""

from __future__ import annotations

import asyncpg
import pytest

from core.db_errors import db_errors
from core.errors import DatabaseRejected, DatabaseUnavailable, SkilletError


@pytest.mark.parametrize(
    "raised",
    [
        asyncpg.InterfaceError("connection is closed"),
        asyncpg.exceptions.InternalClientError("another operation (2) is in progress"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.TooManyConnectionsError("too many clients"),
        asyncpg.SerializationError("could not serialize"),
        ConnectionResetError("reset by peer"),
        TimeoutError(),
    ],
)
def test_transient_driver_errors_become_retryable(raised: BaseException) -> None:
    with pytest.raises(DatabaseUnavailable) as caught, db_errors("loading skills"):
        raise raised
    assert caught.value.retryable
    assert caught.value.__cause__ is raised
    assert caught.value.message.startswith("loading skills: ")


@pytest.mark.parametrize(
    "raised",
    [
        asyncpg.CharacterNotInRepertoireError("invalid byte sequence for encoding UTF8: 0x00"),
        asyncpg.UniqueViolationError("duplicate key"),
    ],
)
def test_refused_statements_are_not_retried(raised: BaseException) -> None:
    with pytest.raises(DatabaseRejected) as caught, db_errors("storing the message"):
        raise raised
    assert not caught.value.retryable
    assert caught.value.code == "database_rejected"


def test_our_own_errors_and_bugs_pass_through() -> None:
    mine = SkilletError("refused", code="skill_exists")
    with pytest.raises(SkilletError) as caught, db_errors("creating"):
        raise mine
    assert caught.value is mine
    with pytest.raises(KeyError), db_errors("creating"):
        raise KeyError("a bug stays a bug")
