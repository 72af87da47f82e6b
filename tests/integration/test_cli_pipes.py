"""`skillet ... | head -1`: a reader that went away ends the CLI quietly, like Unix tools do
(exit 141 = 128 + SIGPIPE, nothing on stderr), whatever the command was printing."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid

import asyncpg
import pytest

from tests.integration.support import SKILLET, create_org, worker_env
from worker.settings import Settings

EXIT_CLOSED_PIPE = 141


def _run_with_closed_stdout(settings: Settings, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `skillet argv` with a stdout pipe whose reading end is already closed: every write
    to it fails with EPIPE (deterministic, unlike racing a real `head`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [SKILLET, *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=worker_env(settings),
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "argv",
    [
        ("status", "--json"),
        ("status",),
        ("skills", "list", "--org", "{org}"),
        ("skills", "list", "--org", "{org}", "--json"),
        ("skills", "list", "--org", "{stranger}", "--json"),  # the error goes to stdout too
    ],
)
async def test_a_closed_stdout_ends_the_cli_quietly(
    settings: Settings, db: asyncpg.Connection, argv: tuple[str, ...]
) -> None:
    org = await create_org(db)
    args = [a.format(org=org, stranger=uuid.uuid4()) for a in argv]
    finished = await asyncio.to_thread(_run_with_closed_stdout, settings, *args)
    assert (finished.returncode, finished.stderr) == (EXIT_CLOSED_PIPE, "")


async def test_an_open_stdout_still_gets_everything(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    finished = await asyncio.to_thread(
        subprocess.run,
        [SKILLET, "skills", "list", "--org", str(org)],
        capture_output=True,
        env=worker_env(settings),
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 0
    assert finished.stdout.startswith("installed (0):")
