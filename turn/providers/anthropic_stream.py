"""Messages API streaming: named events assembled into the message the non-streaming
endpoint would answer (pure), so `anthropic.parse_response` reads both.

Wire (`stream: true`): `message_start` (the message with empty content, its model and the
input usage), then per content block `content_block_start` (index, the block: `text`, or
`tool_use` with id and name and an empty input), `content_block_delta`s (`text_delta` text,
`input_json_delta` partial_json pieces of the tool input, `thinking_delta` /
`signature_delta` for blocks we do not use) and `content_block_stop`; then `message_delta`
(`delta.stop_reason` and the usage so far: its counts replace message_start's), and
`message_stop`. `ping` may come anywhere; `error` (`{"type": "error", "error": {...}}`)
ends the stream with a failure. Unknown event types are ignored (the API may add some).

A tool input streams in as pieces of JSON text; broken JSON (an answer cut by the output
cap) becomes an empty input marked `input_invalid`, so the tool answers with a teaching
message instead of failing the turn.

Finished: `message_stop`, or the end of the body after a `message_delta` with a stop_reason;
the end before either is an interrupted stream.
"""

from __future__ import annotations

import json
from typing import Any

from turn.errors import ModelResponseInvalid
from turn.providers.sse import SseEvent
from turn.providers.streaming import StreamInterrupted, json_object, stream_error

PROVIDER = "anthropic"
# Delta type -> the key of its piece of text.
_DELTA_FIELDS = {"text_delta": "text", "input_json_delta": "partial_json"}


class AnthropicStream:
    def __init__(self) -> None:
        self._done = False
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._pieces: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None

    @property
    def done(self) -> bool:
        return self._done

    def add(self, event: SseEvent) -> None:
        data = json_object(PROVIDER, event.data, "streamed an event with")
        kind = data.get("type", event.event)
        if kind == "error":
            raise stream_error(PROVIDER, data.get("error"))
        if kind == "message_start":
            self._start(data.get("message"))
        elif kind == "content_block_start":
            self._block_start(data)
        elif kind == "content_block_delta":
            self._delta(data)
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            self._done = True
        # ping, content_block_stop and event types added later carry nothing we use.

    def _start(self, message: object) -> None:
        if not isinstance(message, dict):
            raise ModelResponseInvalid(f"{PROVIDER} message_start has no message object")
        self._message = message
        self._usage_from(message.get("usage"))

    def _block_start(self, data: dict[str, Any]) -> None:
        index, block = data.get("index"), data.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise ModelResponseInvalid(
                f"{PROVIDER} content_block_start has no index and content_block"
            )
        self._blocks[index] = dict(block)
        self._pieces[index] = []

    def _delta(self, data: dict[str, Any]) -> None:
        index, delta = data.get("index"), data.get("delta")
        if not isinstance(delta, dict) or not isinstance(index, int) or index not in self._blocks:
            raise ModelResponseInvalid(
                f"{PROVIDER} content_block_delta for a block that did not start"
            )
        field = _DELTA_FIELDS.get(str(delta.get("type")))
        if field is None:  # thinking, signature, citations...: not part of the reply
            return
        piece = delta.get(field)
        if not isinstance(piece, str):
            raise ModelResponseInvalid(f"{PROVIDER} {delta.get('type')} has no string {field}")
        self._pieces[index].append(piece)

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            self._stop_reason = delta["stop_reason"]
        self._usage_from(data.get("usage"))

    def _usage_from(self, usage: object) -> None:
        """Counts a later event sends replace earlier ones (message_delta's are cumulative)."""
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise ModelResponseInvalid(f"{PROVIDER} usage is not an object")
        self._usage.update({k: v for k, v in usage.items() if v is not None})

    def body(self) -> dict[str, Any]:
        if self._message is None or (not self._done and self._stop_reason is None):
            raise StreamInterrupted(f"{PROVIDER} stream ended before message_stop")
        content: list[dict[str, Any]] = []
        for index in sorted(self._blocks):
            block = dict(self._blocks[index])
            joined = "".join(self._pieces[index])
            if block.get("type") == "text":
                block["text"] = str(block.get("text") or "") + joined
            elif block.get("type") == "tool_use" and joined:
                block.update(_streamed_input(joined))
            content.append(block)
        return {
            **self._message,
            "content": content,
            "stop_reason": self._stop_reason or self._message.get("stop_reason"),
            "usage": self._usage or None,
        }


def _streamed_input(text: str) -> dict[str, Any]:
    """The block fields for a streamed tool input: `input`, and `input_invalid` if broken."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return {"input": {}, "input_invalid": True}
    return {"input": parsed}
