"""The media fetcher against real HTTP servers on 127.0.0.1 that misbehave: a body with no
length that never ends, a lookup that is not JSON, a download that redirects; and a WAHA
event's URL that is not on the WAHA server: no key, and no fetch from inside our network."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from structlog.testing import capture_logs

from conversation.media.errors import MediaTooLarge, MediaTransient, MediaUnavailable
from conversation.media.fetch import FetchConfig, MediaFetcher, MediaSource, on_server
from conversation.media.pinned import Resolve, pinned_session, public_addresses
from webhook.server import start_site

MAX_BYTES = 64 * 1024


class Hostile:
    def __init__(self) -> None:
        self.sent_bytes = 0
        self.base_url = ""
        self.keys: list[str | None] = []  # the X-Api-Key of each /file download

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/endless", self.endless)
        app.router.add_get("/v23.0/not-json", self.not_json)
        app.router.add_get("/moved", self.moved)
        app.router.add_get("/busy", self.busy)
        app.router.add_get("/file", self.file)
        return app

    async def file(self, request: web.Request) -> web.Response:
        self.keys.append(request.headers.get("X-Api-Key"))
        return web.Response(body=b"OggS-bytes")

    async def endless(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()  # chunked: no Content-Length to refuse it by
        await response.prepare(request)
        try:
            while True:
                await response.write(b"\x00" * 8192)
                self.sent_bytes += 8192
                await asyncio.sleep(0)
        except (ConnectionResetError, RuntimeError):
            return response

    async def not_json(self, request: web.Request) -> web.Response:
        return web.Response(text="<html>oops</html>")

    async def moved(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/")

    async def busy(self, request: web.Request) -> web.Response:
        return web.Response(status=503)


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    server = Hostile()
    runner, port = await start_site(server.app(), "127.0.0.1", 0)
    server.base_url = f"http://127.0.0.1:{port}"
    yield server
    await runner.cleanup()


def _fetcher(http: aiohttp.ClientSession, hostile: Hostile) -> MediaFetcher:
    return MediaFetcher(
        http,
        FetchConfig(
            graph_api_base_url=f"{hostile.base_url}/v23.0",
            media_hosts=frozenset({"lookaside.fbsbx.com"}),
            waha_base_url=hostile.base_url,
            max_bytes=MAX_BYTES,
            timeout_s=5.0,
            access_token="token-global-de-teste",
            waha_api_key="chave-waha-de-teste",
        ),
    )


async def test_an_endless_body_stops_at_the_cap(hostile: Hostile) -> None:
    async with aiohttp.ClientSession() as http:
        fetcher = _fetcher(http, hostile)
        with pytest.raises(MediaTooLarge):
            await fetcher.fetch(MediaSource("waha", None, f"{hostile.base_url}/endless"))


async def test_a_lookup_that_is_no_json_redirects_and_outages_are_told_apart(
    hostile: Hostile,
) -> None:
    async with aiohttp.ClientSession() as http:
        fetcher = _fetcher(http, hostile)
        with pytest.raises(MediaUnavailable):
            await fetcher.fetch(MediaSource("cloud_api", "not-json", None))
        with pytest.raises(MediaUnavailable):  # never followed to the metadata service
            await fetcher.fetch(MediaSource("waha", None, f"{hostile.base_url}/moved"))
        with pytest.raises(MediaTransient):
            await fetcher.fetch(MediaSource("waha", None, f"{hostile.base_url}/busy"))
        with pytest.raises(MediaUnavailable):
            await fetcher.fetch(MediaSource("cloud_api", None, None))


async def test_the_waha_key_goes_to_the_waha_servers_host_and_port_only(hostile: Hostile) -> None:
    async with aiohttp.ClientSession() as http:
        fetcher = _fetcher(http, hostile)
        assert await fetcher.fetch(MediaSource("waha", None, f"{hostile.base_url}/file"))
    assert hostile.keys == ["chave-waha-de-teste"]
    assert on_server("http://waha/api/files/a.oga", "http://waha:80")
    assert on_server("http://WAHA:3000/api/files/a.oga", "http://waha:3000/")
    assert not on_server("http://waha:3001/api/files/a.oga", "http://waha:3000")
    assert not on_server("http://waha.evil.example:3000/a.oga", "http://waha:3000")
    assert not on_server("ftp://waha:3000/a.oga", "http://waha:3000")
    assert not on_server("http://waha:3000\\@evil.example/a.oga", "http://waha:3000")
    assert not on_server("http://waha:3000@evil.example/a.oga", "http://waha:3000")


@pytest.mark.parametrize(
    "where",
    ["localhost:{port}", "127.0.0.1:{other}", "[::1]:{port}", "[::ffff:127.0.0.1]:{port}"],
)
async def test_a_waha_url_on_another_loopback_name_or_port_is_refused_unfetched(
    hostile: Hostile, where: str
) -> None:
    port = int(hostile.base_url.rsplit(":", 1)[1])
    other = Hostile()  # a second server on loopback: it must not be reached
    runner, other_port = await start_site(other.app(), "127.0.0.1", 0)
    try:
        url = "http://" + where.format(port=port, other=other_port) + "/file"
        async with aiohttp.ClientSession() as http:
            fetcher = _fetcher(http, hostile)
            with (
                capture_logs() as logs,
                pytest.raises(MediaUnavailable, match="loopback"),
            ):
                await fetcher.fetch(MediaSource("waha", None, url))
    finally:
        await runner.cleanup()
    assert hostile.keys == [] and other.keys == []  # nothing fetched, no key anywhere
    [refused] = [e for e in logs if e["event"] == "turn.media_url_refused"]
    assert refused["reason"] == "loopback"


async def test_a_name_is_resolved_once_and_connected_to_the_checked_address(
    hostile: Hostile,
) -> None:
    async def public(host: str, port: int) -> list[str]:
        return ["93.184.215.14"]

    async def rebinding(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.0.0.7"]  # one private answer refuses the host

    assert [str(a) for a in await public_addresses("files.example", 80, public)] == [
        "93.184.215.14"
    ]
    with pytest.raises(MediaUnavailable, match="privado"):
        await public_addresses("files.example", 80, rebinding)
    with pytest.raises(MediaUnavailable, match="link-local"):
        await public_addresses("169.254.169.254", 80)
    # The session connects the name to the pinned address, never asking DNS again
    # (files.example resolves nowhere; the pin is our loopback server).
    port = int(hostile.base_url.rsplit(":", 1)[1])
    pinned = [ipaddress.ip_address("127.0.0.1")]
    async with (
        pinned_session("files.example", pinned) as http,
        http.get(f"http://files.example:{port}/file") as answer,
    ):
        assert await answer.read() == b"OggS-bytes"
    assert hostile.keys == [None]


def _org_fetcher(http: aiohttp.ClientSession, resolve: Resolve | None = None) -> MediaFetcher:
    """The deployment's WAHA is elsewhere: the org's own server is the hostile one."""
    config = FetchConfig(
        graph_api_base_url="http://graph.invalid/v23.0",
        media_hosts=frozenset(),
        waha_base_url="http://waha-global.invalid:3000",
        max_bytes=MAX_BYTES,
        timeout_s=5.0,
        waha_api_key="chave-global-do-deployment",
    )
    if resolve is None:
        return MediaFetcher(http, config)
    return MediaFetcher(http, config, resolve=resolve)


async def test_an_orgs_own_waha_server_never_gets_the_global_key(hostile: Hostile) -> None:
    url = f"{hostile.base_url}/file"
    async with aiohttp.ClientSession() as http:
        fetcher = _org_fetcher(http)
        # An operator vouched for this server (private, as given); the number has no key of
        # its own: the download goes without a key, never with SKILLET_WAHA_API_KEY.
        source = MediaSource("waha", None, url, hostile.base_url, waha_server_vouched=True)
        assert await fetcher.fetch(source) == b"OggS-bytes"
        own = MediaSource(
            "waha",
            None,
            url,
            hostile.base_url,
            waha_api_key="chave-propria",
            waha_server_vouched=True,
        )
        assert await fetcher.fetch(own) == b"OggS-bytes"
    assert hostile.keys == [None, "chave-propria"]


async def test_an_org_given_waha_server_is_checked_at_every_fetch(hostile: Hostile) -> None:
    port = int(hostile.base_url.rsplit(":", 1)[1])
    asked: list[str] = []

    async def rebound(host: str, p: int) -> list[str]:
        asked.append(host)  # public when it was connected; loopback now
        return ["127.0.0.1"]

    server = f"http://org-waha.example:{port}"
    async with aiohttp.ClientSession() as http:
        fetcher = _org_fetcher(http, rebound)
        for _ in range(2):
            with capture_logs() as logs, pytest.raises(MediaUnavailable, match="loopback"):
                await fetcher.fetch(
                    MediaSource("waha", None, f"{server}/file", server, waha_api_key="chave-org")
                )
            assert [e["reason"] for e in logs if e["event"] == "turn.media_url_refused"] == [
                "loopback"
            ]
        # A literal private address given by an org is refused the same way.
        with pytest.raises(MediaUnavailable, match="loopback"):
            await fetcher.fetch(
                MediaSource("waha", None, f"{hostile.base_url}/file", hostile.base_url)
            )
    assert asked[:2] == ["org-waha.example", "org-waha.example"]  # resolved at each fetch
    assert hostile.keys == []  # nothing fetched, no key sent
