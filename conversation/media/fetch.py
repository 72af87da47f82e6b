"""Downloading a customer's media from the provider, bounded, the credentials kept on their host.

Cloud API: `GET {graph}/{media_id}` with the number's token answers the file's URL; that URL
gets the same token only when its host is one of `media_hosts` (Meta's) or the Graph API
base's own host, else it is refused (a token never leaves for a host we did not name).
WAHA: the event's URL, with an API key only when it is on the WAHA server's host and port: a
number with a server of its own sends that server its own key (never the deployment's
SKILLET_WAHA_API_KEY), a number without one the deployment's server the global key. A URL
anywhere else gets no key. A host the deployment did not name (any other URL, and a number's
own server unless an operator vouched for it) must resolve, at this fetch, to public
addresses only (conversation.media.pinned: checked, then connected to exactly those), so neither an
event nor an org's server that re-points its name can make the worker fetch from inside our
network.
The body is counted while it is read: past `max_bytes` the download stops (MediaTooLarge).
429/5xx, unreachable and timeouts are MediaTransient (the turn retries); other answers are
MediaUnavailable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp

from conversation.media.errors import MediaTooLarge, MediaTransient, MediaUnavailable
from conversation.media.pinned import Resolve, pinned_session, public_addresses
from core.address_guard import system_resolve
from core.url_origin import origin_of

_CHUNK_BYTES = 65_536
_LOOKUP_MAX_BYTES = 16_384  # the Graph API's media object: a small JSON


@dataclass(frozen=True)
class FetchConfig:
    graph_api_base_url: str
    media_hosts: frozenset[str]
    waha_base_url: str
    max_bytes: int
    timeout_s: float
    access_token: str | None = field(default=None, repr=False)  # the global fallbacks
    waha_api_key: str | None = field(default=None, repr=False)
    allow_private: bool = False  # development: a number's own WAHA server is not checked


@dataclass(frozen=True)
class MediaSource:
    """Where one message's media is, and the number's own secrets (None: the global)."""

    channel_kind: str  # 'cloud_api' | 'waha'
    media_id: str | None
    url: str | None
    waha_base_url: str | None = None
    access_token: str | None = field(default=None, repr=False)
    waha_api_key: str | None = field(default=None, repr=False)
    waha_server_vouched: bool = False  # an operator gave waha_base_url: used as given


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def on_server(url: str, server: str) -> bool:
    """Whether `url` is on the WAHA server `server`: same host and same port."""
    origin = origin_of(url)
    return origin is not None and origin == origin_of(server)


class MediaFetcher:
    def __init__(
        self,
        http: aiohttp.ClientSession,
        config: FetchConfig,
        *,
        resolve: Resolve = system_resolve,
    ) -> None:
        self._http = http
        self._config = config
        self._resolve = resolve

    async def fetch(self, source: MediaSource) -> bytes:
        if source.channel_kind == "cloud_api" and source.media_id is not None:
            return await self._fetch_cloud(source)
        if source.channel_kind == "waha" and source.url is not None:
            return await self._fetch_waha(source)
        raise MediaUnavailable("nothing identifies this media")

    async def _fetch_cloud(self, source: MediaSource) -> bytes:
        token = source.access_token or self._config.access_token
        if token is None:
            raise MediaUnavailable("no access token for this number")
        headers = {"Authorization": f"Bearer {token}"}
        base = self._config.graph_api_base_url.rstrip("/")
        lookup = await self._get(
            f"{base}/{quote(source.media_id or '', safe='')}", headers, _LOOKUP_MAX_BYTES
        )
        url = _media_url(lookup)
        allowed = {*self._config.media_hosts, host_of(base)}
        if host_of(url) not in allowed or urlsplit(url).scheme not in ("https", "http"):
            raise MediaUnavailable(f"the media URL's host {host_of(url)!r} is not trusted")
        return await self._get(url, headers, self._config.max_bytes)

    async def _fetch_waha(self, source: MediaSource) -> bytes:
        url = source.url or ""
        own = source.waha_base_url
        if own is not None and on_server(url, own):
            # The number's own server: its own key only, never the deployment's. Unless an
            # operator vouched for it, it is resolved and checked now, and pinned.
            headers = {"X-Api-Key": source.waha_api_key} if source.waha_api_key else {}
            if source.waha_server_vouched or self._config.allow_private:
                return await self._get(url, headers, self._config.max_bytes)
            return await self._get_checked(url, headers)
        if own is None and on_server(url, self._config.waha_base_url):
            key = source.waha_api_key or self._config.waha_api_key  # the deployment's server
            return await self._get(url, {"X-Api-Key": key} if key else {}, self._config.max_bytes)
        # Not the WAHA server: no key, and only to a public address (checked now, pinned).
        return await self._get_checked(url, {})

    async def _get_checked(self, url: str, headers: Mapping[str, str]) -> bytes:
        """`url` fetched from its host's addresses resolved now, every one public."""
        origin = origin_of(url)
        if origin is None:
            raise MediaUnavailable(f"the media URL {url[:100]!r} is no http(s) URL")
        addresses = await public_addresses(*origin, resolve=self._resolve)
        async with pinned_session(origin[0], addresses) as http:
            return await self._get(url, headers, self._config.max_bytes, http=http)

    async def _get(
        self,
        url: str,
        headers: Mapping[str, str],
        max_bytes: int,
        *,
        http: aiohttp.ClientSession | None = None,
    ) -> bytes:
        timeout = aiohttp.ClientTimeout(total=self._config.timeout_s)
        try:
            async with (http or self._http).get(
                url, headers=headers, timeout=timeout, allow_redirects=False
            ) as response:
                if response.status == 429 or response.status >= 500:
                    raise MediaTransient(f"HTTP {response.status} from {host_of(url)}")
                if response.status != 200:
                    raise MediaUnavailable(f"HTTP {response.status} from {host_of(url)}")
                declared = response.content_length
                if declared is not None and declared > max_bytes:
                    raise MediaTooLarge(f"{declared} bytes declared, at most {max_bytes}")
                return await _read_bounded(response, max_bytes)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise MediaTransient(f"{host_of(url)}: {exc!r}"[:300]) from exc


async def _read_bounded(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.content.iter_chunked(_CHUNK_BYTES):
        total += len(chunk)
        if total > max_bytes:
            raise MediaTooLarge(f"more than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _media_url(body: bytes) -> str:
    try:
        document: Any = json.loads(body)
    except ValueError as exc:
        raise MediaUnavailable("the Graph API's media object is not JSON") from exc
    url = document.get("url") if isinstance(document, dict) else None
    if not isinstance(url, str) or not url:
        raise MediaUnavailable("the Graph API's media object has no url")
    return url
