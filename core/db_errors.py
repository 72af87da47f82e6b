"""One translation of database driver failures into our error tree.

A Postgres call fails through asyncpg in many shapes (a server error, a closed connection,
the network, a pool that times out); callers above the query layer see only
`DatabaseUnavailable` (retryable) or, for a statement the server refused on its content
(`DataError`: a NUL byte, a bad encoding, an out-of-range value; or any other server
error outside the transient list), `DatabaseRejected`, which no retry can mend.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg

from core.errors import DatabaseRejected, DatabaseUnavailable

# A later try may succeed: the server restarted, the network blinked, the pool was full.
TRANSIENT_DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    # A pooled connection the server dropped mid-operation (a restart) can be handed out in a
    # broken protocol state: "another operation is in progress". A fresh connection works.
    asyncpg.exceptions.InternalClientError,
    asyncpg.TooManyConnectionsError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.SerializationError,
    asyncpg.DeadlockDetectedError,
    asyncpg.QueryCanceledError,  # statement_timeout
    asyncpg.LockNotAvailableError,  # lock_timeout
    ConnectionError,
    OSError,
    TimeoutError,
)
# Everything a Postgres call can raise through asyncpg.
DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresError,
    *TRANSIENT_DATABASE_ERRORS,
)


@contextmanager
def db_errors(action: str) -> Iterator[None]:
    """Translate driver errors raised in the block; `action` names what was being done.

    Our own errors pass through untouched, so a block may raise them itself.
    """
    try:
        yield
    except TRANSIENT_DATABASE_ERRORS as exc:
        raise DatabaseUnavailable(f"{action}: {type(exc).__name__}: {exc}") from exc
    except asyncpg.PostgresError as exc:
        raise DatabaseRejected(f"{action}: {type(exc).__name__}: {exc}") from exc
