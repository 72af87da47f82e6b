"""A file a command reads, never more than it could accept: the cap + 1 bytes at most."""

from __future__ import annotations

from pathlib import Path

from cli.args import CliError


def read_capped(path: Path, max_bytes: int, *, too_large: str, code: str) -> bytes:
    """`path`'s bytes; CliError `file_unreadable`, or `code` with `too_large` (said after the
    path and its cap) when it has more than `max_bytes`."""
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise CliError(
            f"não foi possível ler {str(path)!r}: {exc.strerror or exc}", code="file_unreadable"
        ) from exc
    if len(data) > max_bytes:
        raise CliError(f"{str(path)!r} passa de {max_bytes} bytes, {too_large}", code=code)
    return data
