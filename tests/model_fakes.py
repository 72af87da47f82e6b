"""Local HTTP servers speaking Anthropic's Messages API and OpenAI's Chat Completions.

Each records every request (headers, parsed JSON, raw bytes), answers from `script` first
(in order), then like a tiny model: it calls `read_skill_reference` for the first injected
skill that lists a reference, answers in text once a tool result came back, and simulates
the provider's prompt cache (a repeated cacheable prefix is read, a new one written), with
about 4 bytes per token.

A request with `stream: true` gets its answer as server-sent events, written as a chunked
body one event at a time with `pause_s` between events (a slow but steady server); the
OpenAI fake sends usage only when asked (`stream_options.include_usage`) and `send_usage`
is on. A scripted `Answer` with `chunks` sends exactly those bytes, `pause_s` apart, then
goes silent for `stall_s` (a stalled server) before ending the body.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from webhook.server import start_site

BYTES_PER_TOKEN = 4
_SKILL_RE = re.compile(r'<skill name="([^"]+)">')
_REFS_RE = re.compile(r"Referências \(use read_skill_reference\): (references/\S+?)(?:,|\n|$)")


@dataclass
class Answer:
    status: int = 200
    body: Any = field(default_factory=dict)  # JSON, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    chunks: list[bytes] | None = None  # an event stream, sent chunk by chunk
    pause_s: float = 0.0  # between chunks
    stall_s: float = 0.0  # silence after the last chunk, before the body ends


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: JSON data (or a raw string), optionally named."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def pieces(text: str, size: int = 8) -> list[str]:
    """`text` in pieces of about `size` characters, as a model streams it."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass
class Received:
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    cached_prefix_bytes: int = 0  # bytes of the request the provider could serve from cache


def canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def first_reference(system_text: str) -> tuple[str, str] | None:
    """(skill, path) of the first injected skill listing a reference, as our prompt renders it."""
    skill = _SKILL_RE.search(system_text)
    refs = _REFS_RE.search(system_text)
    if skill is None or refs is None:
        return None
    return skill.group(1), refs.group(1)


