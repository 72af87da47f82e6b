"""`skillet channels add|list|remove` and a real `skillet webhook` process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from cli.main import main
from core.channel_kind import ChannelKind
from dev.processes import free_port
from tests.integration.support import create_org
from tests.integration.webhook_support import connect_number, queued_payloads
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import (
    APP_SECRET,
    VERIFY_TOKEN,
    cloud_delivery,
    cloud_signature,
    cloud_text,
    cloud_value,
    encode,
)
from turn.agent_queries import insert_agent
from worker.settings import Settings

SKILLET = str(Path(sys.executable).parent / "skillet")


@pytest.fixture(autouse=True)
def graph(cli_graph: FakeGraphApi) -> FakeGraphApi:
    """Every `channels add` here proves its number (the global token sees every number)."""
    return cli_graph


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    parsed: dict[str, object] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return parsed


def _org(capsys: pytest.CaptureFixture[str]) -> str:
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Padaria", "--id", org, "--json"]) == 0
    capsys.readouterr()
    return org


def test_add_list_remove(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = _org(capsys)
    add = ["channels", "add", "--org", org, "--kind", "cloud_api", "--address", "106540352242922"]
    assert main([*add, "--display-phone", "+55 11 4000-0000", "--json"]) == 0
    added = _json(capsys)
    assert (added["organization_id"], added["kind"], added["address"]) == (
        org,
        "cloud_api",
        "106540352242922",
    )
    assert added["display_phone"] == "+55 11 4000-0000" and added["agent_id"] is None
    assert main(["channels", "add", "--org", org, "--kind", "waha", "--address", "padaria"]) == 0
    assert capsys.readouterr().out.startswith("connected: waha  padaria  org ")

    assert main(["channels", "list", "--org", org, "--json"]) == 0
    listed = _json(capsys)["channels"]
    assert isinstance(listed, list)
    assert [(c["kind"], c["address"]) for c in listed] == [
        ("cloud_api", "106540352242922"),
        ("waha", "padaria"),
    ]
    assert main(["channels", "list"]) == 0
    assert "channels (2):" in capsys.readouterr().out

    assert main(["channels", "remove", "--kind", "waha", "--address", "padaria", "--json"]) == 0
    assert _json(capsys)["address"] == "padaria"
    assert main(["channels", "list", "--org", org, "--json"]) == 0
    assert len(_json(capsys)["channels"]) == 1  # type: ignore[arg-type]


def test_add_with_the_orgs_agent(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = _org(capsys)
    agent = asyncio.run(_agent(env.database_url, org))
    args = ["channels", "add", "--org", org, "--kind", "waha", "--address", "s1", "--json"]
    assert main([*args, "--agent", agent]) == 0
    assert _json(capsys)["agent_id"] == agent
    other = _org(capsys)
    args = ["channels", "add", "--org", other, "--kind", "waha", "--address", "s2", "--json"]
    assert main([*args, "--agent", agent]) == 1
    assert _json(capsys)["error"] == "agent_not_found"


def test_set_changes_the_agent_and_the_non_text_rule(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = _org(capsys)
    agent = asyncio.run(_agent(env.database_url, org))
    number = ["--kind", "cloud_api", "--address", "555", "--json"]
    assert main(["channels", "add", "--org", org, *number, "--reply-to-non-text"]) == 0
    added = _json(capsys)
    assert (added["reply_to_non_text"], added["agent_id"]) == (True, None)
    assert main(["channels", "set", *number, "--agent", agent, "--no-reply-to-non-text"]) == 0
    changed = _json(capsys)
    assert (changed["reply_to_non_text"], changed["agent_id"]) == (False, agent)
    assert main(["channels", "set", *number, "--no-agent"]) == 0
    cleared = _json(capsys)
    assert (cleared["reply_to_non_text"], cleared["agent_id"]) == (False, None)

    other_org_agent = asyncio.run(_agent(env.database_url, _org(capsys)))
    assert main(["channels", "set", *number, "--agent", other_org_agent]) == 1
    assert _json(capsys)["error"] == "agent_not_found"
    assert main(["channels", "set", *number]) == 1
    assert _json(capsys)["error"] == "nothing_to_change"
    assert (
        main(["channels", "set", "--kind", "waha", "--address", "x", "--no-agent", "--json"]) == 1
    )
    assert _json(capsys)["error"] == "channel_not_found"


async def _agent(database_url: str, org: str) -> str:
    conn = await asyncpg.connect(database_url)
    try:
        return str(await insert_agent(conn, uuid.UUID(org), "Bia", "Você é a Bia."))
    finally:
        await conn.close()


def test_errors_are_one_line_and_non_zero(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org, other = _org(capsys), _org(capsys)
    add = ["channels", "add", "--kind", "cloud_api", "--address", "111", "--json"]
    assert main([*add, "--org", org]) == 0
    capsys.readouterr()
    assert main([*add, "--org", other]) == 1  # a number belongs to one org
    refused = _json(capsys)
    assert refused["error"] == "channel_claimed_elsewhere" and org in str(refused["message"])
    assert main([*add[:-1], "--org", str(uuid.uuid4())]) == 1
    assert "organization_not_found" in capsys.readouterr().err
    bad = ["channels", "add", "--org", org, "--kind", "waha", "--address", "a b/c", "--json"]
    assert main(bad) == 1
    assert _json(capsys)["error"] == "invalid_address"
    assert main(["channels", "remove", "--kind", "waha", "--address", "nada", "--json"]) == 1
    assert _json(capsys)["error"] == "channel_not_found"


async def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            assert process.poll() is None, "skillet webhook exited early"
            try:
                async with http.get(url + "/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("skillet webhook did not start")


def _start_webhook(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SKILLET, "webhook"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


async def test_the_webhook_command_serves_until_sigterm(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.CLOUD_API, "111")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLET_")}
    env |= {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SKILLET_QUEUE_NAME": settings.queue_name,
        "SKILLET_WEBHOOK_HOST": "127.0.0.1",
        "SKILLET_WEBHOOK_PORT": str(port),
        "SKILLET_WHATSAPP_APP_SECRET": APP_SECRET,
        "SKILLET_WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN,
        "SKILLET_LOG_FORMAT": "json",
    }
    process = _start_webhook(env)
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_healthy(url, process)
        body = encode(cloud_delivery(cloud_value("111", [cloud_text("wamid.cli", "oi")])))
        async with aiohttp.ClientSession() as http:
            headers = {"X-Hub-Signature-256": cloud_signature(body)}
            async with http.post(url + "/webhooks/whatsapp", data=body, headers=headers) as answer:
                assert answer.status == 200
                assert (await answer.json())["enqueued"] == 1
            params = {
                "hub.mode": "subscribe",
                "hub.verify_token": VERIFY_TOKEN,
                "hub.challenge": "7",
            }
            async with http.get(url + "/webhooks/whatsapp", params=params) as handshake:
                assert await handshake.text() == "7"
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.to_thread(process.communicate, timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    # JSON log mode (as in production): the process's last line is JSON too.
    assert json.loads(out.decode())["message"] == "webhook stopped"
    assert VERIFY_TOKEN not in err.decode()  # no access log with the handshake's query string
    assert [p["message_id"] for p in await queued_payloads(settings)] == ["wamid.cli"]


def test_a_numbers_own_token_is_proven_stored_masked_and_moved(
    env: Settings,
    db: asyncpg.Connection,
    graph: FakeGraphApi,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    org, other = _org(capsys), _org(capsys)
    graph.own("EAAG-token-da-padaria-1234", "777000111")
    mine, wrong = tmp_path / "token.txt", tmp_path / "wrong.txt"
    mine.write_text("  EAAG-token-da-padaria-1234\n", encoding="utf-8")
    wrong.write_text("EAAG-token-de-outra-loja-99\n", encoding="utf-8")
    add = ["channels", "add", "--kind", "cloud_api", "--address", "777000111", "--json"]

    assert main([*add, "--org", org, "--access-token-file", str(wrong)]) == 1
    refused = _json(capsys)
    assert refused["error"] == "channel_not_verified" and "phone_number_id" in str(refused)
    assert main([*add, "--org", org]) == 1  # nor does the global token see it
    assert _json(capsys)["error"] == "channel_not_verified"
    assert main(["channels", "list", "--json"]) == 0
    assert _json(capsys)["channels"] == []

    assert main([*add, "--org", org, "--access-token-file", str(mine), "--waba-id", "4242"]) == 0
    added = _json(capsys)
    assert (added["access_token"], added["waba_id"], added["status"]) == (
        "****1234",
        "4242",
        "active",
    )
    assert "EAAG-token-da-padaria-1234" not in json.dumps(added)
    assert main(["channels", "list"]) == 0
    listing = capsys.readouterr().out
    assert "token ****1234" in listing and "EAAG" not in listing
    stored = asyncio.run(_stored_token(env.database_url))
    assert stored == "EAAG-token-da-padaria-1234"  # stripped of its whitespace

    number = ["--kind", "cloud_api", "--address", "777000111", "--json"]
    assert main(["channels", "set", *number, "--access-token-file", str(wrong)]) == 1
    assert _json(capsys)["error"] == "channel_not_verified"
    assert main([*add, "--org", other, "--access-token-file", str(mine)]) == 1
    claimed = _json(capsys)
    assert claimed["error"] == "channel_claimed_elsewhere" and "channels move" in str(claimed)

    assert main(["channels", "move", *number, "--to", other]) == 0
    moved = _json(capsys)
    assert (moved["organization_id"], moved["moved_from"]) == (other, org)
    assert moved["access_token"] == "****1234"


async def _stored_token(database_url: str) -> str:
    conn = await asyncpg.connect(database_url)
    try:
        token: str = await conn.fetchval("select access_token from channel_secrets")
        return token
    finally:
        await conn.close()
