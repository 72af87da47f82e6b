"""Chat Completions streaming: `chat.completion.chunk` events assembled into the answer the
non-streaming endpoint would give (pure), so `openai_compat.parse_response` reads both.

Wire (`stream: true`, `stream_options: {"include_usage": true}`): `data: {chunk}` events,
each `choices[0].delta` carrying a piece of `content` and/or `tool_calls` pieces keyed by
`index` (the first piece of a call has its `id` and `function.name`, later ones append to
`function.arguments`); the choice's `finish_reason` comes on its last chunk; then one chunk
with `choices: []` and the `usage`; then `data: [DONE]`. A server that does not know
`include_usage` sends no usage: the counts stay unknown. A chunk with an `error` object is
an error sent mid-stream. Only choice 0 is read (we never ask for more).

Finished: `[DONE]`, or the end of the body after a `finish_reason` (servers that omit
`[DONE]`); the end of the body before either is an interrupted stream.
"""

from __future__ import annotations

from typing import Any

from turn.errors import ModelResponseInvalid
from turn.providers.sse import SseEvent
from turn.providers.streaming import StreamInterrupted, json_object, stream_error

PROVIDER = "openai"
DONE = "[DONE]"


class OpenAIStream:
    def __init__(self) -> None:
        self._done = False
        self._model: str | None = None
        self._text: list[str] = []
        self._calls: list[dict[str, Any]] = []  # {"id", "name", "arguments": [pieces]}
        self._by_index: dict[int, dict[str, Any]] = {}
        self._finish_reason: str | None = None
        self._usage: object = None

    @property
    def done(self) -> bool:
        return self._done

    def add(self, event: SseEvent) -> None:
        data = event.data.strip()
        if data == DONE:
            self._done = True
            return
        chunk = json_object(PROVIDER, data, "streamed an event with")
        if chunk.get("error") is not None:
            raise stream_error(PROVIDER, chunk["error"])
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self._model = model
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise ModelResponseInvalid(f"{PROVIDER} stream chunk choices is not a list")
        for choice in choices:
            if not isinstance(choice, dict):
                raise ModelResponseInvalid(f"{PROVIDER} stream choice is not an object")
            if choice.get("index", 0) == 0:
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise ModelResponseInvalid(f"{PROVIDER} stream delta is not an object")
        content = delta.get("content")
        if content is not None:
            if not isinstance(content, str):
                raise ModelResponseInvalid(f"{PROVIDER} stream delta content is not a string")
            self._text.append(content)
        pieces = delta.get("tool_calls") or []
        if not isinstance(pieces, list):
            raise ModelResponseInvalid(f"{PROVIDER} stream delta tool_calls is not a list")
        for piece in pieces:
            self._tool_piece(piece)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason

    def _tool_piece(self, piece: object) -> None:
        if not isinstance(piece, dict):
            raise ModelResponseInvalid(f"{PROVIDER} stream tool call piece is not an object")
        index = piece.get("index")
        call = self._by_index.get(index) if isinstance(index, int) else None
        if call is None:  # a new call (servers that send whole calls may omit the index)
            call = {"id": None, "name": None, "arguments": []}
            self._calls.append(call)
            if isinstance(index, int):
                self._by_index[index] = call
        function = piece.get("function") or {}
        if not isinstance(function, dict):
            raise ModelResponseInvalid(f"{PROVIDER} stream tool call function is not an object")
        if call["id"] is None and isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        if call["name"] is None and isinstance(function.get("name"), str) and function["name"]:
            call["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # some servers send the object itself
            call["arguments"] = arguments
        elif isinstance(arguments, str) and isinstance(call["arguments"], list):
            call["arguments"].append(arguments)

    def body(self) -> dict[str, Any]:
        if not self._done and self._finish_reason is None:
            raise StreamInterrupted(f"{PROVIDER} stream ended before its finish_reason")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None}
        if self._calls:
            message["tool_calls"] = [
                {
                    # A server that names no id still needs one for the tool result.
                    "id": call["id"] or f"call_{position}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": call["arguments"]
                        if isinstance(call["arguments"], dict)
                        else "".join(call["arguments"]),
                    },
                }
                for position, call in enumerate(self._calls)
            ]
        body: dict[str, Any] = {
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason}],
            "usage": self._usage,
        }
        if self._model is not None:
            body["model"] = self._model
        return body
