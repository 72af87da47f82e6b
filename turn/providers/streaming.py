"""Reading a 2xx model answer as it streams in: SSE events fed to a provider's accumulator,
bounded in bytes and events.

The read timeout of the HTTP session (`sock_read`) is the longest silence between bytes, so
a slow but steady stream runs as long as it keeps sending; the whole call is bounded by the
turn's own deadline, not here. What a stream may cost is bounded here: its bytes and its
events, both scaled to the output cap (`StreamLimits.for_output`). A stream over a limit is
`model_response_invalid` (not retried: the same request would stream the same flood).

A server that ignores `stream: true` and answers one JSON object is read whole (same byte
cap) and parsed by the adapter's non-streaming parser.

Exception flow: the accumulator raises ModelResponseInvalid for events that are not its wire
format, and StreamInterrupted for an error event or a stream that ended before its last
event; turn.providers.http retries an interrupted stream like a 5xx (the call is safe to
repeat) unless the error says the request itself is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from turn.errors import ModelResponseInvalid
from turn.model import ModelResponse
from turn.providers.sse import SseEvent, SseParser

# Every stream may spend this much before the per-token allowance (headers of the first
# events, pings of a slow server, a long tool call's JSON).
STREAM_BASE_BYTES = 1024 * 1024
STREAM_BASE_EVENTS = 2_000
# One output token is one event of at most a few hundred bytes on every server we know
# (OpenAI and llama.cpp repeat id/model/created in each chunk): twice that is the allowance.
STREAM_BYTES_PER_OUTPUT_TOKEN = 1024
STREAM_EVENTS_PER_OUTPUT_TOKEN = 2
ERROR_SNIPPET_CHARS = 300
# Error types a provider reports mid-stream that say the request is wrong (retrying it would
# fail the same way); every other error event is retried like a 5xx.
REJECTING_ERROR_TYPES = frozenset(
    {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}
)


@dataclass(frozen=True)
class StreamLimits:
    max_bytes: int
    max_events: int

    @classmethod
    def for_output(cls, max_output_tokens: int) -> StreamLimits:
        return cls(
            max_bytes=STREAM_BASE_BYTES + STREAM_BYTES_PER_OUTPUT_TOKEN * max_output_tokens,
            max_events=STREAM_BASE_EVENTS + STREAM_EVENTS_PER_OUTPUT_TOKEN * max_output_tokens,
        )


class StreamInterrupted(Exception):
    """The stream stopped before its answer was whole: an error event, or the end of the
    body before the provider's last event. `rejected`: the error says the request is wrong."""

    def __init__(self, problem: str, *, rejected: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.rejected = rejected


class Accumulator(Protocol):
    """A provider's answer assembled from its events (pure): the same JSON object its
    non-streaming endpoint answers, so one parser reads both."""

    @property
    def done(self) -> bool:
        """The provider's last event came (nothing after it matters)."""
        ...

    def add(self, event: SseEvent) -> None: ...

    def body(self) -> dict[str, Any]:
        """The assembled answer; StreamInterrupted if the stream did not finish it."""
        ...


def json_object(
    provider: str, text: str | bytes, what: str = "answered 2xx with"
) -> dict[str, Any]:
    """`text` as a JSON object, else ModelResponseInvalid naming `provider`."""
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        shown = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise ModelResponseInvalid(
            f"{provider} {what} a body that is not JSON: {snippet(shown)!r}"
        ) from exc
    if not isinstance(parsed, dict):
        raise ModelResponseInvalid(
            f"{provider} {what} JSON that is not an object ({type(parsed).__name__})"
        )
    return parsed


def stream_error(provider: str, error: object) -> StreamInterrupted:
    """An error object a provider sent mid-stream (`{"type", "message"}`), as an interruption."""
    kind = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = f"{kind}: {message}" if isinstance(kind, str) and kind else str(message or error)
    return StreamInterrupted(
        f"{provider} sent an error mid-stream: {snippet(text)}",
        rejected=kind in REJECTING_ERROR_TYPES,
    )


def snippet(text: str) -> str:
    return " ".join(text.split())[:ERROR_SNIPPET_CHARS]


async def read_capped(response: aiohttp.ClientResponse, max_bytes: int, provider: str) -> bytes:
    """The whole body, refused past `max_bytes`."""
    body = bytearray()
    async for chunk in response.content.iter_any():
        body += chunk
        if len(body) > max_bytes:
            raise ModelResponseInvalid(f"{provider} answer is over {max_bytes} bytes")
    return bytes(body)


async def read_model_answer(
    response: aiohttp.ClientResponse,
    *,
    provider: str,
    limits: StreamLimits,
    accumulator: Accumulator,
    parse_json: Callable[[dict[str, Any]], ModelResponse],
) -> ModelResponse:
    """The answer of a 2xx response: streamed events, or one JSON object."""
    if "text/event-stream" not in response.headers.get("content-type", "").lower():
        body = await read_capped(response, limits.max_bytes, provider)
        return parse_json(json_object(provider, body))
    parser = SseParser()
    read_bytes = events = 0
    async for chunk in response.content.iter_any():
        read_bytes += len(chunk)
        if read_bytes > limits.max_bytes:
            raise ModelResponseInvalid(
                f"{provider} stream is over {limits.max_bytes} bytes (cap for this output cap)"
            )
        for event in parser.feed(chunk):
            events += 1
            if events > limits.max_events:
                raise ModelResponseInvalid(
                    f"{provider} stream is over {limits.max_events} events "
                    "(cap for this output cap)"
                )
            accumulator.add(event)
            if accumulator.done:
                return parse_json(accumulator.body())
    parser.close()
    return parse_json(accumulator.body())
