"""A burst's media messages read inside the turn: fetched, sniffed, stored, transcribed.

Order of checks per message (oldest first), each outcome written on its row before the next:
fetch (bounded; transient failures retried by the job, `max_attempts` in all, then refused)
-> sniff (the bytes' type wins over the declared one; none we read: refused) -> store under
`media/{org}/{conversation}/{message}/{name}` -> a voice note: its length from the Ogg
container (over the cap: refused), then its transcript, capped like any message, becomes the
message's body (empty: refused). A refused message is answered alone, with a fixed pt-BR
reply, in its place in the conversation: the messages before it are answered first.
Nothing holds a pooled connection across a download, an upload or a transcription.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from hashlib import sha256
from typing import Final

import structlog

from conversation.dead_letters import DeadLetters
from conversation.media.errors import (
    MediaError,
    MediaTransient,
    MediaUnsupported,
    TranscriptEmpty,
    VoiceTooLong,
)
from conversation.media.fetch import MediaFetcher, MediaSource
from conversation.media.queries import (
    MediaRow,
    bump_media_attempts,
    list_media_to_read,
    update_media_body,
    update_media_read,
    update_media_refused,
)
from conversation.media.transcribe import Transcriber
from conversation.queries import InboundRow
from core.errors import SkilletError
from core.object_store import ObjectStore
from core.sniff import AUDIO_TYPES, EXTENSIONS, IMAGE_TYPES, main_type, ogg_duration_s, sniff_type
from core.tenancy import org_connection
from inbox.file_names import safe_file_name
from turn.model import ImagePart

log = structlog.get_logger(__name__)

# The descriptions (webhook.non_text) of the kinds the worker fetches: only a burst with a
# body so labelled is looked up, so a text-only turn runs no statement of its own here.
MEDIA_LABELS: Final = ("[áudio]", "[imagem]", "[documento]")

UNREADABLE_REPLY: Final = (
    "Desculpe, não consegui abrir esse arquivo. Pode enviar em outro formato ou escrever "
    "sua mensagem?"
)
NOT_TRANSCRIBED: Final = "voice_not_transcribed"
REPLIES: Final[dict[str, str]] = {
    "media_unsupported": UNREADABLE_REPLY,
    "media_unavailable": UNREADABLE_REPLY,
    "media_too_large": (
        "Desculpe, esse arquivo é grande demais para eu abrir. Pode enviar um arquivo menor "
        "ou escrever sua mensagem?"
    ),
    "voice_too_long": (
        "Desculpe, esse áudio é longo demais para eu ouvir. Pode mandar um áudio mais curto "
        "ou escrever sua mensagem?"
    ),
    NOT_TRANSCRIBED: (
        "Desculpe, ainda não consigo ouvir áudios por aqui. Pode escrever sua mensagem, por favor?"
    ),
    "transcript_empty": (
        "Desculpe, não consegui entender o áudio. Pode escrever sua mensagem, por favor?"
    ),
    "transcription_rejected": (
        "Desculpe, não consegui ouvir seu áudio agora. Pode escrever sua mensagem, por favor?"
    ),
}
# Failures an operator should see (the customer's file was fine): a dead letter each.
_DEAD_LETTERED: Final = frozenset(
    {"transcription_rejected", "transcription_unavailable", "media_transient", "media_unavailable"}
)


def might_hold_media(body: str) -> bool:
    return body.startswith(MEDIA_LABELS)


def refusal_reply(code: str | None) -> str:
    return REPLIES.get(code or "", REPLIES["transcription_rejected"])


@dataclass(frozen=True)
class ReadBurst:
    """The burst with transcripts in place; `refused_at`: index of the first refused
    message (None: none), answered alone with `refusal`."""

    rows: list[InboundRow]
    refused_at: int | None = None
    refusal: str = ""
    # For an agent whose model takes images: each image message's image, by message id.
    images: dict[uuid.UUID, tuple[ImagePart, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReaderConfig:
    max_message_chars: int
    voice_max_seconds: int
    max_attempts: int  # the job's tries: the last one refuses instead of retrying
    image_max_bytes: int = 5 * 1024 * 1024  # a larger image goes to the model as its caption
    # No transcriber: refuse a voice note with a reply asking for text (else describe it).
    ask_to_type: bool = False


@dataclass(frozen=True)
class _Read:
    transcript: str | None = None
    image: ImagePart | None = None  # for a model that takes images
    refused: str | None = None  # the refusal's code
    size_bytes: int | None = None  # of what was stored


class MediaReader:
    def __init__(
        self,
        fetcher: MediaFetcher,
        store: ObjectStore,
        config: ReaderConfig,
        *,
        transcriber: Transcriber | None = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        self._fetcher = fetcher
        self._store = store
        self._config = config
        self._transcriber = transcriber
        self._dead_letters = dead_letters

    async def read(
        self,
        pool: object,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        rows: Sequence[InboundRow],
        *,
        agent_id: uuid.UUID | None = None,
    ) -> ReadBurst:
        candidates = [r.id for r in rows if might_hold_media(r.body)]
        async with org_connection(pool, organization_id) as conn:
            found = await list_media_to_read(conn, candidates, agent_id)
        out = list(rows)
        images: dict[uuid.UUID, tuple[ImagePart, ...]] = {}
        for index, row in enumerate(out):
            media = found.get(row.id)
            if media is None:
                continue
            code = media.refusal if media.state == "refused" else None
            if media.state == "pending":
                if media.kind == "audio" and self._transcriber is None:
                    if not self._config.ask_to_type:
                        continue  # no transcription server: described, as before
                    read = await self._not_transcribed(pool, organization_id, media)
                else:
                    read = await self._read_one(pool, organization_id, conversation_id, media)
                if read.transcript is not None:
                    out[index] = replace(row, body=read.transcript)
                elif read.size_bytes is not None and media.kind == "document":
                    out[index] = await self._sized(pool, organization_id, row, read.size_bytes)
                if read.image is not None:
                    images[row.id] = (read.image,)
                code = read.refused
            if code is not None:
                return ReadBurst(out, index, refusal_reply(code), images)
        return ReadBurst(out, images=images)

    async def read_held(
        self,
        pool: object,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        row: InboundRow,
    ) -> None:
        """A message while a person holds its conversation: its media is stored and a voice
        note transcribed (the person sees them in the console; a spoken PARAR counts), and
        nothing is answered here. A refusal is only written on the row; without a
        transcription server a voice note stays described, never refused."""
        if self._transcriber is None and row.body.startswith(MEDIA_LABELS[0]):
            return
        await self.read(pool, organization_id, conversation_id, [row])

    async def _read_one(
        self,
        pool: object,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        media: MediaRow,
    ) -> _Read:
        """What reading one message's media gave: a transcript, an image for the model, or
        a refusal's code."""
        key: str | None = None
        kind: str | None = None
        try:
            data = await self._fetcher.fetch(_source(media))
            kind = _sniffed(data, media)
            key = _key(organization_id, conversation_id, media, kind)
            await self._store.put(key, data, kind)
            transcript = await self._transcript(data, kind, media)
        except MediaTransient as exc:
            code = await self._transient(pool, organization_id, conversation_id, media, exc, key)
            return _Read(refused=code)
        except MediaError as exc:
            await self._refuse(pool, organization_id, conversation_id, media, exc, key, kind)
            return _Read(refused=exc.code)
        async with org_connection(pool, organization_id) as conn:
            await update_media_read(
                conn,
                media.message_id,
                state="stored" if transcript is None else "transcribed",
                key=key,
                media_type=kind,
                size_bytes=len(data),
                body=transcript,
            )
        log.info("turn.media_read", kind=kind, size_bytes=len(data), transcribed=bool(transcript))
        seen = media.vision and kind in IMAGE_TYPES and len(data) <= self._config.image_max_bytes
        return _Read(transcript, ImagePart(kind, data) if seen else None, size_bytes=len(data))

    async def _sized(
        self, pool: object, organization_id: uuid.UUID, row: InboundRow, size_bytes: int
    ) -> InboundRow:
        """A document is described by its name and size (its text is not read)."""
        body = f"{row.body} ({_shown_size(size_bytes)})"
        async with org_connection(pool, organization_id) as conn:
            await update_media_body(conn, row.id, body)
        return replace(row, body=body)

    async def _not_transcribed(
        self, pool: object, organization_id: uuid.UUID, media: MediaRow
    ) -> _Read:
        """No transcription server: not even downloaded, the customer is asked to type."""
        async with org_connection(pool, organization_id) as conn:
            await update_media_refused(conn, media.message_id, NOT_TRANSCRIBED)
        return _Read(refused=NOT_TRANSCRIBED)

    async def _transcript(self, data: bytes, kind: str, media: MediaRow) -> str | None:
        if media.kind != "audio" or kind not in AUDIO_TYPES or self._transcriber is None:
            return None
        seconds = ogg_duration_s(data) if kind == "audio/ogg" else None
        if seconds is not None and seconds > self._config.voice_max_seconds:
            raise VoiceTooLong(f"{seconds:.0f} s, at most {self._config.voice_max_seconds} s")
        text = await self._transcriber.transcribe(
            data, content_type=kind, file_name=f"audio.{EXTENSIONS[kind]}"
        )
        text = " ".join(text.replace("\x00", "").split())
        if not text:
            raise TranscriptEmpty("the transcript is empty")
        cap = self._config.max_message_chars
        return text if len(text) <= cap else text[: cap - 1] + "…"

    async def _transient(
        self,
        pool: object,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        media: MediaRow,
        exc: MediaTransient,
        key: str | None,
    ) -> str:
        async with org_connection(pool, organization_id) as conn:
            attempts = await bump_media_attempts(conn, media.message_id)
        if attempts < self._config.max_attempts:
            log.warning("turn.media_retry", code=exc.code, attempts=attempts, error=str(exc)[:200])
            raise exc  # the job runs again later (jobs.inbound maps retryable errors)
        await self._refuse(pool, organization_id, conversation_id, media, exc, key, None)
        return "media_unavailable" if exc.code == "media_transient" else "transcription_rejected"

    async def _refuse(
        self,
        pool: object,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        media: MediaRow,
        exc: SkilletError,
        key: str | None,
        kind: str | None,
    ) -> None:
        code = exc.code
        stored_code = code
        if code == "transcription_unavailable":
            stored_code = "transcription_rejected"  # the customer's reply is the same
        elif code == "media_transient":
            stored_code = "media_unavailable"
        log.warning("turn.media_refused", code=code, error=str(exc)[:200])
        async with org_connection(pool, organization_id) as conn:
            await update_media_refused(
                conn, media.message_id, stored_code, key=key, media_type=kind
            )
        if code in _DEAD_LETTERED and self._dead_letters is not None:
            await self._dead_letters.record(
                organization_id=organization_id,
                function="media_refused",
                payload={
                    "organization_id": str(organization_id),
                    "conversation_id": str(conversation_id),
                    "inbound_id": str(media.message_id),
                },
                code=code,
                error=str(exc)[:1000],
            )


