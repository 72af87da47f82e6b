"""Building the turn's media reader from Settings (part of the composition root)."""

from __future__ import annotations

import aiohttp

from conversation.dead_letters import DeadLetters
from conversation.media.fetch import FetchConfig, MediaFetcher
from conversation.media.reader import MediaReader, ReaderConfig
from conversation.media.transcribe import TranscribeConfig, Transcriber
from core.object_store import ObjectStore
from worker.channel_senders import _secret
from worker.settings import Settings


def build_media_reader(
    settings: Settings, http: aiohttp.ClientSession, store: ObjectStore, dead_letters: DeadLetters
) -> MediaReader:
    fetcher = MediaFetcher(
        http,
        FetchConfig(
            graph_api_base_url=settings.graph_api_base_url,
            media_hosts=frozenset(h.lower() for h in settings.media_hosts),
            waha_base_url=settings.waha_base_url,
            max_bytes=settings.media_max_bytes,
            timeout_s=settings.media_fetch_timeout_s,
            access_token=_secret(settings.whatsapp_access_token),
            waha_api_key=_secret(settings.waha_api_key),
            allow_private=settings.events_allow_private_urls,
        ),
    )
    transcriber = None
    if settings.transcribe_base_url is not None:
        transcriber = Transcriber(
            http,
            TranscribeConfig(
                base_url=settings.transcribe_base_url,
                model=settings.transcribe_model,
                timeout_s=settings.transcribe_timeout_s,
                api_key=_secret(settings.transcribe_api_key),
            ),
        )
    return MediaReader(
        fetcher,
        store,
        ReaderConfig(
            max_message_chars=settings.max_message_chars,
            voice_max_seconds=settings.voice_max_seconds,
            max_attempts=settings.max_tries,
            image_max_bytes=settings.image_max_bytes,
            ask_to_type=settings.voice_ask_to_type,
        ),
        transcriber=transcriber,
        dead_letters=dead_letters,
    )
