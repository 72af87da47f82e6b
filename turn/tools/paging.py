"""Reading a stored text file page by page: whole UTF-8 characters, and where to go on.

Pure: the bytes read from `offset` (at most one page, possibly one byte more) in, the text
shown and the next offset out. A page never splits a character: a cut one is left for the
next page; a start inside a character (an offset the model made up) skips to the next one.
"""

from __future__ import annotations

from dataclasses import dataclass

_CONTINUATION_MASK = 0xC0
_CONTINUATION = 0x80
_MAX_CHAR_BYTES = 4

CONTINUE_NOTICE = (
    "\n\n[trecho: bytes {start} a {end} de {total}; para ler o restante, chame de novo com "
    "offset={end}]"
)


@dataclass(frozen=True)
class Page:
    text: str
    start: int  # byte offset of the first character shown
    end: int  # byte offset after the last character shown
    total: int  # the file's size in bytes

    @property
    def complete(self) -> bool:
        return self.end >= self.total

    def render(self) -> str:
        if self.complete and self.start == 0:
            return self.text
        if self.complete:
            return (
                self.text + f"\n\n[trecho final: bytes {self.start} a {self.end} de {self.total}]"
            )
        return self.text + CONTINUE_NOTICE.format(start=self.start, end=self.end, total=self.total)


def page_of(data: bytes, *, offset: int, max_bytes: int, total: int) -> Page:
    """`data`: the bytes read from `offset`; at most `max_bytes` of them are shown."""
    skip = 0
    while skip < min(len(data), _MAX_CHAR_BYTES - 1) and _is_continuation(data[skip]):
        skip += 1
    chunk = data[skip:max_bytes]
    if offset + skip + len(chunk) < total:
        chunk = _whole_characters(chunk)
    start = offset + skip
    return Page(chunk.decode("utf-8", errors="replace"), start, start + len(chunk), total)


def _is_continuation(byte: int) -> bool:
    return byte & _CONTINUATION_MASK == _CONTINUATION


def _whole_characters(chunk: bytes) -> bytes:
    """`chunk` without a character cut at its end (at most 3 bytes dropped)."""
    for drop in range(min(_MAX_CHAR_BYTES, len(chunk) + 1)):
        head = chunk[: len(chunk) - drop]
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - _MAX_CHAR_BYTES:
                return chunk  # invalid in the middle, not cut at the end: shown replaced
            continue
        return head
    return chunk
