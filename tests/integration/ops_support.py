"""Helpers for the operations tests: an in-process worker that keeps running, scraping."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
from arq.worker import Worker

from delivery.contract import Sender
from tests.integration.support import close_between_jobs
from tests.prometheus_samples import Samples, parse_samples, value
from turn.model import Model
from worker.app import build_worker
from worker.settings import Settings

__all__ = ["Samples", "eventually", "http_get", "running_worker", "scrape", "value"]


@contextlib.asynccontextmanager
async def running_worker(
    settings: Settings, *, model: Model | None = None, sender: Sender | None = None
) -> AsyncIterator[Worker]:
    """A real arq Worker (not burst) running until the block ends; yields once started."""
    worker = build_worker(settings, handle_signals=False, model=model, sender=sender)
    task = asyncio.create_task(worker.async_run())
    try:
        for _ in range(400):
            if "operations" in worker.ctx or task.done():
                break
            await asyncio.sleep(0.025)
        if task.done():
            task.result()  # startup failed: raise its error here
        assert "operations" in worker.ctx, "worker did not start"
        yield worker
    finally:
        await close_between_jobs(worker)
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def http_get(port: int, path: str) -> tuple[int, str]:
    timeout = aiohttp.ClientTimeout(total=10)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        http.get(f"http://127.0.0.1:{port}{path}") as response,
    ):
        return response.status, await response.text()


async def scrape(port: int) -> Samples:
    status, text = await http_get(port, "/metrics")
    assert status == 200, text
    return parse_samples(text)


async def eventually(check: Callable[[], Any], *, timeout_s: float = 15.0) -> None:
    """Poll the async `check` until it returns truthy."""
    for _ in range(int(timeout_s / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"condition not met within {timeout_s} s")
