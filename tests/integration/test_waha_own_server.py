"""A number's own WAHA server, against a real HTTP server on 127.0.0.1: the deployment's key
never goes there, and one an org's admin gave is resolved and checked at every send (a name
re-pointed at a private or loopback address after it was connected is refused then)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from channels.credential_queries import SendCredentials
from channels.errors import SendFailure
from channels.http import RetryPolicy
from channels.waha import WahaConfig, WahaSender
from delivery.contract import Recipient, Route
from delivery.errors import SendError
from delivery.outbound_file import FileMessage, OutboundFile
from delivery.outbox_queries import OutboxRow
from webhook.server import start_site

GLOBAL_KEY = "chave-global-do-deployment"


class OrgWaha:
    def __init__(self) -> None:
        self.keys: list[str | None] = []
        self.base_url = ""
        self.port = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/sendText", self.send_text)
        return app

    async def send_text(self, request: web.Request) -> web.Response:
        self.keys.append(request.headers.get("X-Api-Key"))
        return web.json_response({"id": f"true_5511@c.us_{len(self.keys)}"})


@pytest.fixture
async def org_waha() -> AsyncIterator[OrgWaha]:
    server = OrgWaha()
    runner, server.port = await start_site(server.app(), "127.0.0.1", 0)
    server.base_url = f"http://127.0.0.1:{server.port}"
    yield server
    await runner.cleanup()


def _row() -> OutboxRow:
    return OutboxRow(uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), "Olá!", "pending")


RECIPIENT = Recipient("whatsapp", "5511999990000", Route("waha", "sessao-da-org"))


def _sender(http: aiohttp.ClientSession, asked: list[str] | None = None) -> WahaSender:
    async def loopback(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        return ["127.0.0.1"]  # public when it was connected; loopback now

    config = WahaConfig(base_url="http://waha-global.invalid:3000", api_key=GLOBAL_KEY)
    return WahaSender(http, config, RetryPolicy(max_attempts=1), resolve=loopback)


async def test_an_operators_server_is_used_as_given_without_the_global_key(
    org_waha: OrgWaha,
) -> None:
    async with aiohttp.ClientSession() as http:
        sender = _sender(http)
        vouched = SendCredentials(waha_base_url=org_waha.base_url, waha_server_vouched=True)
        assert await sender.send(_row(), RECIPIENT, vouched) == ["true_5511@c.us_1"]
        own_key = SendCredentials(
            waha_base_url=org_waha.base_url, waha_api_key="chave-da-org", waha_server_vouched=True
        )
        assert await sender.send(_row(), RECIPIENT, own_key)
    assert org_waha.keys == [None, "chave-da-org"]  # never SKILLET_WAHA_API_KEY


async def test_an_org_given_server_is_checked_at_every_send(org_waha: OrgWaha) -> None:
    asked: list[str] = []
    async with aiohttp.ClientSession() as http:
        sender = _sender(http, asked)
        named = SendCredentials(
            waha_base_url=f"http://org-waha.example:{org_waha.port}", waha_api_key="chave-da-org"
        )
        for _ in range(2):
            with pytest.raises(SendError) as refused:
                await sender.send(_row(), RECIPIENT, named)
            assert refused.value.code == SendFailure.REJECTED.value
            assert "loopback" in refused.value.message
        literal = SendCredentials(waha_base_url=org_waha.base_url, waha_api_key="chave-da-org")
        with pytest.raises(SendError, match="loopback"):
            await sender.send(_row(), RECIPIENT, literal)
    assert asked[:2] == ["org-waha.example", "org-waha.example"]  # resolved at each send
    assert org_waha.keys == []  # nothing reached the server


async def test_the_deployments_own_server_gets_the_global_key_unchecked(
    org_waha: OrgWaha,
) -> None:
    async with aiohttp.ClientSession() as http:
        config = WahaConfig(base_url=org_waha.base_url, api_key=GLOBAL_KEY)
        sender = WahaSender(http, config, RetryPolicy(max_attempts=1))
        assert await sender.send(_row(), RECIPIENT, SendCredentials())
    assert org_waha.keys == [GLOBAL_KEY]


async def test_a_file_to_an_org_given_server_is_checked_the_same_way(org_waha: OrgWaha) -> None:
    file = OutboundFile(
        "troca", "assets/tabela.pdf", "k", "application/pdf", FileMessage.DOCUMENT, 4, "t.pdf"
    )
    row = dataclasses.replace(_row(), file=file)
    async with aiohttp.ClientSession() as http:
        named = SendCredentials(
            waha_base_url=f"http://org-waha.example:{org_waha.port}", waha_api_key="chave-da-org"
        )
        with pytest.raises(SendError, match="loopback"):
            await _sender(http).send_file(row, RECIPIENT, named, b"%PDF")
    assert org_waha.keys == []
