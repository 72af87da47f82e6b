"""The media fetcher against real HTTP servers on 127.0.0.1 that misbehave: a body with no
length that never ends, a lookup that is not JSON, a download that redirects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from turn.media.errors import MediaTooLarge, MediaTransient, MediaUnavailable
from turn.media.fetch import FetchConfig, MediaFetcher, MediaSource
from webhook.server import start_site

MAX_BYTES = 64 * 1024


class Hostile:
    def __init__(self) -> None:
        self.sent_bytes = 0
        self.base_url = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/endless", self.endless)
        app.router.add_get("/v23.0/not-json", self.not_json)
        app.router.add_get("/moved", self.moved)
        app.router.add_get("/busy", self.busy)
        return app

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
