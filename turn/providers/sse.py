"""Server-sent events: bytes chunks in, events out (pure; no I/O, no clock).

Follows the WHATWG event-stream rules the model providers rely on:
- lines end in CRLF, LF or CR; a CR at the end of one chunk followed by an LF at the start
  of the next is one line ending, not two;
- a line starting with ":" is a comment (keep-alives), ignored;
- `field: value` drops one space after the colon; a line without a colon is a field with an
  empty value; unknown fields (`id`, `retry`, ...) are ignored;
- `data` lines of one event join with "\\n"; a blank line dispatches the event; an event
  with no `data` line is not dispatched; `event` names it ("message" when unnamed);
- a leading UTF-8 BOM is skipped; lines are split as bytes and decoded whole, so a character
  split across chunks decodes right (an invalid byte becomes U+FFFD);
- an event not ended by a blank line when the stream closes is dropped (`close()` returns
  nothing): it may be cut.

Limits are the caller's (turn.providers.streaming counts bytes and events).
"""

from __future__ import annotations

from dataclasses import dataclass

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


class SseParser:
    """Feed it chunks as they arrive; each `feed` returns the events those bytes completed."""

    def __init__(self) -> None:
        self._pending = b""  # bytes of an unfinished line
        self._started = False  # the BOM check is done
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF ends nothing
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        buffer = self._without_bom(self._pending + chunk)
        if buffer is None:
            return []
        events: list[SseEvent] = []
        start = 0
        while True:
            end = _line_end(buffer, start)
            if end is None:
                break
            line = buffer[start:end]
            if buffer[end] == 13:  # CR: maybe CRLF
                if end + 1 == len(buffer):
                    self._skip_lf = True
                    start = end + 1
                elif buffer[end + 1] == 10:
                    start = end + 2
                else:
                    start = end + 1
            else:
                start = end + 1
            event = self._line(line.decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        self._pending = buffer[start:]
        return events

    def _without_bom(self, buffer: bytes) -> bytes | None:
        """`buffer` past a leading BOM; None while too few bytes came to tell."""
        if self._started:
            return buffer
        if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
            self._pending = buffer
            return None
        self._started = True
        return buffer.removeprefix(_BOM)

    def close(self) -> list[SseEvent]:
        """The stream ended: an unfinished event is dropped (it may be cut)."""
        self._pending = b""
        self._event, self._data = "", []
        return []

    @property
    def pending_bytes(self) -> int:
        """Bytes held for a line not yet ended (bounded by the caller's byte cap)."""
        return len(self._pending)

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent | None:
        event, data = self._event, self._data
        self._event, self._data = "", []
        if not data:
            return None
        return SseEvent(event or "message", "\n".join(data))


def _line_end(buffer: bytes, start: int) -> int | None:
    """Index of the first CR or LF at or after `start`, or None."""
    lf = buffer.find(b"\n", start)
    cr = buffer.find(b"\r", start)
    if lf < 0:
        return cr if cr >= 0 else None
    return lf if cr < 0 else min(lf, cr)