def _shown_size(size_bytes: int) -> str:
    """`812 KB`, `3,4 MB`: as a Brazilian reads a file's size."""
    if size_bytes < 1024 * 1024:
        return f"{max(1, round(size_bytes / 1024))} KB"
    return f"{size_bytes / (1024 * 1024):.1f} MB".replace(".", ",")


def _source(media: MediaRow) -> MediaSource:
    info = media.media
    return MediaSource(
        channel_kind=media.route_kind or "",
        media_id=_str(info.get("id")),
        url=_str(info.get("url")),
        waha_base_url=media.waha_base_url,
        waha_server_vouched=media.waha_server_vouched,
        access_token=media.access_token,
        waha_api_key=media.waha_api_key,
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _sniffed(data: bytes, media: MediaRow) -> str:
    kind = sniff_type(data)
    declared = main_type(_str(media.media.get("type")))
    if kind is None:
        raise MediaUnsupported(f"{len(data)} bytes of no supported type (declared {declared})")
    if declared is not None and declared != kind:
        log.warning("turn.media_type_mismatch", declared=declared[:100], sniffed=kind)
    stated = _str(media.media.get("sha256"))
    if stated is not None and len(stated) == 64 and stated.lower() != sha256(data).hexdigest():
        log.warning("turn.media_sha256_mismatch")  # kept: the bytes are what we read
    return kind


def _key(organization_id: uuid.UUID, conversation_id: uuid.UUID, media: MediaRow, kind: str) -> str:
    """Under a prefix of its own, never inside a skill's `{org}/{skill}/...` keys."""
    name = safe_file_name(media.media.get("file_name")) or f"{media.kind}.{EXTENSIONS[kind]}"
    return f"media/{organization_id}/{conversation_id}/{media.message_id}/{name}"
