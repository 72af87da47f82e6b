"""Bytes -> the media type they are, and a voice note's length from its Ogg container (pure).

The type a provider declares is the sender's word; the first bytes are the file's. Read:
Ogg (Opus or Vorbis), MP4 (M4A/AAC), raw AAC (ADTS), MP3, AMR, JPEG, PNG, WebP, PDF.
Anything else is None (refused with a reply). Only the first and last bytes are looked at.
"""

from __future__ import annotations

from typing import Final

AUDIO_TYPES: Final = frozenset(
    {"audio/ogg", "audio/mp4", "audio/aac", "audio/mpeg", "audio/amr", "audio/amr-wb"}
)
IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/webp"})
EXTENSIONS: Final[dict[str, str]] = {
    "audio/ogg": "ogg",
    "audio/mp4": "m4a",
    "audio/aac": "aac",
    "audio/mpeg": "mp3",
    "audio/amr": "amr",
    "audio/amr-wb": "awb",
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "application/pdf": "pdf",
}
# An Ogg page's last bytes are searched for the final page's granule position.
_OGG_TAIL_BYTES: Final = 65_536
_OPUS_RATE_HZ: Final = 48_000  # Opus granule positions count 48 kHz samples, always


# Fixed signatures: (offset, bytes, type), checked in order.
_SIGNATURES: Final = (
    (0, b"OggS", "audio/ogg"),
    (4, b"ftyp", "audio/mp4"),
    (0, b"#!AMR-WB\n", "audio/amr-wb"),
    (0, b"#!AMR\n", "audio/amr"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"ID3", "audio/mpeg"),
)


def sniff_type(data: bytes) -> str | None:
    head = data[:16]
    for offset, signature, kind in _SIGNATURES:
        if head[offset : offset + len(signature)] == signature:
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if len(head) >= 2 and head[0] == 0xFF:
        if head[1] & 0xF6 == 0xF0:  # ADTS sync, layer 00
            return "audio/aac"
        if head[1] & 0xE0 == 0xE0 and head[1] & 0x06:  # MPEG audio frame sync, a layer
            return "audio/mpeg"
    return None


def main_type(mime: str | None) -> str | None:
    """`audio/ogg; codecs=opus` -> `audio/ogg` (None stays None)."""
    return None if mime is None else mime.split(";", 1)[0].strip().lower() or None


def ogg_duration_s(data: bytes) -> float | None:
    """Seconds of an Ogg Opus or Vorbis stream: the last page's granule position over the
    stream's rate (Opus: minus its pre-skip); None when the container does not say."""
    if not data.startswith(b"OggS"):
        return None
    last = data.rfind(b"OggS", max(0, len(data) - _OGG_TAIL_BYTES))
    if last < 0 or last + 14 > len(data):
        return None
    granule = int.from_bytes(data[last + 6 : last + 14], "little", signed=True)
    if granule < 0:
        return None
    opus = data.find(b"OpusHead", 0, 512)
    if opus >= 0 and opus + 12 <= len(data):
        pre_skip = int.from_bytes(data[opus + 10 : opus + 12], "little")
        return max(0, granule - pre_skip) / _OPUS_RATE_HZ
    vorbis = data.find(b"\x01vorbis", 0, 512)
    if vorbis >= 0 and vorbis + 16 <= len(data):
        rate = int.from_bytes(data[vorbis + 12 : vorbis + 16], "little")
        return granule / rate if rate else None
    return None
