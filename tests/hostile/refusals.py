"""What every hostile request to the admin API must get back: its status, its code, a pt-BR
message of ours, and none of the driver's words."""

from __future__ import annotations

from tests.integration.api_support import Answer

# What asyncpg and Postgres say when they refuse a value; none of it may reach a client.
DRIVER_WORDS = (
    "UTF8",
    "0x00",
    "DataError",
    "CharacterNotInRepertoire",
    "asyncpg",
    "invalid input for query",
    "out of range",
    "surrogates not allowed",
    "codec",
    "Traceback",
)


def assert_refused(answer: Answer, status: int, code: str) -> str:
    """The answer is `status` with `code`; returns its message, checked for driver text."""
    assert (answer.status, answer.code) == (status, code), answer.body
    message = answer.body["message"]
    assert isinstance(message, str) and message
    leaked = [word for word in DRIVER_WORDS if word in message]
    assert not leaked, message
    return message
