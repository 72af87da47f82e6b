"""Requests/s of the real webhook divided by a bare aiohttp handler's, side by side.

Run: .venv/bin/python bench/webhook_ingress.py [--requests N] [--concurrency C]
The webhook does all its work per Cloud API delivery: size cap, HMAC, JSON, the channel
lookup, contact aliases, the inbound route, the stored message and its arq job on the
Postgres/Redis at DATABASE_URL/REDIS_URL (a database of its own, dropped at the end). The
bare handler reads the body and answers 200: what any webhook pays for HTTP alone. Both run
in this process on 127.0.0.1 behind the same client. Prints the ratio last.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import asyncpg
from aiohttp import web

from channels.models import ChannelKind
from channels.queries import insert_channel
from core.db import connect, with_database
from core.organizations import insert_organization
from dev.env import load_settings
from jobs.queue import open_queue
from webhook.app import CLOUD_API_PATH, build_app
from webhook.config import WebhookConfig
from webhook.server import start_site
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.settings import Settings

# The payload builders live beside the tests; make the repo importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.whatsapp_payloads import (
    cloud_delivery,
    cloud_signature,
    cloud_text,
    cloud_value,
    encode,
)

SECRET = "bench-app-secret"
PHONE_NUMBER_ID = "106540352242922"


def _delivery(n: int) -> bytes:
    """One text from one of 500 customers, as Meta sends it (the tests' payload builders)."""
    message = cloud_text(
        f"wamid.bench.{uuid.uuid4().hex}",
        f"mensagem {n}: qual o prazo de entrega?",
        sender=f"55119{n % 500:08d}",
        timestamp=int(time.time()),
    )
    return encode(cloud_delivery(cloud_value(PHONE_NUMBER_ID, [message])))


async def _bare(request: web.Request) -> web.Response:
    await request.read()
    return web.json_response({"ok": True})


async def _load(url: str, requests: int, concurrency: int) -> tuple[float, list[float]]:
    """(requests/s, latencies in ms) of `requests` signed POSTs, `concurrency` in flight."""
    bodies = [_delivery(n) for n in range(requests)]
    latencies: list[float] = []
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def client() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                headers = {
                    "Content-Type": "application/json",
                    "X-Hub-Signature-256": cloud_signature(body, SECRET),
                }
                started = time.perf_counter()
                async with http.post(url, data=body, headers=headers) as response:
                    await response.read()
                    assert response.status == 200, response.status
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return requests / elapsed, latencies


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner, port = await start_site(app, "127.0.0.1", 0)
    return runner, f"http://127.0.0.1:{port}{CLOUD_API_PATH}"


async def _main(args: argparse.Namespace, base: Settings) -> float:
    name = f"skillet_webhook_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    await admin.close()
    database_url = with_database(base.database_url, name)
    queue_name = f"bench:webhook:{uuid.uuid4().hex[:8]}"
    try:
        conn = await connect(database_url)
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        org = uuid.uuid4()
        await insert_organization(conn, org, "Bench")
        await insert_channel(
            conn,
            organization_id=org,
            agent_id=None,
            kind=ChannelKind.CLOUD_API,
            address=PHONE_NUMBER_ID,
            display_phone=None,
        )
        await conn.close()
        pool = await asyncpg.create_pool(database_url, min_size=2, max_size=10)
        queue = await open_queue(base.redis_url, queue_name)
        config = WebhookConfig(app_secret=SECRET, verify_token="bench")
        skillet_runner, skillet_url = await _serve(build_app(config, pool=pool, queue=queue))
        bare_app = web.Application()
        bare_app.router.add_post(CLOUD_API_PATH, _bare)
        bare_runner, bare_url = await _serve(bare_app)
        try:
            await _load(skillet_url, 200, args.concurrency)  # warm both up
            await _load(bare_url, 200, args.concurrency)
            rates: dict[str, list[float]] = {"skillet": [], "bare": []}
            latencies: dict[str, list[float]] = {"skillet": [], "bare": []}
            for _ in range(args.rounds):  # interleaved, so machine noise hits both alike
                for label, url in (("skillet", skillet_url), ("bare", bare_url)):
                    rate, lat = await _load(url, args.requests, args.concurrency)
                    rates[label].append(rate)
                    latencies[label].extend(lat)
        finally:
            await skillet_runner.cleanup()
            await bare_runner.cleanup()
            await queue.delete(queue_name)
            await queue.aclose()
            await pool.close()
    finally:
        admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    for label in ("skillet", "bare"):
        lat = latencies[label]
        print(
            f"{label:8} {statistics.median(rates[label]):8.1f} req/s  "
            f"p50 {_percentile(lat, 0.50):6.1f} ms  p99 {_percentile(lat, 0.99):6.1f} ms"
        )
    ratio = statistics.median(rates["skillet"]) / statistics.median(rates["bare"])
    print(f"webhook throughput ratio: {ratio:.2f} (every request a signed, routed, enqueued text)")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configure_logging(level="WARNING")
    asyncio.run(_main(args, load_settings()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
