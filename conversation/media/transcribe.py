"""A voice note's bytes -> its transcript, from an OpenAI-compatible server.

`POST {base}/audio/transcriptions`, multipart: `file`, `model`, `language` = pt,
`response_format` = json; the answer `{"text": ...}`. OpenAI, Groq, whisper.cpp's server,
faster-whisper-server and vLLM speak it. 429/5xx, unreachable and timeouts are
TranscriptionUnavailable (retried by the turn); other refusals TranscriptionRejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from conversation.media.errors import TranscriptionRejected, TranscriptionUnavailable

LANGUAGE = "pt"  # the agents' customers speak Brazilian Portuguese
_ANSWER_MAX_BYTES = 1_048_576  # a transcript of minutes is kilobytes


@dataclass(frozen=True)
class TranscribeConfig:
    base_url: str
    model: str
    timeout_s: float
    api_key: str | None = field(default=None, repr=False)


class Transcriber:
    def __init__(self, http: aiohttp.ClientSession, config: TranscribeConfig) -> None:
        self._http = http
        self._config = config

    async def transcribe(self, data: bytes, *, content_type: str, file_name: str) -> str:
        form = aiohttp.FormData()
        form.add_field("file", data, filename=file_name, content_type=content_type)
        form.add_field("model", self._config.model)
        form.add_field("language", LANGUAGE)
        form.add_field("response_format", "json")
        headers = {}
        if self._config.api_key:
            headers["Authorization"] = f"Bearer {self._config.api_key}"
        url = f"{self._config.base_url.rstrip('/')}/audio/transcriptions"
        timeout = aiohttp.ClientTimeout(total=self._config.timeout_s)
        try:
            async with self._http.post(url, data=form, headers=headers, timeout=timeout) as answer:
                body = await answer.content.read(_ANSWER_MAX_BYTES)
                status = answer.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TranscriptionUnavailable(f"transcription server: {exc!r}"[:300]) from exc
        if status == 429 or status >= 500 or status == 408:
            raise TranscriptionUnavailable(f"transcription server: HTTP {status}")
        if status != 200:
            raise TranscriptionRejected(
                f"transcription server: HTTP {status}: {body[:200].decode('utf-8', 'replace')}"
            )
        return _text(body)


def _text(body: bytes) -> str:
    try:
        document: Any = json.loads(body)
    except ValueError as exc:
        raise TranscriptionRejected("transcription server: the answer is not JSON") from exc
    text = document.get("text") if isinstance(document, dict) else None
    if not isinstance(text, str):
        raise TranscriptionRejected("transcription server: the answer has no text")
    return text
