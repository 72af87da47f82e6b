"""`skillet api` as its own process: serves on SKILLET_API_HOST/PORT, stops on SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import subprocess
import time
from collections.abc import Iterator

import aiohttp
import asyncpg

from api.keys import Role, mint_key
from dev.processes import free_port
from tests.integration.api_support import create_key
from tests.integration.support import SKILLET, create_org, worker_env
from tests.integration.whatsapp_fakes import FakeWaha
from tests.whatsapp_payloads import WAHA_API_KEY
from worker.settings import Settings

# A Python process importing the app on a loaded 2-core machine can take many seconds.
START_DEADLINE_S = 60


async def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                assert process.stderr is not None
                tail = process.stderr.read().decode(errors="replace")[-2000:]
                raise AssertionError(f"skillet api exited early: {tail}")
            try:
                async with http.get(url + "/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("skillet api did not start")


@contextlib.contextmanager
def _api_process(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """`skillet api`, killed if still running at the end; its pipes closed whatever happened
    (left to the garbage collector, they fail a later test with a ResourceWarning)."""
    with subprocess.Popen(
        [SKILLET, "api"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


async def test_the_api_command_serves_a_key_made_by_the_cli_until_sigterm(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    port = free_port()
    env = worker_env(settings, SKILLET_API_HOST="127.0.0.1", SKILLET_API_PORT=str(port))
    created = await asyncio.to_thread(
        subprocess.run,
        [SKILLET, "api-keys", "create", "--org", str(org), "--role", "editor", "--json"],
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    key = json.loads(created.stdout.decode().strip().splitlines()[-1])["key"]
    with _api_process(env) as process:
        url = f"http://127.0.0.1:{port}"
        await _wait_healthy(url, process)
        async with aiohttp.ClientSession() as http:
            headers = {"Authorization": f"Bearer {key}"}
            async with http.get(url + "/v1/skills", headers=headers) as answer:
                assert answer.status == 200
                assert await answer.json() == {"items": [], "next": None}
            async with http.get(url + "/v1/skills") as anonymous:
                assert anonymous.status == 401
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.to_thread(process.communicate, timeout=20)
    assert process.returncode == 0, err.decode()[-500:]
    # JSON log mode (as in production): the process's last line is JSON too.
    assert json.loads(out.decode())["message"] == "api stopped"
    assert key not in err.decode()  # the key never reaches a log


async def test_the_api_command_limits_failed_keys_by_default_behind_a_trusted_proxy(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.VIEWER)
    port = free_port()
    env = worker_env(
        settings,
        SKILLET_API_HOST="127.0.0.1",
        SKILLET_API_PORT=str(port),
        SKILLET_API_TRUSTED_PROXIES="127.0.0.1",
    )
    # The process counts under the default key prefix in the machine's Redis: addresses of
    # this run only (TEST-NET-2 space, random), so no other run's counts are seen.
    guesser, holder = (f"198.18.{random.randrange(256)}.{random.randrange(256)}" for _ in "ab")
    with _api_process(env) as process:
        url = f"http://127.0.0.1:{port}"
        try:
            await _wait_healthy(url, process)
            async with aiohttp.ClientSession() as http:

                async def skills(bearer: str, address: str) -> int:
                    headers = {"Authorization": f"Bearer {bearer}", "X-Forwarded-For": address}
                    async with http.get(url + "/v1/skills", headers=headers) as answer:
                        return answer.status

                assert [await skills(mint_key().key, guesser) for _ in range(20)] == [401] * 20
                assert await skills(mint_key().key, guesser) == 429
                assert await skills(key, holder) == 200
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.communicate, timeout=20)


async def test_the_api_process_refuses_a_private_waha_server_from_an_orgs_admin(
    settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    """An org's admin cannot make the API's verification call a private address."""
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    fake_waha.sessions.add("loja-x")
    port = free_port()
    env = worker_env(settings, SKILLET_API_HOST="127.0.0.1", SKILLET_API_PORT=str(port))
    with _api_process(env) as process:
        url = f"http://127.0.0.1:{port}"
        body = {
            "kind": "waha",
            "address": "loja-x",
            "waha_base_url": fake_waha.base_url,  # 127.0.0.1: a private address
            "waha_api_key": WAHA_API_KEY,
        }
        try:
            await _wait_healthy(url, process)
            async with aiohttp.ClientSession() as http:
                headers = {"Authorization": f"Bearer {admin}"}
                async with http.post(url + "/v1/channels", json=body, headers=headers) as answer:
                    assert answer.status == 422
                    refused = await answer.json()
            assert refused["error"] == "channel_not_verified" and "recusada" in refused["message"]
            assert "loja-x" not in fake_waha.session_lookups  # never asked
            assert await db.fetchval("select count(*) from channels") == 0
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.communicate, timeout=20)
