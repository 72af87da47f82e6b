"""The person of the soak: a `skillet api` process of its own, an editor key made by the
CLI, and someone at the console who takes some conversations over, answers every customer
message that arrives while holding them, and gives them back to the agent.

Everything goes over HTTP, as the console does: the takeover, each reply (`POST
.../messages`) and the release (`answer_pending` false). What to answer is read from the
list of held conversations (`GET /v1/conversations?mode=human`, its `unanswered` count), one
request for all of them per look. A request that fails (Postgres restarting, the API's pool
reconnecting) is tried again on the next look, which reads the count again first: a reply
committed whose answer was lost is never sent twice.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from dev.processes import free_port
from tests.integration.support import SKILLET

LOOK_EVERY_S = 0.2
START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 10.0
PAGE_LIMIT = 200  # the API's largest page
REPLY_TEXT = "Oi, aqui é a Ana da loja: já vejo o frete para você."


class PersonError(RuntimeError):
    pass


def _create_key(env: dict[str, str], org: uuid.UUID) -> str:
    created = subprocess.run(
        [SKILLET, "api-keys", "create", "--org", str(org), "--role", "editor", "--json"],
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    key: str = json.loads(created.stdout.decode().strip().splitlines()[-1])["key"]
    return key


def _start_api(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SKILLET, "api"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@dataclass
class Person:
    """Drive with `start`, `take_over` (any time), `release` (awaited: it returns once every
    held conversation has nothing unanswered and is back with the agent) and `stop`."""

    env: dict[str, str]
    org: uuid.UUID
    replies: int = 0  # replies the API accepted (202)
    failed_requests: int = 0  # tried again on the next look
    held: set[uuid.UUID] = field(default_factory=set)
    _process: subprocess.Popen[bytes] | None = None
    _http: aiohttp.ClientSession | None = None
    _url: str = ""
    _answering: asyncio.Task[None] | None = None

    async def start(self) -> None:
        port = free_port()
        env = self.env | {"SKILLET_API_HOST": "127.0.0.1", "SKILLET_API_PORT": str(port)}
        key = await asyncio.to_thread(_create_key, env, self.org)
        self._process = _start_api(env)
        self._url = f"http://127.0.0.1:{port}"
        self._http = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {key}"},
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise PersonError("skillet api exited early")
            if await self._status("GET", "/healthz") == 200:
                return
            await asyncio.sleep(0.1)
        raise PersonError("skillet api did not start")

    async def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        assert self._http is not None
        url = self._url + path
        try:
            async with self._http.request(method, url, json=body, params=params) as answer:
                text = await answer.text()
                return answer.status, json.loads(text) if text else None
        except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError):
            return 0, None

    async def _status(self, method: str, path: str, body: dict[str, Any] | None = None) -> int:
        return (await self._request(method, path, body))[0]

    async def _until_ok(self, path: str, body: dict[str, Any]) -> None:
        """A takeover or a release: the same request again until it answers 200 (both are
        idempotent for the person who holds the conversation)."""
        while (status := await self._status("POST", path, body)) != 200:
            if status not in (0, 500, 502, 503):
                raise PersonError(f"POST {path} answered {status}")
            self.failed_requests += 1
            await asyncio.sleep(LOOK_EVERY_S)

    async def take_over(self, conversations: list[uuid.UUID]) -> None:
        for conversation in conversations:
            await self._until_ok(f"/v1/conversations/{conversation}/takeover", {})
            self.held.add(conversation)
        if self._answering is None:
            self._answering = asyncio.create_task(self._answer_forever())

    async def _list(self, mode: str | None) -> list[dict[str, Any]] | None:
        """Every conversation (of `mode`) as the API lists them, or None on a failure."""
        items: list[dict[str, Any]] = []
        params = {"limit": str(PAGE_LIMIT)} | ({"mode": mode} if mode else {})
        while True:
            status, page = await self._request("GET", "/v1/conversations", params=params)
            if status != 200:
                self.failed_requests += 1
                return None
            items.extend(page["items"])
            if not page["next"]:
                return items
            params["cursor"] = page["next"]

    async def find(self, contact_ids: list[str]) -> list[uuid.UUID]:
        """The conversations of these customers, found in the list as a person would."""
        while True:
            items = await self._list(None)
            if items is not None:
                break
            await asyncio.sleep(LOOK_EVERY_S)  # the API is failing over: look again
        by_contact = {item["contact_id"]: uuid.UUID(item["id"]) for item in items}
        return [by_contact[c] for c in contact_ids if c in by_contact]

    async def _unanswered(self) -> dict[uuid.UUID, int] | None:
        """The held conversations with customer messages no one answered, or None."""
        items = await self._list("human")
        if items is None:
            return None
        return {uuid.UUID(item["id"]): int(item["unanswered"]) for item in items}

    async def _look(self) -> bool:
        """Answer what waits; True when nothing held waits (as last seen)."""
        counts = await self._unanswered()
        if counts is None:
            return False
        waiting = [c for c in self.held if counts.get(c, 0) > 0]
        for conversation in waiting:
            path = f"/v1/conversations/{conversation}/messages"
            status = await self._status("POST", path, {"text": REPLY_TEXT})
            if status == 202:
                self.replies += 1
            else:
                self.failed_requests += 1
        return not waiting

    async def _answer_forever(self) -> None:
        while True:
            await self._look()
            await asyncio.sleep(LOOK_EVERY_S)

    async def release(self) -> None:
        """Every held conversation answered, then back to the agent (answer_pending false:
        nothing is left for it, so nothing is kept as mere context either)."""
        if self._answering is not None:
            self._answering.cancel()
            await asyncio.gather(self._answering, return_exceptions=True)
            self._answering = None
        while True:
            if await self._look():
                break
            await asyncio.sleep(LOOK_EVERY_S)  # replies just sent: look again
        for conversation in sorted(self.held):
            body = {"answer_pending": False}
            await self._until_ok(f"/v1/conversations/{conversation}/release", body)
        self.held.clear()

    async def stop(self) -> None:
        if self._answering is not None:
            self._answering.cancel()
            await asyncio.gather(self._answering, return_exceptions=True)
        if self._http is not None:
            await self._http.close()
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self._process.wait, 20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
