"""A skill file the agent sends (send_skill_file): what WhatsApp message it goes out as, the
size Meta takes for that kind, and the file name the customer sees (pure).

The kind follows the sniffed bytes, never the file's name: JPEG and PNG go as images (the only
image types Meta's `image` message takes), Ogg/Opus, MP3, MP4/AAC and AMR as audio, PDF,
Office files and text as documents; anything else (WebP, a sticker there; a zip; unknown
bytes) is refused, as is an Ogg of another codec than Opus (Vorbis, FLAC): Meta takes neither.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from core.sniff import EXTENSIONS
from inbox.file_names import safe_file_name


class FileMessage(StrEnum):
    """The WhatsApp message type a file leaves as (Cloud API `type`)."""

    DOCUMENT = "document"
    IMAGE = "image"
    AUDIO = "audio"


_IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png"})
_AUDIO_TYPES: Final = frozenset({"audio/ogg", "audio/mpeg", "audio/mp4", "audio/aac", "audio/amr"})
# The only documents Meta's Cloud API takes (any other text is uploaded as text/plain).
DOCUMENT_TYPES: Final = frozenset(
    {
        "application/pdf",
        "text/plain",
        "application/msword",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.ms-excel",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    }
)
# Meta's Cloud API media limits per message type (bytes).
MAX_BYTES: Final[dict[FileMessage, int]] = {
    FileMessage.IMAGE: 5 * 1024 * 1024,
    FileMessage.AUDIO: 16 * 1024 * 1024,
    FileMessage.DOCUMENT: 100 * 1024 * 1024,
}
MAX_CAPTION_CHARS: Final = 1024  # Meta's caption limit (document and image)
MAX_FILES_PER_TURN: Final = 3
# An Ogg stream's first page names its codec: "OpusHead" at byte 28 (27-byte page header and
# a one-byte segment table), well inside the first 64 bytes.
CODEC_HEAD_BYTES: Final = 64


def unsendable_audio(mime: str, head: bytes) -> bool:
    """An Ogg whose first page is not Opus: WhatsApp refuses it (audio/ogg is Opus only)."""
    return mime == "audio/ogg" and b"OpusHead" not in head[:CODEC_HEAD_BYTES]


def upload_type(kind: FileMessage, mime: str) -> str:
    """The type a file is uploaded as: any text document (CSV, Markdown) as the plain text it
    is, since Meta's documents are a fixed list."""
    if kind is FileMessage.DOCUMENT and mime.startswith("text/"):
        return "text/plain"
    return mime


def unsendable_document(kind: FileMessage, mime: str) -> bool:
    """A document of a type Meta refuses at upload (a zip, a WebP, unknown bytes): refused
    before the model tells the customer it is coming, the same on every channel."""
    return kind is FileMessage.DOCUMENT and upload_type(kind, mime) not in DOCUMENT_TYPES


def message_kind(mime: str) -> FileMessage:
    if mime in _IMAGE_TYPES:
        return FileMessage.IMAGE
    if mime in _AUDIO_TYPES:
        return FileMessage.AUDIO
    return FileMessage.DOCUMENT


def declared_type(sniffed: str | None, path: str) -> str:
    """The sniffed type; for bytes of no type we read, the name's (a .txt, a .docx), else
    application/octet-stream."""
    if sniffed is not None:
        return sniffed
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed or "application/octet-stream"


def safe_filename(path: str, mime: str) -> str:
    """The manifest path's last segment made safe as a customer's file name is
    (inbox.file_names: accents folded, so "preços.pdf" reads "precos.pdf"), never empty; a
    sniffed type we know gives its own extension when it has none."""
    name = safe_file_name(path) or "arquivo"
    extension = EXTENSIONS.get(mime)
    if extension is not None and "." not in name:
        name = safe_file_name(f"{name}.{extension}") or name
    return name


@dataclass(frozen=True)
class OutboundFile:
    """One file part of a reply (outbox.file): where its bytes are and how it leaves."""

    skill: str
    path: str
    key: str  # its object key ({org}/{skill}/{version}/{path}), from the trusted manifest
    mime: str
    kind: FileMessage
    size: int  # bytes, from the manifest: the send reads no more
    filename: str
    caption: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "path": self.path,
            "key": self.key,
            "mime": self.mime,
            "kind": self.kind.value,
            "bytes": self.size,
            "filename": self.filename,
            "caption": self.caption,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutboundFile:
        caption = data.get("caption")
        return cls(
            str(data["skill"]),
            str(data["path"]),
            str(data["key"]),
            str(data["mime"]),
            FileMessage(data["kind"]),
            int(data["bytes"]),
            str(data["filename"]),
            None if caption is None else str(caption),
        )