class _FakeModelApi:
    path = ""

    def __init__(self, api_key: str | None) -> None:
        self.api_key = api_key
        self.received: list[Received] = []
        self.script: list[Answer] = []
        self.base_url = ""
        self.pause_s = 0.0  # between the events of a streamed answer
        self.max_tokens_chars: int | None = None  # cut text answers here, as an output cap
        # Close the connection after each stream though keep-alive was offered (llama.cpp).
        self.close_after_stream = False
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()

    async def start(self) -> _FakeModelApi:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        self._runner, port = await start_site(app, "127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        self._closing.set()  # a stalled answer ends now
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        received = Received(dict(request.headers), body, raw)
        self.received.append(received)
        if self.script:
            return await self._scripted(request, self.script.pop(0))
        if not self._authorized(request):
            return web.json_response(
                {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
                status=401,
            )
        answer = self.answer(received)
        if body.get("stream") is True:
            events = list(self.events(answer, body))
            return await self._stream(request, events, self.pause_s, 0.0)
        return web.json_response(answer)

    async def _scripted(self, request: web.Request, answer: Answer) -> web.StreamResponse:
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if answer.chunks is not None:
            return await self._stream(request, answer.chunks, answer.pause_s, answer.stall_s)
        if isinstance(answer.body, bytes):
            return web.Response(body=answer.body, status=answer.status, headers=answer.headers)
        return web.json_response(answer.body, status=answer.status, headers=answer.headers)

    async def _stream(
        self, request: web.Request, chunks: list[bytes], pause_s: float, stall_s: float
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            for index, chunk in enumerate(chunks):
                if index and pause_s:
                    await asyncio.sleep(pause_s)
                await response.write(chunk)
            if stall_s:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), stall_s)
            await response.write_eof()
            if self.close_after_stream and request.transport is not None:
                request.transport.close()
        except (ConnectionResetError, ConnectionError):
            pass  # the client gave up (its read timeout): nothing left to send
        return response

    def _cut(self, text: str) -> tuple[str, bool]:
        """`text` as an output cap of `max_tokens_chars` leaves it, and whether it was cut."""
        if self.max_tokens_chars is None or len(text) <= self.max_tokens_chars:
            return text, False
        return text[: self.max_tokens_chars], True

    def events(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        raise NotImplementedError

    def _authorized(self, request: web.Request) -> bool:
        raise NotImplementedError

    def answer(self, received: Received) -> dict[str, Any]:
        raise NotImplementedError


class FakeAnthropic(_FakeModelApi):
    """POST /v1/messages; caches tools + system blocks up to the last cache_control."""

    path = "/v1/messages"

    def __init__(self, api_key: str | None = "sk-ant-test-key") -> None:
        super().__init__(api_key)
        self._cached: set[bytes] = set()

    def _authorized(self, request: web.Request) -> bool:
        return self.api_key is None or request.headers.get("x-api-key") == self.api_key

    def answer(self, received: Received) -> dict[str, Any]:
        body = received.body
        system = body.get("system") or []
        marks = [i for i, block in enumerate(system) if "cache_control" in block]
        write = read = 0
        if marks:
            prefix = canonical({"tools": body.get("tools", []), "system": system[: marks[-1] + 1]})
            received.cached_prefix_bytes = len(prefix)
            digest = hashlib.sha256(prefix).digest()
            if digest in self._cached:
                read = len(prefix) // BYTES_PER_TOKEN
            else:
                write = len(prefix) // BYTES_PER_TOKEN
                self._cached.add(digest)
        uncached = max(0, len(received.raw) // BYTES_PER_TOKEN - read - write)
        return {
            "id": f"msg_{len(self.received):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "?"),
            **self._content(body),
            "usage": {
                "input_tokens": uncached,
                "output_tokens": 12,
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
            },
        }

    def events(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        usage = answer["usage"]
        start = {
            **answer,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        yield sse_event({"type": "message_start", "message": start}, "message_start")
        yield sse_event({"type": "ping"}, "ping")
        for index, block in enumerate(answer["content"]):
            if block["type"] == "text":
                opened, kind, key = {"type": "text", "text": ""}, "text_delta", "text"
                parts = pieces(block["text"])
            else:
                opened = {**block, "input": {}}
                kind, key = "input_json_delta", "partial_json"
                parts = pieces(json.dumps(block["input"], ensure_ascii=False))
            yield sse_event(
                {"type": "content_block_start", "index": index, "content_block": opened},
                "content_block_start",
            )
            for part in parts:
                delta = {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": kind, key: part},
                }
                yield sse_event(delta, "content_block_delta")
            yield sse_event({"type": "content_block_stop", "index": index}, "content_block_stop")
        end = {"stop_reason": answer["stop_reason"], "stop_sequence": None}
        delta = {
            "type": "message_delta",
            "delta": end,
            "usage": {"output_tokens": usage["output_tokens"]},
        }
        yield sse_event(delta, "message_delta")
        yield sse_event({"type": "message_stop"}, "message_stop")

    def _content(self, body: dict[str, Any]) -> dict[str, Any]:
        last = (body.get("messages") or [{}])[-1]
        results = [
            b for b in last.get("content", []) if isinstance(b, dict) and b["type"] == "tool_result"
        ]
        if results:
            line = str(results[-1]["content"]).strip().splitlines()[0]
            text = f"Segundo a referência: {line}"
            return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        system_text = "\n".join(block["text"] for block in body.get("system") or [])
        reference = first_reference(system_text)
        if reference is not None:
            call = {
                "type": "tool_use",
                "id": f"toolu_{len(self.received):04d}",
                "name": "read_skill_reference",
                "input": {"skill_name": reference[0], "path": reference[1]},
            }
            return {"content": [call], "stop_reason": "tool_use"}
        text, cut = self._cut("Olá! Como posso ajudar?")
        stop_reason = "max_tokens" if cut else "end_turn"
        return {"content": [{"type": "text", "text": text}], "stop_reason": stop_reason}


class FakeOpenAI(_FakeModelApi):
    """POST /v1/chat/completions; caches the longest prefix shared with the previous request
    of the same prompt_cache_key (tools, then the system message)."""

    path = "/v1/chat/completions"

    def __init__(self, api_key: str | None = "sk-openai-test-key") -> None:
        super().__init__(api_key)
        self._last_by_key: dict[str, bytes] = {}
        self.send_usage = True  # False: a server that does not know include_usage

    def events(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        head = {"id": answer["id"], "object": "chat.completion.chunk", "model": answer["model"]}
        choice = answer["choices"][0]
        message = choice["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return sse_event(
                {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            )

        yield chunk({"role": "assistant", "content": ""})
        if message.get("content"):
            for part in pieces(message["content"]):
                yield chunk({"content": part})
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            first = {"index": index, "id": call["id"], "type": "function"}
            yield chunk(
                {"tool_calls": [{**first, "function": {"name": function["name"], "arguments": ""}}]}
            )
            for part in pieces(function["arguments"]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        yield chunk({}, choice["finish_reason"])
        include_usage = (body.get("stream_options") or {}).get("include_usage") is True
        if include_usage and self.send_usage:
            yield sse_event({**head, "choices": [], "usage": answer["usage"]})
        yield sse_event("[DONE]")

    def _authorized(self, request: web.Request) -> bool:
        expected = f"Bearer {self.api_key}"
        return self.api_key is None or request.headers.get("authorization") == expected

    def answer(self, received: Received) -> dict[str, Any]:
        body = received.body
        messages = body.get("messages") or []
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        prefix = canonical(body.get("tools", [])) + system.encode()
        key = body.get("prompt_cache_key")
        cached = 0
        if key is not None:
            previous = self._last_by_key.get(key, b"")
            while cached < min(len(prefix), len(previous)) and prefix[cached] == previous[cached]:
                cached += 1
            self._last_by_key[key] = prefix
        received.cached_prefix_bytes = cached
        return {
            "id": f"chatcmpl-{len(self.received):04d}",
            "object": "chat.completion",
            "model": body.get("model", "?"),
            "choices": [{"index": 0, **self._message(messages, system)}],
            "usage": {
                "prompt_tokens": len(received.raw) // BYTES_PER_TOKEN,
                "completion_tokens": 9,
                "total_tokens": len(received.raw) // BYTES_PER_TOKEN + 9,
                "prompt_tokens_details": {"cached_tokens": cached // BYTES_PER_TOKEN},
            },
        }

    def _message(self, messages: list[dict[str, Any]], system: str) -> dict[str, Any]:
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            line = str(last["content"]).strip().splitlines()[0]
            message = {"role": "assistant", "content": f"Segundo a referência: {line}"}
            return {"message": message, "finish_reason": "stop"}
        reference = first_reference(system)
        if reference is not None:
            arguments = json.dumps({"skill_name": reference[0], "path": reference[1]})
            call = {
                "id": f"call_{len(self.received):04d}",
                "type": "function",
                "function": {"name": "read_skill_reference", "arguments": arguments},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            return {"message": message, "finish_reason": "tool_calls"}
        text, cut = self._cut("Olá! Como posso ajudar?")
        message = {"role": "assistant", "content": text}
        return {"message": message, "finish_reason": "length" if cut else "stop"}
