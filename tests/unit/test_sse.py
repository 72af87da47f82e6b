"""The SSE parser on a table of streams, each also fed one byte at a time (pure)."""

from __future__ import annotations

import pytest

from turn.providers.sse import SseEvent, SseParser


def parse(chunks: list[bytes]) -> list[SseEvent]:
    parser = SseParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def byte_by_byte(stream: bytes) -> list[SseEvent]:
    return parse([stream[i : i + 1] for i in range(len(stream))])


CASES: list[tuple[str, bytes, list[SseEvent]]] = [
    ("one data line", b"data: oi\n\n", [SseEvent("message", "oi")]),
    ("named event", b"event: ping\ndata: {}\n\n", [SseEvent("ping", "{}")]),
    ("CRLF line ends", b"event: a\r\ndata: 1\r\n\r\n", [SseEvent("a", "1")]),
    (
        "CR line ends",
        b"data: 1\r\rdata: 2\r\r",
        [SseEvent("message", "1"), SseEvent("message", "2")],
    ),
    ("multi-line data", b"data: um\ndata: dois\n\n", [SseEvent("message", "um\ndois")]),
    ("comments ignored", b": keep-alive\n\n:\ndata: x\n\n", [SseEvent("message", "x")]),
    ("no space after colon", b"data:x\n\n", [SseEvent("message", "x")]),
    ("only one space dropped", b"data:  x\n\n", [SseEvent("message", " x")]),
    ("field without colon", b"data\n\n", [SseEvent("message", "")]),
    (
        "unknown fields ignored",
        b"id: 7\nretry: 10\nfoo: bar\ndata: x\n\n",
        [SseEvent("message", "x")],
    ),
    ("no data, no event", b"event: nada\n\n", []),
    ("blank lines alone", b"\n\n\r\n", []),
    ("leading BOM", b"\xef\xbb\xbfdata: x\n\n", [SseEvent("message", "x")]),
    ("unfinished event dropped", b"data: 1\n\ndata: cortado", [SseEvent("message", "1")]),
    ("utf-8 text", "data: ação ✓ 😊\n\n".encode(), [SseEvent("message", "ação ✓ 😊")]),
    ("invalid utf-8 replaced", b"data: \xff\n\n", [SseEvent("message", "\ufffd")]),
    (
        "event name resets per event",
        b"event: a\ndata: 1\n\ndata: 2\n\n",
        [SseEvent("a", "1"), SseEvent("message", "2")],
    ),
    ("[DONE] is data", b"data: [DONE]\n\n", [SseEvent("message", "[DONE]")]),
]


@pytest.mark.parametrize(("name", "stream", "expected"), CASES, ids=[c[0] for c in CASES])
def test_events_whole_and_byte_by_byte(name: str, stream: bytes, expected: list[SseEvent]) -> None:
    assert parse([stream]) == expected
    assert byte_by_byte(stream) == expected


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse([b"data: 1\r", b"\n\r", b"\ndata: 2\r\n\r\n"]) == [
        SseEvent("message", "1"),
        SseEvent("message", "2"),
    ]


def test_a_character_split_across_chunks_decodes_whole() -> None:
    encoded = "data: ç\n\n".encode()
    cut = encoded.index(b"\xa7")  # the second byte of "ç"
    assert parse([encoded[:cut], encoded[cut:]]) == [SseEvent("message", "ç")]


def test_events_come_out_as_soon_as_their_blank_line_arrives() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\n") == []
    assert parser.feed(b"\ndata: 2") == [SseEvent("message", "1")]
    assert parser.pending_bytes == len(b"data: 2")
    assert parser.feed(b"\n\n") == [SseEvent("message", "2")]
